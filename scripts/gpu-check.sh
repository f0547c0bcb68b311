#!/usr/bin/env bash
# scripts/gpu-check.sh: the one command for a GPU machine that reaches no package
# registry. It builds ember with CUDA, runs the whole test suite on the GPU, the
# CUDA tests again with the vendor providers (cuBLAS, cuDNN) and under
# compute-sanitizer, the GPU benchmarks and any PyTorch peer script, and prints a
# table: step | result | time. Every step is time-bounded; the whole run fits in
# GPU_CHECK_BUDGET_S (default 570 s, one 600 s device call).
#
# Two halves:
#   scripts/gpu-check.sh --prepare   HERE (where scripts/setup.sh installed the Debian
#                                    packages): copies the third-party headers, CMake
#                                    helpers and libraries the build needs into
#                                    .device-carry/ (git-ignored, a few MiB).
#   scripts/gpu-check.sh             THERE: through the device tool, e.g.
#       run(command="scripts/gpu-check.sh", carry=[".device-carry"], timeout_s=600)
#
# What the carry holds and why: Eigen, Catch2 (catch.hpp + Catch.cmake +
# CatchAddTests.cmake), CLI11, nlohmann-json and google-benchmark's headers, CMake
# package and shared library (Debian ships no static one), zlib's headers and
# libz.a. OpenBLAS is not carried: Debian's libopenblas.a needs libgfortran, so
# the GPU build uses Eigen's own GEMM (EMBER_USE_BLAS=OFF; CPU speed does not
# matter there). cuDNN is found on the GPU machine: CUDNN_ROOT if set, else the
# CUDA toolkit's folders, else PyTorch's nvidia/cudnn package (python3 finds it).
#
# Environment:
#   GPU_CHECK_BUDGET_S     total seconds for all steps (default 570)
#   GPU_CHECK_STEPS        steps to run, of: env configure build ctest vendor sanitizer
#                          bench peer (default: all)
#   GPU_CHECK_ALLOW_NO_GPU 1: run without a GPU (a dry run: GPU steps are skipped)
#   GPU_CHECK_BUILD_DIR    build folder (default build-gpu-check)
#   GPU_CHECK_BUILD_CAP_S  seconds the build may take (default 360)
#   GPU_CHECK_BENCHES      benchmark programs under <build>/bench (default bench_matmul)
#   GPU_CHECK_BENCH_FILTER --benchmark_filter for them (default cuda)
#   GPU_CHECK_PYTHON       the Python with PyTorch (default python3)
#   CUDNN_ROOT             cuDNN prefix (include/, lib/), found when unset
#   OUT                    where logs go (default <build>/gpu-check-logs); at most
#                          8 files, as the device tool returns them
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
repo=$(pwd)
carry="$repo/.device-carry"
multiarch=lib/x86_64-linux-gnu

# ----------------------------------------------------------------------------
# --prepare: runs here
# ----------------------------------------------------------------------------
prepare() {
  set -e
  scripts/setup.sh
  rm -rf "$carry"
  mkdir -p "$carry/include/eigen3" "$carry/cmake" "$carry/$multiarch/cmake"
  cp -r /usr/include/eigen3/Eigen "$carry/include/eigen3/"  # unsupported/ is not used
  cp -r /usr/include/catch2 /usr/include/CLI /usr/include/nlohmann /usr/include/benchmark "$carry/include/"
  cp /usr/include/zlib.h /usr/include/zconf.h "$carry/include/"
  cp /usr/lib/cmake/Catch2/Catch.cmake /usr/lib/cmake/Catch2/CatchAddTests.cmake "$carry/cmake/"
  # benchmark's CMake package finds its files relative to itself: mirror /usr's layout.
  cp -r /usr/$multiarch/cmake/benchmark "$carry/$multiarch/cmake/"
  local so
  so=$(readlink -f /usr/$multiarch/libbenchmark.so)
  # Real copies under every name (links may not survive the trip).
  cp "$so" "$carry/$multiarch/$(basename "$so")"
  cp "$so" "$carry/$multiarch/$(objdump -p "$so" | awk '/SONAME/ {print $2}')"
  cp "$so" "$carry/$multiarch/libbenchmark.so"
  cp /usr/$multiarch/libbenchmark_main.a /usr/$multiarch/libz.a "$carry/$multiarch/"
  {
    echo "prepared $(date -u +%FT%TZ) on $(hostname) by scripts/gpu-check.sh --prepare"
    dpkg-query -W libeigen3-dev catch2 libcli11-dev nlohmann-json3-dev libbenchmark-dev zlib1g-dev
  } >"$carry/MANIFEST"
  set +e

  echo "gpu-check: carry ready: $(du -sh "$carry" | cut -f1) in $carry"
  # What the device tool sends: tracked + untracked-not-ignored files, plus the carry.
  local tree_kb carry_kb
  tree_kb=$(git ls-files -co --exclude-standard -z | du -c -k --files0-from=- 2>/dev/null | tail -1 | cut -f1)
  carry_kb=$(du -s -k "$carry" | cut -f1)
  echo "gpu-check: working tree ${tree_kb} KiB + carry ${carry_kb} KiB = $(((tree_kb + carry_kb) / 1024)) MiB (limit 64 MiB)"
  if [ $((tree_kb + carry_kb)) -gt $((48 * 1024)) ]; then
    echo "gpu-check: WARNING: over 48 MiB; the device tool refuses more than 64 MiB" >&2
  fi
  echo "gpu-check: now run scripts/gpu-check.sh on the GPU machine with carry [\".device-carry\"]"
}

