#!/usr/bin/env bash
# --memory-budget against a real limit: `ember train` on the Fashion-MNIST subset (one
# epoch) with --memory-limit equal to --memory-budget, for every zoo model x batch
# 64..1024 x budgets from 32 MiB, as a markdown table (docs/memory.md quotes the last run).
# The schedule is constant: at batch 1024 the subset makes two steps, too few for the
# recipes' one-cycle schedule. A row passes when training finishes without an out-of-memory, or when the budget is
# refused before training because nothing fits (the error names the smallest peak).
#
#   bench/budget_sweep.sh                          # uses build/apps/ember, 2 threads
#   MODELS="lenet5 convnet" BUDGETS="32 64" bench/budget_sweep.sh
set -euo pipefail
cd "$(dirname "$0")/.."
EMBER=${EMBER:-build/apps/ember}
THREADS=${THREADS:-2}
MODELS=${MODELS:-"mlp lenet5 convnet resnet20"}
BATCHES=${BATCHES:-"64 128 256 512 1024"}
BUDGETS=${BUDGETS:-"32 48 64 128"}
DATA=${DATA:-tests/data/fashion-mnist-subset}

mib() { awk -v b="$1" 'BEGIN {printf "%.2f", b / 1048576}'; }

echo "Machine: $(lscpu | sed -n 's/^Model name: *//p'), $THREADS threads, $(date -u +%F); data $DATA, one epoch."
echo
echo "| model | batch | budget MiB | chosen | predicted reserved MiB | measured reserved MiB | result |"
echo "|---|---|---|---|---|---|---|"
trained=0 refused=0 failed=0
for model in $MODELS; do
  for batch in $BATCHES; do
    for budget in $BUDGETS; do
      log=$(mktemp)
      if "$EMBER" train --model "$model" --batch "$batch" --epochs 1 --threads "$THREADS" --data-dir "$DATA" \
           --memory-limit "${budget}MiB" --memory-budget "${budget}MiB" --schedule constant --json >"$log" 2>&1; then
        chosen="$(jq -r '"\(.precision), checkpoint \(.checkpoint), accum \(.accum)"' <"$log")"
        predicted=$(jq -r '.memory_budget.predicted_peak_reserved_bytes' <"$log")
        measured=$(jq -r '.peak_reserved_bytes' <"$log")
        echo "| $model | $batch | $budget | $chosen | $(mib "$predicted") | $(mib "$measured") | trained |"
        trained=$((trained + 1))
      elif grep -q "no combination of --precision" "$log"; then
        smallest=$(sed -n 's/.*The smallest peak possible is [^,]*, \([0-9.]* [KMG]iB\) reserved.*/\1/p' "$log")
        echo "| $model | $batch | $budget | nothing fits | smallest $smallest | - | refused before training |"
        refused=$((refused + 1))
      else
        echo "| $model | $batch | $budget | - | - | - | FAILED: $(tr '\n' ' ' <"$log" | cut -c1-160) |"
        failed=$((failed + 1))
      fi
      rm -f "$log"
    done
  done
done
echo
echo "$trained trained, $refused refused before training (nothing fits), $failed failed."
[ "$failed" -eq 0 ]
