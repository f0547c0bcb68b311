#!/usr/bin/env bash
# scripts/test.sh: the one command that builds and tests ember (CI runs it via .ci/run).
#
#   scripts/test.sh                 # setup, configure the `default` preset, build all, ctest
#   EMBER_BUILD_DIR=build-x scripts/test.sh   # same, in another build folder
#
# It installs the Debian packages first (scripts/setup.sh), configures the `default`
# preset (CUDA AUTO: where nvcc exists every .cu file is compiled, as CI requires;
# CUDA tests then skip themselves without a GPU), builds every target (library,
# tests, benchmarks, the ember tool) and runs ctest. The exit code is ctest's; the
# last lines printed are ctest's summary.
#
# Environment:
#   EMBER_BUILD_DIR  build folder (default: the preset's, build/)
#   EMBER_JOBS       parallel compile jobs (default: nproc)
#   EMBER_CTEST_JOBS parallel test processes (default: 2)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

start=$SECONDS
scripts/setup.sh

build_dir=${EMBER_BUILD_DIR:-build}
jobs=${EMBER_JOBS:-$(nproc)}
ctest_jobs=${EMBER_CTEST_JOBS:-2}

t0=$SECONDS
cmake --preset default -B "$build_dir"
configure_s=$((SECONDS - t0))

# Remember where this build's entries start in ninja's log, to split the compile
# time between nvcc and the C++ compiler afterwards.
ninja_log="$build_dir/.ninja_log"
log_start=1
[ -f "$ninja_log" ] && log_start=$(($(wc -l <"$ninja_log") + 1))

t0=$SECONDS
cmake --build "$build_dir" -j "$jobs"
build_s=$((SECONDS - t0))

# Sum of per-file compile times (CPU seconds of the jobs, not wall time).
compile_split="n/a"
if [ -f "$ninja_log" ]; then
  compile_split=$(tail -n "+$log_start" "$ninja_log" | awk -F'\t' '
    !/^#/ { d = ($2 - $1) / 1000.0; if ($4 ~ /\.cu\.o$/) cu += d; else other += d }
    END { printf "compile jobs: nvcc %.0f s, c++ %.0f s", cu, other }')
fi

t0=$SECONDS
ctest_log="$build_dir/ctest.log"
set +e
ctest --test-dir "$build_dir" -j "$ctest_jobs" --output-on-failure --no-tests=error --timeout 600 2>&1 | tee "$ctest_log"
ctest_rc=${PIPESTATUS[0]}
set -e
test_s=$((SECONDS - t0))

echo
echo "== test.sh: configure ${configure_s} s, build ${build_s} s ($compile_split), tests ${test_s} s, total $((SECONDS - start)) s wall"
echo "== CPU time of all commands (user, sys): $(times | tail -1)"
echo "== ctest summary"
# ctest's own summary: the pass line, total time, and the list of failures if any.
sed -n '/tests passed/,$p' "$ctest_log"
exit "$ctest_rc"
