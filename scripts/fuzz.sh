#!/usr/bin/env bash
# Builds the fuzz targets (tests/fuzz/) in the asan preset's build (clang 14, libFuzzer, ASan +
# UBSan; the one scripts/test-sanitizers.sh builds, so after it nothing is rebuilt), then for each
# target replays its corpus (tests/fuzz/corpus/<target>/: seeds and regression inputs) and
# fuzzes it for a while. Prints a table of executions and findings; exits 1 on any finding
# (a crash, sanitizer report, leak, timeout or out-of-memory; a corpus input that fails).
#
#   scripts/fuzz.sh                 # soak: 300 s per target
#   scripts/fuzz.sh 60              # 60 s per target (or FUZZ_SECONDS=60)
#   scripts/fuzz.sh --ci            # what CI runs: replay + 20 s per target
#   FUZZ_TARGETS="fuzz_idx fuzz_byte_size" scripts/fuzz.sh 30
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
  seconds=20  # nine targets: 3 minutes of fuzzing keeps the whole CI under 30 minutes
elif [ -n "${1:-}" ]; then
  seconds=$1
fi
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "fuzz.sh: seconds per target must be a whole number, got '$seconds'" >&2; exit 2; }
rss_limit_mb=${FUZZ_RSS_LIMIT_MB:-2048}  # per process; a malloc above it is a finding too
timeout_s=${FUZZ_TIMEOUT_S:-10}          # per input

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
  echo "fuzz.sh: $seconds s per target, -rss_limit_mb=$rss_limit_mb -timeout=$timeout_s, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "| target | corpus replayed | executions | seconds | exec/s | crashes | leaks | timeouts | ooms |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
} >"$summary"

findings=0
for target in "${targets[@]}"; do
  binary=$build/tests/fuzz/$target
  seeds=tests/fuzz/corpus/$target
  work=$build/fuzz-corpus/$target
  artifacts=$run_dir/$target
  [ -x "$binary" ] || { echo "fuzz.sh: no fuzz target $binary" >&2; exit 2; }
  rm -rf "$artifacts"
  mkdir -p "$artifacts" "$work" "$seeds"
  options=(-rss_limit_mb="$rss_limit_mb" -timeout="$timeout_s" -artifact_prefix="$artifacts/")
  [ -f "tests/fuzz/dict/$target.dict" ] && options+=(-dict="tests/fuzz/dict/$target.dict")

  # 1. Every committed input once (seeds and regressions alike).
  replayed=$(find "$seeds" -type f | wc -l)
  replay="$replayed inputs ok"
  if ! "$binary" "${options[@]}" -runs=0 "$seeds" >"$artifacts/replay.log" 2>&1; then
    replay="FAILED ($artifacts/replay.log)"
  fi

  # 2. Fuzz: new inputs go to the work corpus (the first directory), seeds are read.
  start=$(date +%s.%N)
  status=0
  nice "$binary" "${options[@]}" -max_total_time="$seconds" -print_final_stats=1 "$work" "$seeds" \
    >"$artifacts/fuzz.log" 2>&1 || status=$?
  elapsed=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')

  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$artifacts/fuzz.log" | tail -n 1)
  [ -n "$executions" ] || executions=$(grep -o '^#[0-9]*' "$artifacts/fuzz.log" | tail -n 1 | tr -d '#')
  executions=${executions:-0}
  count() { find "$artifacts" -maxdepth 1 -name "$1-*" | wc -l; }
  crashes=$(count crash)
  leaks=$(count leak)
  timeouts=$(count timeout)
  ooms=$(count oom)
  # A non-zero exit without an artifact is a finding too (e.g. the fuzzer itself failed).
  if [ "$status" -ne 0 ] && [ $((crashes + leaks + timeouts + ooms)) -eq 0 ]; then crashes=1; fi
  [[ "$replay" == FAILED* ]] && findings=$((findings + 1))
  findings=$((findings + crashes + leaks + timeouts + ooms))
  rate=$(awk -v n="$executions" -v s="$elapsed" 'BEGIN { printf "%.0f", (s > 0 ? n / s : 0) }')
  printf '| %s | %s | %s | %.0f | %s | %s | %s | %s | %s |\n' "$target" "$replay" "$executions" "$elapsed" "$rate" \
    "$crashes" "$leaks" "$timeouts" "$ooms" >>"$summary"
  tail -n 1 "$summary"
done

echo
cat "$summary"
if [ "$findings" -ne 0 ]; then
  echo "fuzz.sh: $findings finding(s); artifacts and logs in $run_dir/<target>/" >&2
  exit 1
fi
echo "fuzz.sh: no findings"