if [ "${1:-}" = "--prepare" ]; then
  prepare
  exit $?
fi
if [ $# -gt 0 ]; then
  sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 2
fi

# ----------------------------------------------------------------------------
# The check: runs on the GPU machine
# ----------------------------------------------------------------------------
start=$SECONDS
budget=${GPU_CHECK_BUDGET_S:-570}
steps=${GPU_CHECK_STEPS:-env configure build ctest vendor sanitizer bench peer}
build="$repo/${GPU_CHECK_BUILD_DIR:-build-gpu-check}"
logs=${OUT:-$build/gpu-check-logs}
python=${GPU_CHECK_PYTHON:-python3}
mkdir -p "$logs"
# Logs are appended to by the steps: start each run with empty ones.
for f in env build ctest vendor sanitizer bench peer; do : >"$logs/$f.log"; done
[ -d /usr/local/cuda/bin ] && PATH="$PATH:/usr/local/cuda/bin"

rows=()     # "step|result|seconds"
failed=0
have_gpu=0
build_ok=0

wants() { [[ " $steps " == *" $1 "* ]]; }
row() { rows+=("$1|$2|$3"); }
# Seconds a step may take: its own cap, but never past the budget (15 s kept for the summary).
limit() {
  local left=$((budget - (SECONDS - start) - 15))
  [ "$left" -lt "$1" ] && echo "$left" || echo "$1"
}
# run_step NAME CAP LOG CMD...: runs CMD bounded in time, output appended to LOG.
# Sets step_rc and step_s; a time-out reads as rc 124.
run_step() {
  local name=$1 cap=$2 log=$3 t0=$SECONDS lim
  shift 3
  lim=$(limit "$cap")
  if [ "$lim" -le 5 ]; then
    step_rc=124 step_s=0
    echo "== $name: no time left in the budget" | tee -a "$log"
    return
  fi
  echo "== $name (at most ${lim} s): $*" >>"$log"
  timeout --kill-after=10 "$lim" "$@" >>"$log" 2>&1
  step_rc=$?
  step_s=$((SECONDS - t0))
  [ "$step_rc" -eq 137 ] && step_rc=124
}
# record NAME RC DETAIL SECONDS: one summary row; a non-zero RC counts as a failure.
record() {
  local result=${3:-ok}
  if [ "$2" -eq 124 ]; then
    result="TIMEOUT${3:+: $3}"
  elif [ "$2" -ne 0 ]; then
    result="FAIL (rc $2)${3:+: $3}"
  fi
  [ "$2" -eq 0 ] || failed=$((failed + 1))
  row "$1" "$result" "$4"
}

find_cudnn() {
  if [ -n "${CUDNN_ROOT:-}" ]; then echo "$CUDNN_ROOT"; return; fi
  local d
  for d in /usr/local/cuda /usr/local/cuda/targets/x86_64-linux /usr; do
    if [ -f "$d/include/cudnn.h" ]; then echo "$d"; return; fi
  done
  # PyTorch's wheel: site-packages/nvidia/cudnn/{include,lib}
  "$python" -c 'import nvidia.cudnn as c; print(list(c.__path__)[0])' 2>/dev/null
}

# ---- env ----
cudnn_root=$(find_cudnn)
cuda_arch=90
if wants env; then
  t0=$SECONDS
  {
    echo "== nvidia-smi"; nvidia-smi 2>&1 | head -20
    echo "== nvcc"; nvcc --version 2>&1 | tail -2
    echo "== cmake"; cmake --version 2>&1 | head -1
    echo "== ninja"; ninja --version 2>&1
    echo "== c++"; c++ --version 2>&1 | head -1
    echo "== cuBLAS"; printf '%s\n' /usr/local/cuda/lib64/libcublas.so*
    echo "== cuDNN root: ${cudnn_root:-not found}"; printf '%s\n' "${cudnn_root:-/nonexistent}"/lib*/libcudnn.so*
    echo "== compute-sanitizer"; command -v compute-sanitizer 2>&1
    echo "== python: $python"
    timeout 60 "$python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda,
      "cudnn", torch.backends.cudnn.version(), "gpu", torch.cuda.is_available())' 2>&1 | tail -1
  } >"$logs/env.log" 2>&1
  cat "$logs/env.log"
