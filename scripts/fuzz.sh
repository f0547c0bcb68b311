#!/usr/bin/env bash
# Builds the fuzz targets (tests/fuzz/) in the asan preset's build (clang 14, libFuzzer, ASan +
# UBSan; the one scripts/test-sanitizers.sh builds, so after it nothing is rebuilt), then for each
# target replays its corpus (tests/fuzz/corpus/<target>/: seeds and regression inputs) and
# fuzzes it for a while. Prints a table of executions and findings; exits 1 on any finding
# (a crash, sanitizer report, leak, timeout or out-of-memory; a corpus input that fails).
#
#   scripts/fuzz.sh                 # soak: 300 s per target
#   scripts/fuzz.sh 60              # 60 s per target (or FUZZ_SECONDS=60)
#   scripts/fuzz.sh --ci            # what CI runs: replay + 10 s per target
#   FUZZ_TARGETS="fuzz_idx fuzz_byte_size" scripts/fuzz.sh 30
#   FUZZ_PARALLEL=1 scripts/fuzz.sh  # one target at a time (default: one per core)
#
# Inputs the fuzzer finds go to build-asan/fuzz-corpus/<target>/ (kept between runs, never
# committed); artifacts (crash-*, leak-*, timeout-*, oom-*) and logs to build-asan/fuzz-run/<target>/
# (EMBER_ASAN_BUILD_DIR names another build folder).
# A finding to keep becomes a regression input: copy it into tests/fuzz/corpus/<target>/ under
# a name that says what it is, and add a unit test (docs/fuzzing.md).
# Needs clang-14 and libclang-rt-14-dev (scripts/setup.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-300}
if [ "${1:-}" = "--ci" ]; then
  seconds=10  # nine targets: 1.5 minutes of fuzzing; the soak (the default) is where fuzzing finds things
elif [ -n "${1:-}" ]; then
  seconds=$1
fi
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "fuzz.sh: seconds per target must be a whole number, got '$seconds'" >&2; exit 2; }
rss_limit_mb=${FUZZ_RSS_LIMIT_MB:-2048}  # per process; a malloc above it is a finding too
timeout_s=${FUZZ_TIMEOUT_S:-10}          # per input
parallel=${FUZZ_PARALLEL:-$(nproc)}      # targets fuzzed at once

build=${EMBER_ASAN_BUILD_DIR:-build-asan}
if [ -n "${FUZZ_TARGETS:-}" ]; then
  read -r -a targets <<<"$FUZZ_TARGETS"
else
  targets=()
  for source in tests/fuzz/fuzz_*.cpp; do targets+=("$(basename "$source" .cpp)"); done
fi

cmake --preset asan -B "$build" >/dev/null
nice cmake --build "$build" -j "${FUZZ_JOBS:-2}" --target "${targets[@]}"

export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
run_dir=$build/fuzz-run
summary=$run_dir/summary.md
mkdir -p "$run_dir"
{
  echo "fuzz.sh: $seconds s per target, $parallel at a time, -rss_limit_mb=$rss_limit_mb -timeout=$timeout_s, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "| target | corpus replayed | executions | seconds | exec/s | crashes | leaks | timeouts | ooms |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
} >"$summary"

# fuzz_one TARGET: replays and fuzzes one target; writes its table row to $run_dir/TARGET/row
# and its count of findings to $run_dir/TARGET/findings.
fuzz_one() {
  local target=$1
  local binary=$build/tests/fuzz/$target
  local seeds=tests/fuzz/corpus/$target
  local work=$build/fuzz-corpus/$target
  local artifacts=$run_dir/$target
  rm -rf "$artifacts"
  mkdir -p "$artifacts" "$work" "$seeds"
  local options=(-rss_limit_mb="$rss_limit_mb" -timeout="$timeout_s" -artifact_prefix="$artifacts/")
  [ -f "tests/fuzz/dict/$target.dict" ] && options+=(-dict="tests/fuzz/dict/$target.dict")

  # 1. Every committed input once (seeds and regressions alike).
  local replayed replay
  replayed=$(find "$seeds" -type f | wc -l)
  replay="$replayed inputs ok"
  if ! "$binary" "${options[@]}" -runs=0 "$seeds" >"$artifacts/replay.log" 2>&1; then
    replay="FAILED ($artifacts/replay.log)"
  fi

  # 2. Fuzz: new inputs go to the work corpus (the first directory), seeds are read.
  local start status=0 elapsed executions
  start=$(date +%s.%N)
  nice "$binary" "${options[@]}" -max_total_time="$seconds" -print_final_stats=1 "$work" "$seeds" \
    >"$artifacts/fuzz.log" 2>&1 || status=$?
  elapsed=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')

  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$artifacts/fuzz.log" | tail -n 1)
  [ -n "$executions" ] || executions=$(grep -o '^#[0-9]*' "$artifacts/fuzz.log" | tail -n 1 | tr -d '#')
  executions=${executions:-0}
  count() { find "$artifacts" -maxdepth 1 -name "$1-*" | wc -l; }
  local crashes leaks timeouts ooms found rate
  crashes=$(count crash)
  leaks=$(count leak)
  timeouts=$(count timeout)
  ooms=$(count oom)
  # A non-zero exit without an artifact is a finding too (e.g. the fuzzer itself failed).
  if [ "$status" -ne 0 ] && [ $((crashes + leaks + timeouts + ooms)) -eq 0 ]; then crashes=1; fi
  found=$((crashes + leaks + timeouts + ooms))
  [[ "$replay" == FAILED* ]] && found=$((found + 1))
  rate=$(awk -v n="$executions" -v s="$elapsed" 'BEGIN { printf "%.0f", (s > 0 ? n / s : 0) }')
  printf '| %s | %s | %s | %.0f | %s | %s | %s | %s | %s |\n' "$target" "$replay" "$executions" "$elapsed" "$rate" \
    "$crashes" "$leaks" "$timeouts" "$ooms" >"$artifacts/row"
  echo "$found" >"$artifacts/findings"
  cat "$artifacts/row"
}

for target in "${targets[@]}"; do
  [ -x "$build/tests/fuzz/$target" ] || { echo "fuzz.sh: no fuzz target $build/tests/fuzz/$target" >&2; exit 2; }
done
# The targets run $parallel at a time (each fuzzer is one process on one core).
running=0
for target in "${targets[@]}"; do
  if [ "$running" -ge "$parallel" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_one "$target" &
  running=$((running + 1))
done
wait

findings=0
for target in "${targets[@]}"; do
  if [ -f "$run_dir/$target/row" ]; then
    cat "$run_dir/$target/row" >>"$summary"
    findings=$((findings + $(cat "$run_dir/$target/findings")))
  else
    echo "| $target | FAILED (fuzz.sh did not finish it) | 0 | 0 | 0 | 1 | 0 | 0 | 0 |" >>"$summary"
    findings=$((findings + 1))
  fi
done

echo
cat "$summary"
if [ "$findings" -ne 0 ]; then
  echo "fuzz.sh: $findings finding(s); artifacts and logs in $run_dir/<target>/" >&2
  exit 1
fi
echo "fuzz.sh: no findings"
