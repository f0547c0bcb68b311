#!/usr/bin/env bash
# scripts/test.sh: the one command that builds and tests ember (CI runs it via .ci/run).
#
#   scripts/test.sh                 # setup, then the five stages below
#   EMBER_TEST_STAGES=main scripts/test.sh    # only the first stage
#   EMBER_BUILD_DIR=build-x scripts/test.sh   # the main stage in another build folder
#
# It installs the Debian packages first (scripts/setup.sh), then runs:
#   main        configure the `default` preset (CUDA AUTO: where nvcc exists every .cu
#               file is compiled, as CI requires; CUDA tests then skip themselves
#               without a GPU), build every target (library, tests, benchmarks, the
#               ember tool), run ctest
#   variants    scripts/test-kernel-variants.sh on that build: the op-contract and kernel
#               tests under EMBER_CPU_GEMM=openblas on other OpenBLAS kernels
#               (OPENBLAS_CORETYPE=Haswell, or another where the environment already says
#               Haswell), and, on a CPU with AVX-512, the CPU suite again with
#               EMBER_CPU_ISA=avx2 (on an AVX2-only CPU the main stage ran it), less the four
#               longest training runs: a tolerance that only this machine's summation order
#               meets fails here, not on the next machine
#   install     scripts/check-install.sh on that build: install it, build examples/ and
#               scripts/install-consumer/ against it with find_package (under the common
#               find_package settings) and a program through pkg-config, run them
#   sanitizers  scripts/test-sanitizers.sh: the CPU suite under ASan + UBSan + LSan, less
#               the four longest training runs (the lab's batch experiment, the budget
#               fit, the seed-determinism curve, LeNet-5's kill-and-resume), which
#               exercise no code the rest of the suite does not, to keep CI under 30 min
#   fuzz        scripts/fuzz.sh --ci: every fuzz target's corpus replayed, then fuzzed
#               for 10 s each
# The exit code is 0 when every stage passed; the last lines printed are the stages'
# results and ctest's summary of the main stage.
#
# Environment:
#   EMBER_BUILD_DIR  build folder (default: the preset's, build/)
#   EMBER_JOBS       parallel compile jobs (default: nproc)
#   EMBER_CTEST_JOBS parallel test processes (default: 2)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

start=$SECONDS
scripts/setup.sh
stages=${EMBER_TEST_STAGES:-main variants install sanitizers fuzz}

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
main_line="main: configure ${configure_s} s, build ${build_s} s ($compile_split), tests ${test_s} s"

# The other stages run whatever the main one gave, so one report shows every failure.
results=("$main_line: $([ "$ctest_rc" = 0 ] && echo passed || echo "FAILED (ctest $ctest_rc)")")
overall=$ctest_rc
run_stage() {
  local name=$1
  shift
  case " $stages " in *" $name "*) ;; *) return 0 ;; esac
  echo
  echo "== test.sh: stage $name: $*"
  local t=$SECONDS rc=0
  "$@" || rc=$?
  results+=("$name: $((SECONDS - t)) s: $([ "$rc" = 0 ] && echo passed || echo "FAILED (exit $rc)")")
  [ "$rc" = 0 ] || overall=$rc
}
run_stage variants scripts/test-kernel-variants.sh "$build_dir"
run_stage install scripts/check-install.sh "$build_dir"
export EMBER_CTEST_EXCLUDE=${EMBER_CTEST_EXCLUDE-"the lab.s batch-size|memory budget picks settings|same seed gives bitwise|resume_after_kill_lenet5"}
run_stage sanitizers scripts/test-sanitizers.sh
run_stage fuzz scripts/fuzz.sh --ci

echo
# `times` in this shell: in a pipeline or $(...) it would report a fresh subshell's zeros.
times_file=$(mktemp)
times >"$times_file"
echo "== test.sh: total $((SECONDS - start)) s wall; CPU time of all commands (user, sys): $(tail -1 "$times_file")"
rm -f "$times_file"
printf '== %s\n' "${results[@]}"
echo "== ctest summary (main stage)"
# ctest's own summary: the pass line, total time, and the list of failures if any.
sed -n '/tests passed/,$p' "$ctest_log"
exit "$overall"
