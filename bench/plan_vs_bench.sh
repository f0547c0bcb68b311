#!/usr/bin/env bash
# `ember plan`'s prediction against `ember bench-train`'s measurement of the same step, for
# every zoo model x fp32/fp16 x checkpoint none/sqrt x SGD/Adam x batch 32/256, as a markdown
# table (docs/plan.md holds the last run's). Memory is deterministic: one run each.
#
#   bench/plan_vs_bench.sh                    # uses build/apps/ember, 2 threads
#   EMBER=build-release/apps/ember THREADS=1 bench/plan_vs_bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
EMBER=${EMBER:-build/apps/ember}
THREADS=${THREADS:-2}
MODELS=${MODELS:-"mlp lenet5 convnet resnet20"}

field() { sed -n "s/.*\"$1\": *\"\{0,1\}\([^,\"}]*\).*/\1/p"; }
mib() { awk -v b="$1" 'BEGIN {printf "%.2f", b / 1048576}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.4f", a / b}'; }

echo "Machine: $(lscpu | sed -n 's/^Model name: *//p'), $THREADS threads, $(date -u +%F)."
echo
echo "| model | batch | precision | checkpoint | optimizer | predicted MiB | measured MiB | ratio | predicted reserved | measured reserved | ratio | plan ms |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
worst_alloc=0 worst_reserved=0
for model in $MODELS; do
  for batch in 32 256; do
    for precision in fp32 fp16; do
      for checkpoint in none sqrt; do
        for optimizer in sgd adam; do
          flags=(--model "$model" --batch "$batch" --precision "$precision" --checkpoint "$checkpoint"
                 --optimizer "$optimizer" --threads "$THREADS")
          plan=$("$EMBER" plan "${flags[@]}" --json)
          bench=$("$EMBER" bench-train "${flags[@]}" --steps 1 --warmup 1 --json)
          pa=$(field peak_bytes <<<"$plan") pr=$(field peak_reserved_bytes <<<"$plan")
          ma=$(field peak_bytes <<<"$bench") mr=$(field peak_reserved_bytes <<<"$bench")
          ra=$(ratio "$pa" "$ma") rr=$(ratio "$pr" "$mr")
          worst_alloc=$(awk -v w="$worst_alloc" -v r="$ra" 'BEGIN {d = r > 1 ? r - 1 : 1 - r; print (d > w ? d : w)}')
          worst_reserved=$(awk -v w="$worst_reserved" -v r="$rr" 'BEGIN {d = r > 1 ? r - 1 : 1 - r; print (d > w ? d : w)}')
          echo "| $model | $batch | $precision | $checkpoint | $optimizer | $(mib "$pa") | $(mib "$ma") | $ra |" \
               "$(mib "$pr") | $(mib "$mr") | $rr | $(field simulate_ms <<<"$plan") |"
        done
      done
    done
  done
done
echo
echo "Largest relative error: allocated $(awk -v w="$worst_alloc" 'BEGIN {printf "%.2f%%", 100 * w}'), reserved $(awk -v w="$worst_reserved" 'BEGIN {printf "%.2f%%", 100 * w}')."
