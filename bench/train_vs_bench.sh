#!/usr/bin/env bash
# `ember train` on real Fashion-MNIST against `ember bench-train` on synthetic batches in memory:
# the same model, batch and threads, one epoch's worth of steps each, runs interleaved, medians.
# The ratio is what loading the data costs a training run (1.00x: fully hidden). Training images/s
# leave evaluation out; bench-train's are its timed steps after the warm-up.
#
#   bench/train_vs_bench.sh                                   # lenet5 and convnet, 2 threads, 5 runs
#   MODELS=lenet5 THREADS=1 REPEATS=3 bench/train_vs_bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
EMBER=${EMBER:-build/apps/ember}
MODELS=${MODELS:-"lenet5 convnet"}
THREADS=${THREADS:-2}
REPEATS=${REPEATS:-5}
BATCH=64
STEPS=$(( (60000 + BATCH - 1) / BATCH ))  # one Fashion-MNIST epoch

first_number() { sed -n "/\"$1\"/{s/.*\"$1\": *\([0-9]*\).*/\1/p;q}"; }  # its whole part
source bench/median.sh

echo "$(lscpu | sed -n 's/^Model name: *//p'), $THREADS thread(s), batch $BATCH, $REPEATS runs each, $(date -u +%F)"
printf '%-9s %14s %16s %7s   %s\n' model "train img/s" "bench img/s" ratio "runs (train | bench-train)"
for model in $MODELS; do
  train_runs=() bench_runs=()
  for _ in $(seq "$REPEATS"); do
    t=$("$EMBER" train --model "$model" --epochs 1 --batch "$BATCH" --threads "$THREADS" --json | first_number samples_per_s)
    b=$("$EMBER" bench-train --model "$model" --batch "$BATCH" --threads "$THREADS" --steps "$STEPS" --json | first_number images_per_s)
    train_runs+=("$t") bench_runs+=("$b")
  done
  tm=$(printf '%s\n' "${train_runs[@]}" | median) bm=$(printf '%s\n' "${bench_runs[@]}" | median)
  printf '%-9s %14s %16s %6.2fx   %s | %s\n' "$model" "$tm" "$bm" "$(awk -v a="$tm" -v b="$bm" 'BEGIN {print a / b}')" \
    "${train_runs[*]}" "${bench_runs[*]}"
done
