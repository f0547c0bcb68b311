#!/usr/bin/env bash
# scripts/test-kernel-variants.sh: runs the CPU test suite again the way other machines run it,
# so that a test whose tolerance holds only for this machine's summation order fails here first.
#
#   scripts/test-kernel-variants.sh [build]   # an existing build folder (default: build/)
#
# Two more runs of ctest over the build (CUDA cases skip without a GPU):
#   blas   EMBER_CPU_GEMM=openblas, the reference provider, on other kernels than the main
#          stage's: OPENBLAS_CORETYPE=Haswell (AVX2, what some CI machines set), or, where the
#          environment already says Haswell, the kernels OpenBLAS would choose for a CPU of this
#          one's widest vectors (SkylakeX with AVX-512, else Sandybridge's AVX). Other summation
#          orders inside every matmul, linear and convolution. Only the op-contract and kernel
#          tests (the rest reach the GEMM through them), so it costs a minute, not a suite.
#   isa    EMBER_CPU_ISA=avx2: ember's own run-time dispatched kernels take their AVX2 paths, as on
#          a machine without AVX-512. Only where the CPU has AVX-512: on an AVX2-only CPU the main
#          stage already ran those paths, and without AVX2 they cannot run (skipped, saying so).
# The environment's own settings are left as they are for everything else: each run sets one
# variable for its own ctest process only.
#
# Environment:
#   EMBER_CTEST_JOBS     parallel test processes (default: 2)
#   EMBER_CTEST_EXCLUDE  ctest -E regex of tests to leave out (default: the four longest training
#                        runs, as in the sanitizer stage: they exercise no kernel the rest does not)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${1:-build}
jobs=${EMBER_CTEST_JOBS:-2}
exclude=${EMBER_CTEST_EXCLUDE-"the lab.s batch-size|memory budget picks settings|same seed gives bitwise|resume_after_kill"}
[ -f "$build/CTestTestfile.cmake" ] || { echo "test-kernel-variants: $build is not a built folder" >&2; exit 2; }

if [ "${OPENBLAS_CORETYPE:-}" != Haswell ]; then
  blas_core=Haswell
elif grep -qw avx512f /proc/cpuinfo; then
  blas_core=SkylakeX
else
  blas_core=Sandybridge
fi

# The tests that reach a matrix product: the op contract on the CPU and the GEMM's, matmul's,
# linear's and the convolutions' own (ctest names).
kernel_tests='^(op contract on the cpu|gemm|EMBER_CPU_GEMM|matmul|batched matmul|f16 matmul|linear|conv2d|the direct convolution|Winograd)'

failed=0
results=()
# run NAME "VAR=VALUE ..." [ctest arguments]
run() {
  local name=$1 settings=$2 t0=$SECONDS rc=0
  shift 2
  echo
  echo "== test-kernel-variants: $name: $settings ctest $*"
  # shellcheck disable=SC2086  # settings is a list of VAR=VALUE words
  env $settings ctest --test-dir "$build" -j "$jobs" --output-on-failure --no-tests=error --timeout 600 \
    ${exclude:+-E "$exclude"} "$@" >"$build/ctest-$name.log" 2>&1 || rc=$?
  grep -E 'tests passed|\((Failed|Timeout|SEGFAULT|Subprocess aborted)\)' "$build/ctest-$name.log"
  results+=("$name ($settings): $((SECONDS - t0)) s: $([ "$rc" = 0 ] && echo passed || echo "FAILED (ctest $rc; $build/ctest-$name.log)")")
  [ "$rc" = 0 ] || failed=1
}

run blas "EMBER_CPU_GEMM=openblas OPENBLAS_CORETYPE=$blas_core" -R "$kernel_tests"
if grep -qw avx512f /proc/cpuinfo; then
  run isa EMBER_CPU_ISA=avx2
elif grep -qw avx2 /proc/cpuinfo; then
  results+=("isa: skipped: this CPU has AVX2 but no AVX-512, so the main stage already ran ember's AVX2 paths")
else
  results+=("isa: skipped: this CPU has no AVX2, so ember's AVX2 paths cannot run here")
fi
echo
printf '== %s\n' "${results[@]}"
exit "$failed"
