#!/usr/bin/env bash
# What data parallelism costs on this machine (docs/distributed.md, "Measured here"): per model,
# the same global batch of 64 trained as
#   one process, 2 threads       ember bench-train --batch 64 --threads 2            (the peer)
#   2 ranks x 1 thread           mpirun -np 2 ember bench-train --batch 32 --threads 1
#   2 ranks, no overlap          ... --no-overlap (the buckets go after backward)
#   one rank's compute           ember bench-train --batch 32 --threads 1          (no communication)
# runs interleaved in that order, repeated, medians of images/s (the job's); then the all-reduce
# itself (bench_all_reduce: ember against MPI_Allreduce). From these: what communication adds
# to a step, and how much of it overlap hides.
#
#   bench/dist/data_parallel_cost.sh                      # lenet5 convnet resnet20, 3 repeats
#   REPEATS=5 MODELS=convnet bench/dist/data_parallel_cost.sh
#   BUCKET=256KiB bench/dist/data_parallel_cost.sh        # the 2-rank runs' --bucket-size (default 25MiB:
#                                                         # every zoo model is one bucket, so nothing overlaps)
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
EMBER=${EMBER:-$BUILD/apps/ember}
REPEATS=${REPEATS:-3}
MODELS=${MODELS:-"lenet5 convnet resnet20"}
MPIEXEC=${MPIEXEC:-mpiexec}
BUCKET=${BUCKET:-25MiB}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_hwloc_base_binding_policy=none
source bench/median.sh

steps_for() { case "$1" in convnet) echo 40 ;; resnet20) echo 20 ;; *) echo 150 ;; esac; }
field() { sed -n "s/.*\"$1\": *\([0-9.]*\).*/\1/p" | head -1; }
bench() {  # ranks threads batch [flags...]: the job's images/s
  local ranks=$1 threads=$2 batch=$3 model=$4
  shift 4
  local launch=()
  [ "$ranks" -gt 1 ] && launch=("$MPIEXEC" -n "$ranks")
  "${launch[@]}" "$EMBER" bench-train --model "$model" --batch "$batch" --threads "$threads" \
    --steps "$(steps_for "$model")" --warmup 5 --json "$@" | field images_per_s
}

# EMBER_DIST_TIMEOUT turns every blocking collective into a polled nonblocking one: say which ran.
echo "$(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}," \
  "EMBER_DIST_TIMEOUT=${EMBER_DIST_TIMEOUT:-unset}," \
  "global batch 64, buckets of $BUCKET, $REPEATS runs each, interleaved, medians, $(date -u +%F)"
printf '%-9s %12s %12s %12s %12s %10s %12s %12s\n' model "1x2 img/s" "2x1 img/s" "2x1 no-ovl" "compute 1x1" "2x1/1x2" \
  "comm ms/st" "hidden %"
for model in $MODELS; do
  one=() two=() plain=() alone=()
  for _ in $(seq "$REPEATS"); do
    one+=("$(bench 1 2 64 "$model")")
    two+=("$(bench 2 1 32 "$model" --bucket-size "$BUCKET")")
    plain+=("$(bench 2 1 32 "$model" --bucket-size "$BUCKET" --no-overlap)")
    alone+=("$(bench 1 1 32 "$model")")
  done
  o=$(printf '%s\n' "${one[@]}" | median) t=$(printf '%s\n' "${two[@]}" | median)
  n=$(printf '%s\n' "${plain[@]}" | median) a=$(printf '%s\n' "${alone[@]}" | median)
  # A step of the job: 64 images; a rank's compute alone: 32 images at a's rate.
  awk -v m="$model" -v o="$o" -v t="$t" -v n="$n" -v a="$a" 'BEGIN {
    step_overlap = 64000 / t; step_plain = 64000 / n; compute = 32000 / a
    comm = step_plain - compute; hidden = comm > 0 ? 100 * (step_plain - step_overlap) / comm : 0
    printf "%-9s %12.1f %12.1f %12.1f %12.1f %9.2fx %12.2f %12.0f\n", m, o, t, n, a, t / o, comm, hidden }'
done
echo
echo "comm ms/st: a step with the buckets sent after backward, less one rank's compute alone (same threads);"
echo "hidden %: the part of that which sending during backward (the default) takes off the step."
echo
"$MPIEXEC" -n 2 "$BUILD/bench/bench_all_reduce"