fi
gpu_name=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1)
if [ -n "$gpu_name" ]; then
  have_gpu=1
  [ -n "$cap" ] && cuda_arch=${cap/./}
fi
if wants env; then
  if [ "$have_gpu" -eq 1 ]; then
    row env "$gpu_name, sm_$cuda_arch" $((SECONDS - t0))
  elif [ "${GPU_CHECK_ALLOW_NO_GPU:-0}" = 1 ]; then
    row env "no GPU (dry run)" $((SECONDS - t0))
  else
    row env "FAIL: no GPU (GPU_CHECK_ALLOW_NO_GPU=1 for a dry run)" $((SECONDS - t0))
    failed=1
    steps=""
  fi
fi
if [ -n "$cudnn_root" ]; then
  export CUDNN_ROOT="$cudnn_root"
  export LD_LIBRARY_PATH="$cudnn_root/lib:$cudnn_root/lib64:${LD_LIBRARY_PATH:-}"
fi
export LD_LIBRARY_PATH="$carry/$multiarch:${LD_LIBRARY_PATH:-}"

# ---- configure + build ----
if wants configure; then
  [ -d "$carry" ] || echo "gpu-check: no $carry: run scripts/gpu-check.sh --prepare first (and carry it)" >&2
  run_step configure 120 "$logs/build.log" \
    cmake --preset gpu -B "$build" \
      -DCMAKE_PREFIX_PATH="$carry" \
      -DEMBER_CATCH_CMAKE="$carry/cmake/Catch.cmake" \
      -DEMBER_USE_BLAS=OFF \
      -DCMAKE_CUDA_ARCHITECTURES="$cuda_arch" \
      ${cudnn_root:+-DCUDNN_ROOT="$cudnn_root"}
  record configure "$step_rc" ok "$step_s"
  [ "$step_rc" -eq 0 ] || steps=""
  grep -E "ember:|CuDNN|CUDA" "$logs/build.log" | grep -v "^==" | tail -8
fi
if wants build; then
  run_step build "${GPU_CHECK_BUILD_CAP_S:-360}" "$logs/build.log" cmake --build "$build" -j "$(nproc)"
  record build "$step_rc" "$(grep -c '\.cu\.o' "$build/.ninja_log" 2>/dev/null) .cu files compiled" "$step_s"
  if [ "$step_rc" -eq 0 ]; then build_ok=1; else tail -40 "$logs/build.log"; fi
elif [ -x "$build/tests/ember_tests" ]; then
  build_ok=1
fi
tests_bin="$build/tests/ember_tests"
gpu_ready=$((build_ok * have_gpu))

# ---- tests ----
if wants ctest; then
  if [ "$build_ok" -eq 1 ]; then
    run_step ctest 150 "$logs/ctest.log" \
      ctest --test-dir "$build" -j 8 --output-on-failure --no-tests=error --timeout 120
    skipped=$(grep -c '(Skipped)' "$logs/ctest.log")
    passline=$(grep -m1 'tests passed' "$logs/ctest.log")
    # On a GPU machine nothing may skip: a skipped [cuda] case means no device was seen.
    if [ "$have_gpu" -eq 1 ] && [ "$skipped" -gt 0 ] && [ "$step_rc" -eq 0 ]; then step_rc=1; fi
    record ctest "$step_rc" "${passline:-no summary}, $skipped skipped" "$step_s"
    sed -n '/tests passed/,$p' "$logs/ctest.log" | grep -v '(Skipped)$'
    [ "$skipped" -eq 0 ] || echo "($skipped skipped: see ctest.log)"
  else
    row ctest "skipped (no build)" 0
  fi
fi
if wants vendor; then
  if [ "$gpu_ready" -eq 1 ]; then
    EMBER_GEMM=cublas EMBER_CONV=cudnn run_step "vendor providers" 90 "$logs/vendor.log" "$tests_bin" "[cuda]" -w NoTests
    record "[cuda] on cuBLAS/cuDNN" "$step_rc" "$(grep -o 'All tests passed.*\|^test cases:.*' "$logs/vendor.log" | tail -1)" "$step_s"
  else
    row "[cuda] on cuBLAS/cuDNN" "skipped (no GPU or build)" 0
  fi
