#!/usr/bin/env bash
# `ember train` as the ranks of an MPI job (apps/rank_run.h):
#   1. mpiexec -n 2 trains, rank 0 alone prints (one JSON document, "ranks": 2);
#   2. ranks given different flags are refused, naming the flag and each rank's value;
#   3. commands that run in one process are refused under mpiexec;
#   4. a rank killed (SIGKILL) at random moments ends the job, the checkpoint files left behind
#      resume, and the resumed run ends with the uninterrupted run's bytes on every rank.
#
#   tests/apps/data_parallel_cli.sh EMBER MPIEXEC KILLS
set -euo pipefail
ember=$(realpath "$1") mpiexec=$2 kills=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
train=(train --model mlp --data spirals --device cpu --threads 1 --no-progress)

"$mpiexec" -n 2 "$ember" "${train[@]}" --epochs 3 --zero 1 --json --min-accuracy 0.5 >out.json
[ "$(grep -c '"command": "train"' out.json)" = 1 ] || { cat out.json; echo "expected one JSON document"; exit 1; }
grep -q '"ranks": 2' out.json
echo "1. two ranks trained; rank 0 printed one JSON document"

if "$mpiexec" -n 1 "$ember" "${train[@]}" --epochs 1 --batch 32 : -n 1 "$ember" "${train[@]}" --epochs 1 --batch 64 \
    >mismatch.out 2>&1; then
  echo "ranks with different --batch ran"; exit 1
fi
grep -q -- "--batch is 32 on rank 0 and 64 on rank 1" mismatch.out || { cat mismatch.out; exit 1; }
echo "2. different flags refused: $(grep -m1 -o -- '--batch is 32 on rank 0 and 64 on rank 1' mismatch.out)"

if "$mpiexec" -n 2 "$ember" plan --model mlp >plan.out 2>&1; then echo "plan ran under mpiexec -n 2"; exit 1; fi
grep -q "ember plan runs in one process" plan.out || { cat plan.out; exit 1; }
echo "3. ember plan refused under mpiexec -n 2"

args=("${train[@]}" --epochs 4 --samples-per-class 1000 --optimizer adam --lr 0.01 --zero 2)
"$mpiexec" -n 2 "$ember" "${args[@]}" --save reference.ckpt >/dev/null
start=$(date +%s%N)
"$mpiexec" -n 2 "$ember" "${args[@]}" --save timing.ckpt --save-every 1 >/dev/null
run_ms=$((($(date +%s%N) - start) / 1000000))
RANDOM=${EMBER_TEST_SEED:-$$}
killed=0
# A run resumes once every rank has saved (a save appears whole or not at all): killed before
# rank 1's first save, rank 0's file alone holds no step the two share, and the run starts over.
resume_flags() {
  resume=()
  if [ -f run.ckpt ] && [ -f run.ckpt.rank1 ]; then resume=(--resume run.ckpt); else rm -f run.ckpt*; fi
}
for ((attempt = 1; attempt <= kills; ++attempt)); do
  resume_flags
  "$mpiexec" -n 2 "$ember" "${args[@]}" --save run.ckpt --save-every 1 "${resume[@]}" >/dev/null 2>run.err &
  job=$!
  delay_ms=$((200 + RANDOM % (run_ms / 2 + 1)))
  sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
  rank=$((RANDOM % 2))
  victim=$(pgrep -f -- "--save run.ckpt --save-every 1" | while read -r pid; do
    [ "$(tr '\0' '\n' </proc/"$pid"/environ 2>/dev/null | grep -c "^OMPI_COMM_WORLD_RANK=$rank$")" = 1 ] && echo "$pid"
  done | head -1 || true)
  if [ -n "$victim" ] && kill -9 "$victim" 2>/dev/null; then
    if wait "$job"; then
      # A rank that has done its work and is exiting takes the SIGKILL without dying: the job
      # then ends well, with the whole run's files; anything else outlived a killed rank.
      if cmp -s reference.ckpt run.ckpt && cmp -s reference.ckpt.rank1 run.ckpt.rank1; then
        rm -f run.ckpt*
        continue
      fi
      echo "attempt $attempt: the job outlived its killed rank $rank"; exit 1
    fi
    killed=$((killed + 1))
  else
    wait "$job" || { cat run.err; exit 1; }  # it finished before the kill: it must have succeeded
  fi
done
resume_flags
"$mpiexec" -n 2 "$ember" "${args[@]}" --save run.ckpt --save-every 1 "${resume[@]}" >/dev/null
echo "4. killed a rank $killed times (of $kills attempts); each time the job ended, and the run resumed to the end"
cmp reference.ckpt run.ckpt
cmp reference.ckpt.rank1 run.ckpt.rank1
echo "the resumed run's checkpoint files are byte for byte the uninterrupted run's, on both ranks"
