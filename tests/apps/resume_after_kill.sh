#!/usr/bin/env bash
# A run killed (SIGKILL) at random moments and resumed each time from its last
# checkpoint ends with the same bytes as an uninterrupted run: weights, optimizer
# state, loss scaler, position and random state (issue: resumable training).
#
#   tests/apps/resume_after_kill.sh EMBER KILLS TRAIN-ARGS...
#
# With --save-every 1 a checkpoint is written after every step, so many kills land
# inside a save; after each kill the last checkpoint must still load (ember eval).
set -euo pipefail
ember=$(realpath "$1") kills=$2
shift 2
args=("$@")
model=$(printf '%s\n' "${args[@]}" | grep -A1 -x -- --model | tail -1)
data=fashion-mnist data_dir=()
for ((i = 0; i < ${#args[@]}; ++i)); do
  [ "${args[i]}" = --data ] && data=${args[i + 1]}
  [ "${args[i]}" = --data-dir ] && data_dir=(--data-dir "${args[i + 1]}")
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

"$ember" train "${args[@]}" --save reference.ckpt >/dev/null
start=$(date +%s%N)
"$ember" train "${args[@]}" --save timing.ckpt >/dev/null
run_ms=$((($(date +%s%N) - start) / 1000000))
echo "uninterrupted run: ${run_ms} ms"

RANDOM=${EMBER_TEST_SEED:-$$}
killed=0
for ((attempt = 1; attempt <= kills; ++attempt)); do
  resume=()
  [ -f run.ckpt ] && resume=(--resume run.ckpt)
  "$ember" train "${args[@]}" --save run.ckpt --save-every 1 "${resume[@]}" >/dev/null 2>run.err &
  pid=$!
  delay_ms=$((100 + RANDOM % (run_ms / 2 + 1)))
  sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
  if kill -9 "$pid" 2>/dev/null; then
    wait "$pid" 2>/dev/null || true
    killed=$((killed + 1))
  else
    wait "$pid" || { cat run.err; exit 1; }  # it finished before the kill: it must have succeeded
  fi
  if [ -f run.ckpt ]; then
    "$ember" eval --model "$model" --data "$data" "${data_dir[@]}" --load run.ckpt --device cpu --json >/dev/null ||
      { echo "attempt $attempt: the checkpoint left by the kill does not load"; exit 1; }
  fi
done
resume=()
[ -f run.ckpt ] && resume=(--resume run.ckpt)
"$ember" train "${args[@]}" --save run.ckpt --save-every 1 "${resume[@]}" >/dev/null
echo "killed $killed times (of $kills attempts), then resumed to the end"
cmp reference.ckpt run.ckpt
echo "the resumed run's checkpoint is byte for byte the uninterrupted run's"
