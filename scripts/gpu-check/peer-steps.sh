# The steps of scripts/gpu-check.sh --peers, the optional second call (sourced): ember's
# training speed against PyTorch's on the same GPU, the GEMM benchmark against cuBLAS, and the
# CPU test suite of the GPU build. Without a GPU (a dry run) the GPU parts only prove their
# command lines.

peer_models=(mlp lenet5 convnet resnet20)  # bench/peers/pytorch_train.py has each of them

have_torch=0
step_peers_env() {
  step_env || return
  local torch
  torch=$(capped "$python" -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda,
    "cuDNN", torch.backends.cudnn.version(), "GPU" if torch.cuda.is_available() else "no GPU")' 2>>"$log")
  echo "  torch              ${torch:-not importable}" | tee -a "$log"
  [ -n "$torch" ] && have_torch=1
  RESULT="$RESULT; ${torch:-no torch}"
  [ "$have_torch" -eq 1 ] || [ "$have_gpu" -eq 0 ]  # on a GPU machine, PyTorch is the peer
}

# rate_of TEXT: images/s of the JSON line in TEXT (ember's and the peer's alike).
rate_of() { grep -o '"images_per_s": *[0-9.]*' <<<"$1" | tail -1 | grep -o '[0-9.]*$'; }
median_of() { printf '%s\n' "$@" | grep . | sort -g | awk '{v[NR] = $1} END {if (NR) print v[int((NR + 1) / 2)]}'; }

# Three rounds per model, ember then PyTorch in each (interleaved, so drift hits both), medians.
step_train_vs_pytorch() {
  local model t0 out rc=0 device=cuda steps=200 warmup=20 rounds=3 ours theirs ours_runs theirs_runs
  if [ "$have_gpu" -eq 0 ]; then device=cpu steps=1 warmup=0 rounds=1; fi  # dry run: proves the flags
  for model in "${peer_models[@]}"; do
    t0=$SECONDS ours_runs=() theirs_runs=()
    for _ in $(seq "$rounds"); do
      out=$(capped_at_most 20 "$build/apps/ember" bench-train --device "$device" --model "$model" --batch 64 \
        --steps "$steps" --warmup "$warmup" --json 2>&1) || rc=$?
      echo "$out" >>"$log"
      ours_runs+=("$(rate_of "$out")")
      if [ "$have_torch" -eq 1 ]; then
        out=$(PYTHONUNBUFFERED=1 capped_at_most 40 "$python" bench/peers/pytorch_train.py --device "$device" \
          --model "$model" --batch 64 --steps "$steps" --warmup "$warmup" 2>&1) || rc=$?
        echo "$out" >>"$log"
        theirs_runs+=("$(rate_of "$out")")
      fi
    done
    ours=$(median_of "${ours_runs[@]}") theirs=$(median_of "${theirs_runs[@]}")
    [ "$have_gpu" -eq 1 ] && detail_row "$model" "ember ${ours:-?} img/s, PyTorch ${theirs:-?} img/s$(
      awk -v a="$ours" -v b="$theirs" 'BEGIN { if (a > 0 && b > 0) printf " (ember/PyTorch %.2fx)", a / b }')" \
      $((SECONDS - t0))
  done
  if [ "$have_torch" -eq 0 ]; then
    "$python" -m py_compile bench/peers/pytorch_train.py >>"$log" 2>&1 || rc=1
    RESULT="dry run: ember's command line ran 1 step on the CPU; no PyTorch here, its script compiled"
  elif [ "$have_gpu" -eq 0 ]; then
    RESULT="dry run: both command lines ran 1 step on the CPU"
  else
    RESULT="medians of $rounds, batch 64, $steps steps after $warmup, ember's default kernels"
  fi
  return "$rc"
}

step_bench_matmul() {
  local bench="$build/bench/bench_matmul" json="$logs/bench-matmul.json" rc
  if [ "$have_gpu" -eq 0 ]; then
    local n
    n=$("$bench" --benchmark_list_tests --benchmark_filter=cuda 2>>"$log" | tee -a "$log" | wc -l)
    RESULT="dry run: $n GPU benchmark(s) would run"
    [ "$n" -gt 0 ]
    return
  fi
  # 0.1 s a repetition (3 repetitions, medians): 19 benchmarks with their cuBLAS runs in ~30 s.
  capped "$bench" --benchmark_filter=cuda --benchmark_min_time=0.1 --benchmark_out="$json" \
    --benchmark_out_format=json >>"$log" 2>&1
  rc=$?
  # One row per size (and ladder step): the medians of ours and cuBLAS's GFLOP/s.
  while IFS='|' read -r label text; do
    detail_row "$label" "$text" ""
  done < <("$python" - "$json" <<'EOF' 2>>"$log"
import json, sys
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    if b.get("aggregate_name") == "median":
        parts = b["run_name"].split("/")
        size = [part for part in parts if part.isdigit()][-1]
        step = [part[len("ladder:"):] + " " for part in parts if part.startswith("ladder:")]
        print(f"{''.join(step)}n={size}|ours {b['GFLOPS'] / 1e3:.1f} TFLOP/s, cuBLAS {b['cublas_GFLOPS'] / 1e3:.1f} TFLOP/s"
              f" (ours/cuBLAS {b['ours/cublas']:.2f}x)")
EOF
  )
  grep -q 'ERROR OCCURRED' "$log" && RESULT="$(grep -m1 -o 'ERROR OCCURRED: .*' "$log")" && rc=1
  RESULT=${RESULT:-fp32 square GEMM, ours and each ladder step against cuBLAS, medians of 3}
  return "$rc"
}

# The non-[cuda] test cases (CTest names the [cuda] ones "cuda: ..."): the [cuda] ones ran in
# the main check. Two OpenMP threads per test, as on the 2-core CI machine, and one test per core.
step_cpu_tests() {
  OMP_NUM_THREADS=2 capped ctest --test-dir "$build" -j "$jobs" -E '^cuda: ' --no-tests=error \
    --timeout 300 --output-on-failure >>"$log" 2>&1
  local rc=$?
  RESULT=$(grep -m1 'tests passed' "$log")
  [ "$rc" -eq 0 ] || sed -n '/The following tests FAILED/,$p' "$log" | head -20
  [ "$dry_run" -eq 1 ] && RESULT="$RESULT$(ctest_projection)"
  return "$rc"
}

# On 16 cores the suite takes about its longest test or a sixteenth of the sum, whichever is
# more, times 1.5 (slower server cores): the step's planned time comes from this figure.
ctest_projection() {
  awk '/^---/ {exit} NF >= 3 {s += $NF; if ($NF > m) m = $NF}
       END {p = s / 16; if (m > p) p = m; printf " (sum %d s, longest %d s: on 16 cores ~%d s)", s, m, p * 1.5 + 1}' \
    "$build/Testing/Temporary/CTestCostData.txt" 2>/dev/null
}