fi
if wants sanitizer; then
  sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/compute-sanitizer/compute-sanitizer 2>/dev/null)
  if [ "$gpu_ready" -eq 1 ] && [ -n "$sanitizer" ]; then
    # The direct allocator gives every tensor its own cudaMalloc, so memcheck sees
    # an overrun past a tensor's end (inside a cached segment it would not).
    # The op contract's million-element cases are left out there (memcheck is ~100x slower);
    # the ctest step ran them, and the contract's guard bytes check every output for overruns.
    EMBER_OP_CONTRACT_MAX_ELEMENTS=100000 EMBER_ALLOCATOR=direct run_step compute-sanitizer 150 "$logs/sanitizer.log" \
      "$sanitizer" --tool memcheck --error-exitcode 99 --print-limit 20 "$tests_bin" "[cuda]" -w NoTests
    record "compute-sanitizer memcheck" "$step_rc" "$(grep -o 'ERROR SUMMARY:.*' "$logs/sanitizer.log" | tail -1)" "$step_s"
    grep -m1 -B2 -A12 '========= Invalid\|========= Program hit' "$logs/sanitizer.log"
  else
    row "compute-sanitizer memcheck" "skipped (no GPU, build or sanitizer)" 0
  fi
fi

# ---- benchmarks and peers ----
if wants bench; then
  for b in ${GPU_CHECK_BENCHES:-bench_matmul}; do
    if [ "$gpu_ready" -eq 1 ] && [ -x "$build/bench/$b" ]; then
      run_step "$b" 90 "$logs/bench.log" "$build/bench/$b" \
        --benchmark_filter="${GPU_CHECK_BENCH_FILTER:-cuda}" --benchmark_min_time=0.05
      detail="$(grep -c '^[A-Za-z0-9_]*/' "$logs/bench.log") rows"
      ratio=$(grep '_median' "$logs/bench.log" | grep -o 'ours/cublas=[0-9.]*[kM]*' | tail -1)
      [ -n "$ratio" ] && detail="$detail; largest n: $ratio"
      if grep -q 'ERROR OCCURRED' "$logs/bench.log"; then
        [ "$step_rc" -eq 0 ] && step_rc=1
        detail="$detail; $(grep -m1 -o "ERROR OCCURRED: .*" "$logs/bench.log")"
      fi
      record "$b" "$step_rc" "$detail" "$step_s"
    else
      row "$b" "skipped (no GPU or not built)" 0
    fi
  done
fi
if wants peer; then
  # Training speed on the GPU: ember bench-train --device cuda against the PyTorch peer
  # (bench/peers/pytorch_train.py, same models and synthetic batches), interleaved, 3 runs each.
  if [ "$have_gpu" -eq 1 ] && [ -x "$build/apps/ember" ]; then
    for model in lenet5 convnet; do
      ours=() theirs=()
      for _ in 1 2 3; do
        run_step "ember $model" 60 "$logs/peer.log" "$build/apps/ember" bench-train --device cuda \
          --model "$model" --batch 64 --steps 200 --warmup 20 --json
        ours+=("$(grep -o '"images_per_s": *[0-9.]*' "$logs/peer.log" | tail -1 | grep -o '[0-9.]*$')")
        PYTHONUNBUFFERED=1 run_step "pytorch $model" 60 "$logs/peer.log" "$python" bench/peers/pytorch_train.py \
          --model "$model" --batch 64 --steps 200 --warmup 20
        theirs+=("$(grep -o '"images_per_s": *[0-9.]*' "$logs/peer.log" | tail -1 | grep -o '[0-9.]*$')")
      done
      m_ours=$(printf '%s\n' "${ours[@]}" | sort -g | sed -n 2p)
      m_theirs=$(printf '%s\n' "${theirs[@]}" | sort -g | sed -n 2p)
      ratio=$(awk -v a="${m_ours:-0}" -v b="${m_theirs:-0}" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')
      record "train $model vs PyTorch" "$step_rc" "ember ${m_ours:-?} / pytorch ${m_theirs:-?} img/s = ${ratio}x" "$step_s"
    done
  else
    row "PyTorch peers" "skipped (no GPU or ember not built)" 0
  fi
fi

# ---- summary ----
{
  echo
  printf '%-28s | %-52s | %s\n' step result time
  printf '%-28s-+-%-52s-+-%s\n' "----------------------------" "----------------------------------------------------" "-----"
  for r in "${rows[@]}"; do
    IFS='|' read -r s res secs <<<"$r"
    printf '%-28s | %-52s | %4s s\n' "$s" "$res" "$secs"
  done
  echo "total $((SECONDS - start)) s; logs in $logs; $failed step(s) failed"
} | tee "$logs/summary.txt"
[ "$failed" -eq 0 ]
