#!/usr/bin/env bash
# The zoo's convolutions, ember (im2col, Winograd F(2x2) and F(4x4), direct, and auto: what
# training runs) against libtorch, per layer and pass, as a markdown table: bench_conv built with
# the libtorch peer (medians of 3 repetitions, ours and libtorch's timed in the same iterations),
# GFLOP/s of the direct method's flops, auto's and our best algorithm's ratio to libtorch, the
# best's fraction of this CPU's measured fp32 peak in those flops (Winograd's can pass 100%), and
# auto's in the flops its GEMM products really perform (bench_conv's product_peak_frac: what
# bench-train's "% of the fp32 peak" counts).
#
#   bench/peers/compare_conv.sh                     # 2 threads, every layer
#   THREADS=1 FILTER=convnet bench/peers/compare_conv.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
THREADS=${THREADS:-2}
FILTER=${FILTER:-.}
BUILD=${BUILD:-build-peers}

cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEMBER_CUDA=OFF -DEMBER_TESTS=OFF \
  -DEMBER_BENCH_PEERS=ON >/dev/null
ninja -C "$BUILD" bench_conv >/dev/null

json=$(mktemp)
trap 'rm -f "$json"' EXIT
LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp "$BUILD/bench/bench_conv" --threads="$THREADS" \
  --benchmark_filter="$FILTER" --benchmark_format=json --benchmark_out="$json" --benchmark_out_format=json \
  >/dev/null 2>&1
echo "$(lscpu | sed -n 's/^Model name: *//p'), $THREADS thread(s), $(date -u +%F); fp32 peak measured on as many threads: $(jq '[.benchmarks[].peak_GFLOPS] | first | floor' "$json") GFLOP/s; batch 64; GFLOP/s of the direct method's flops, libtorch timed in the same iterations as auto, or as the best where auto was filtered out (each ratio against the libtorch of its own iterations)."
echo
echo "| layer | pass | im2col | F(2x2) | F(4x4) | direct | auto | libtorch | auto / libtorch | best / libtorch | best, % of peak | auto, % of peak in its products |"
echo "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
jq -r '
  def cell: if . then (.gflops | floor | tostring) else "-" end;
  def ratio: if . then "\(((.gflops / .torch) * 100 | floor) / 100)x" else "-" end;
  [.benchmarks[] | select(.aggregate_name == "median")
   | (.run_name | split("/")) as $p
   | {layer: $p[0], pass: $p[1], algo: $p[2], gflops: .GFLOPS, torch: .torch_GFLOPS, peak: .peak_frac,
      products: .product_peak_frac}]
  | group_by(.layer + "/" + .pass)[]
  | (map(select(.algo == "im2col"))[0]) as $i
  | (map(select(.algo == "winograd"))[0]) as $w
  | (map(select(.algo == "winograd4"))[0]) as $w4
  | (map(select(.algo == "direct"))[0]) as $d
  | (map(select(.algo == "auto"))[0]) as $a
  | ([$i, $w, $w4, $d] | map(select(. != null)) | max_by(.gflops)) as $best
  | "| \($i.layer) | \($i.pass) | \($i | cell) | \($w | cell) | \($w4 | cell) | \($d | cell) | \($a | cell) | \(($a // $best).torch | floor) | \($a | ratio) | \($best | ratio) | \(($best.peak * 100) | floor)% | \(if $a then "\(($a.products * 100) | floor)%" else "-" end) |"
' "$json"
