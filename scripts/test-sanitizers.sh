#!/usr/bin/env bash
# scripts/test-sanitizers.sh: the CPU test suite again under AddressSanitizer + UBSan
# (LeakSanitizer included), as CI runs it after scripts/test.sh's build.
#
#   scripts/test-sanitizers.sh            # configure + build the `asan` preset, run ctest
#   EMBER_CTEST_INCLUDE=data scripts/test-sanitizers.sh      # only tests matching a regex
#   EMBER_CTEST_EXCLUDE='lab|budget' scripts/test-sanitizers.sh   # all but those
#
# Any report fails the run: ASan and LSan stop at the first error, UBSan is built
# with -fno-sanitize-recover. The preset compiles with clang++-14 (in half gcc's time
# under the sanitizers), at -O1 but for the kernels (-O2), and with line tables only
# (-g1), which keeps stack traces readable and the link small. It also builds the
# libFuzzer targets, whose corpora ctest replays and scripts/fuzz.sh then fuzzes
# without a build of its own. CUDA is off in this build (nvcc code cannot be
# instrumented); the [cuda] tests are not compiled.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
start=$SECONDS
build_dir=${EMBER_ASAN_BUILD_DIR:-build-asan}
jobs=${EMBER_JOBS:-$(nproc)}

cmake --preset asan -B "$build_dir" >/dev/null
t0=$SECONDS
cmake --build "$build_dir" -j "$jobs"
build_s=$((SECONDS - t0))

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
t0=$SECONDS
set +e
select=()
[ -n "${EMBER_CTEST_INCLUDE:-}" ] && select+=(-R "$EMBER_CTEST_INCLUDE")
[ -n "${EMBER_CTEST_EXCLUDE:-}" ] && select+=(-E "$EMBER_CTEST_EXCLUDE")
ctest --test-dir "$build_dir" -j "${EMBER_CTEST_JOBS:-2}" --output-on-failure --no-tests=error --timeout 900 \
  "${select[@]}" 2>&1 | tee "$build_dir/ctest.log"
rc=${PIPESTATUS[0]}
set -e
echo
echo "== test-sanitizers.sh: build ${build_s} s, tests $((SECONDS - t0)) s, total $((SECONDS - start)) s wall"
sed -n '/tests passed/,$p' "$build_dir/ctest.log"
exit "$rc"
