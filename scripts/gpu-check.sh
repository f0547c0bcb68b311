#!/usr/bin/env bash
# scripts/gpu-check.sh: builds and checks ember with CUDA on a lent GPU machine (an H100 or
# H200 box with 16 cores and no network), in one device call of 8 minutes; a second, optional
# call compares it with PyTorch. It prints its plan (step, planned s, cap s) first and one
# table (step | result | time s | plan | cap) last; docs/gpu.md has the steps and measured times.
#
#   scripts/gpu-check.sh --prepare   HERE: copies the third-party headers and libraries the
#                                    build needs, and Fashion-MNIST, into .device-carry/
#                                    (git-ignored, ~40 MiB)
#   scripts/gpu-check.sh --dry-run   HERE, as root: both checks below without a GPU, in a fresh
#                                    build folder, with the system's copies of the carried
#                                    packages hidden: proves the carry is complete, times each step
#   scripts/gpu-check.sh             THERE, the main check: build ember_tests and ember, every
#                                    [cuda] test case, the cuBLAS/cuDNN op contract,
#                                    compute-sanitizer on a few cases, one epoch of LeNet-5 and
#                                    ConvNet, bench-train per model
#       run(command="scripts/gpu-check.sh", carry=[".device-carry"], timeout_s=480)
#   scripts/gpu-check.sh --peers     THERE, optional: ember against PyTorch per model, the GEMM
#                                    benchmark against cuBLAS, the CPU test suite
#       run(command="scripts/gpu-check.sh --peers", carry=[".device-carry"], timeout_s=480)
#
# Environment:
#   GPU_CHECK_BUDGET_S      seconds for all steps (default 440: a 480 s call with 40 s to spare;
#                           lower it when less device time is left)
#   GPU_CHECK_ALLOW_NO_GPU  1: run without a GPU (a dry run): GPU steps list what they would run
#                           or run on the CPU, caps are scaled by 16 / cores
#   GPU_CHECK_BUILD_DIR     build folder (default build-gpu-check)
#   GPU_CHECK_JOBS          parallel build jobs and tests (default: every core)
#   GPU_CHECK_PYTHON        the Python that finds cuDNN and runs the PyTorch peer (default python3)
#   CUDNN_ROOT              cuDNN prefix (include/, lib/); found when unset
#   OUT                     where logs go (default <build>/logs-main or logs-peers); at most 8
#                           files, as the device tool brings them back
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
repo=$(pwd)
carry="$repo/.device-carry"
parts=scripts/gpu-check

mode=main
case "${1:-}" in
  --prepare) source "$parts/prepare.sh"; prepare; exit ;;
  --dry-run) exec "$parts/dry-run.sh" ;;
  --peers) mode=peers ;;
  "") ;;
  *) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
esac

budget=${GPU_CHECK_BUDGET_S:-440}
allow_no_gpu=${GPU_CHECK_ALLOW_NO_GPU:-0}
build="$repo/${GPU_CHECK_BUILD_DIR:-build-gpu-check}"
jobs=${GPU_CHECK_JOBS:-$(nproc)}
python=${GPU_CHECK_PYTHON:-python3}
logs=${OUT:-$build/logs-$mode}
dry_run=0 cap_scale=1
if [ "$allow_no_gpu" = 1 ] && ! nvidia-smi -L >/dev/null 2>&1; then
  dry_run=1 cap_scale=$(((16 + jobs - 1) / jobs))
fi
mkdir -p "$logs"
[ -n "${OUT:-}" ] || rm -f "$logs"/*.log "$logs"/*.json "$logs"/summary.txt

source "$parts/steps.sh"
source "$parts/environment.sh"
source "$parts/build.sh"

# Planned seconds on a 16-core H100/H200. The main check's are its first runs on an H200
# (2026-11-27, docs/gpu.md), rounded up; caps are about 1.5-2 times them. --peers' are still
# projected from the dry run on the 2-core development machine (the build's CPU-seconds / 16 x
# 1.5, the CPU suite's longest test or its sum / 16, x 1.5) and estimates for its GPU steps.
# The caps add up to less than the 440 s budget.
if [ "$mode" = main ]; then
  source "$parts/main-steps.sh"
  build_targets=(ember_tests ember_cli ember_data_parallel_tests)
  plan_step env               5  15 step_env
  plan_step configure        10  30 step_configure
  plan_step build            80 100 step_build
  plan_step cuda-tests       35  70 step_cuda_tests
  plan_step vendor-contract  35  50 step_vendor_contract
  plan_step sanitizer        45  70 step_sanitizer
  plan_step train            15  40 step_train
  plan_step bench-train      35  60 step_bench_train
  run_plan "gpu-check (main)"
else
  source "$parts/peer-steps.sh"
  build_targets=(all)  # what CTest runs needs the examples too; mostly built if the machine is still warm
  plan_step env               10  20 step_peers_env
  plan_step configure          5  30 step_configure
  plan_step build             50 100 step_build
  plan_step train-vs-pytorch 100 130 step_train_vs_pytorch
  plan_step bench-matmul      35  60 step_bench_matmul
  plan_step cpu-tests         70  95 step_cpu_tests
  run_plan "gpu-check --peers"
fi
