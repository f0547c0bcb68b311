#!/usr/bin/env bash
# `ember train` pinned to one CPU core (taskset): --threads 1 says nothing on stderr;
# --threads 2 warns once, naming both numbers, and trains; --threads 65 (past 64 per core,
# apps/thread_count.h) is refused before any work, with a non-zero exit.
#
#   tests/apps/threads_beyond_cores.sh EMBER
#
# Exits 77 (CTest's skip) where taskset is missing.
set -euo pipefail
ember=$1
command -v taskset >/dev/null || { echo "taskset not found: skipped"; exit 77; }
# The first CPU this process may use (a container's CPU set may not start at 0).
cpu=$(taskset -pc $$ | sed 's/.*: //; s/[-,].*//')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
train=(train --model mlp --data spirals --epochs 1 --device cpu --json)

fail() { echo "FAILED: $*"; for f in "$work"/*; do echo "--- $f"; cat "$f"; done; exit 1; }

taskset -c "$cpu" "$ember" "${train[@]}" --threads 1 >"$work/out1" 2>"$work/err1" || fail "--threads 1 did not train"
[ ! -s "$work/err1" ] || fail "--threads 1 on one core printed on stderr"

taskset -c "$cpu" "$ember" "${train[@]}" --threads 2 >"$work/out2" 2>"$work/err2" || fail "--threads 2 did not train"
grep -q '"final_accuracy"' "$work/out2" || fail "--threads 2 printed no result"
[ "$(grep -c 'ember: warning: --threads 2 is more than the 1 CPU core this process may use' "$work/err2")" = 1 ] ||
  fail "--threads 2 on one core did not warn exactly once"

if taskset -c "$cpu" "$ember" "${train[@]}" --threads 65 >"$work/out65" 2>"$work/err65"; then
  fail "--threads 65 on one core was accepted"
fi
grep -q -- '--threads must be at most 64 (64 per CPU core, and this process may use 1), got 65' "$work/err65" ||
  fail "--threads 65 was refused without the sentence"
[ ! -s "$work/out65" ] || fail "--threads 65 did work before it was refused"

echo "--threads on one core: 1 quiet, 2 warned once and trained, 65 refused"
