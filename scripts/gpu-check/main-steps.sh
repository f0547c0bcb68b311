# The GPU steps of the main check of scripts/gpu-check.sh (sourced): every [cuda] test case,
# the cuBLAS/cuDNN op contract, compute-sanitizer on a small subset, one epoch of LeNet-5 and
# ConvNet on Fashion-MNIST, and one bench-train line per model with ember's kernels against
# cuBLAS/cuDNN. Without a GPU (a dry run) each step only lists what it would run, or runs it
# on the CPU, to prove its command line.

# Test cases are chosen by tag and by the name the op contract's macro gives its cases
# (tests/ops/test_op_contract.cpp), never by a list of names, so new [cuda] cases join in.
vendor_contract="cuda: op contract with cuBLAS and cuDNN*"
cuda_cases="[cuda]~$vendor_contract"
# compute-sanitizer runs kernels 10-100x slower, so it gets a few small cases that between them
# allocate (EMBER_ALLOCATOR=direct: one cudaMalloc per tensor, so memcheck sees a write past a
# tensor's end), copy between host and device and between dtypes ([transfer]), load batches
# ([data]), record stream events ([streams]), run elementwise kernels and ember's GEMM
# ([module], [sgd]), cuDNN's convolution ([cudnn]), and ember's own GEMM and convolution kernels
# (their op contracts, without the million-element cases).
sanitizer_cases="[cuda][transfer],[cuda][data],[cuda][streams],[cuda][module],[cuda][sgd],[cuda][cudnn],cuda: op contract with ember's kernels: matmul,cuda: op contract with ember's kernels: cnn"
bench_models=(mlp lenet5 convnet resnet20)  # models::model_names()

tests_bin() { echo "$build/tests/ember_tests"; }
# Data-parallel training on the GPU in one process: a process group of one rank, so the buckets,
# ZeRO's shards and the fp16 path run on CUDA tensors (NCCL's own cases need two GPUs and MPI).
data_parallel_bin() { echo "$build/tests/data_parallel/ember_data_parallel_tests"; }

# list_cases SPEC [BINARY]: the names of the test cases SPEC selects (a GPU is not needed to list).
list_cases() { "${2:-$(tests_bin)}" --list-test-names-only "$1" 2>/dev/null | grep -v '^$'; }
# runnable_cases SPEC [BINARY]: those a run here selects: tests/main.cpp leaves out the two-GPU
# cases ("cuda x2: ...") on a machine with fewer GPUs.
runnable_cases() {
  if [ "$gpu_count" -ge 2 ]; then list_cases "$@"; else list_cases "$@" | grep -v '^cuda x2: '; fi
}

# catch_summary LOG: Catch2's closing line, shortened.
catch_summary() {
  grep -E '^All tests passed|^test cases:' "$1" | tail -1 | sed 's/  */ /g'
}

# run_cases SPEC [BINARY]: runs the cases SPEC selects in one process, each case's time in the log.
run_cases() {
  local spec=$1 bin=${2:-$(tests_bin)}
  if [ "$have_gpu" -eq 0 ]; then
    local n
    n=$(list_cases "$spec" "$bin" | wc -l)
    RESULT="dry run: $n case(s) would run"
    list_cases "$spec" "$bin" >>"$log"
    [ "$n" -gt 0 ]
    return
  fi
  capped "$bin" "$spec" -w NoTests -d yes >>"$log" 2>&1
  local rc=$? listed ran
  RESULT="$(catch_summary "$log")"
  # The run's own filter (tests/main.cpp adds the GPU-count exclusion) must select what listing does.
  listed=$(runnable_cases "$spec" "$bin" | wc -l)
  ran=$(catch_summary "$log" | grep -oE 'in [0-9]+ test case|test cases: [0-9]+' | grep -oE '[0-9]+' | tail -1)
  if [ "${ran:-0}" -ne "$listed" ]; then
    RESULT="$RESULT; ran ${ran:-0} of the $listed cases listed"
    rc=1
  fi
  if grep -q '^no GPU: ' "$log"; then
    RESULT="nvidia-smi sees a GPU but ember_tests does not (driver and runtime?)"
  fi
  [ "$rc" -eq 0 ] || grep -m1 -B3 -A12 'FAILED' "$log"
  return "$rc"
}

step_cuda_tests() {
  run_cases "$cuda_cases" || return
  local tests_result=$RESULT
  run_cases "[cuda]" "$(data_parallel_bin)"
  local rc=$?
  RESULT="$tests_result; data parallel: $RESULT"
  return "$rc"
}
step_vendor_contract() { run_cases "$vendor_contract"; }

step_sanitizer() {
  local n rc
  n=$(runnable_cases "$sanitizer_cases" | wc -l)
  if [ "$have_gpu" -eq 0 ]; then
    list_cases "$sanitizer_cases" >>"$log"
    RESULT="dry run: $n case(s) would run under memcheck; sanitizer: ${sanitizer:-not found here}"
    [ "$n" -gt 0 ]
    return
  fi
  if [ -z "$sanitizer" ]; then
    RESULT="compute-sanitizer not found"
    return 1
  fi
  # The op contract's million-element cases are left out (EMBER_OP_CONTRACT_MAX_ELEMENTS); its
  # guard bytes check every output for overruns in the unsanitized run anyway.
  EMBER_ALLOCATOR=direct EMBER_OP_CONTRACT_MAX_ELEMENTS=100000 capped "$sanitizer" --tool memcheck \
    --error-exitcode 99 --print-limit 20 "$(tests_bin)" "$sanitizer_cases" -w NoTests -d yes >>"$log" 2>&1
  rc=$?
  local done_cases errors
  done_cases=$(grep -c '^[0-9.]* s: cuda: ' "$log")  # -d yes: a line per finished case (and section)
  errors=$(grep -o 'ERROR SUMMARY: [0-9]* errors\?' "$log" | tail -1)
  RESULT="$done_cases of $n cases; ${errors:-no ERROR SUMMARY}"
  [ "$rc" -eq 0 ] || grep -m1 -B2 -A12 '========= Invalid\|========= Program hit\|FAILED' "$log"
  return "$rc"
}

# The zoo's two small CNNs, one epoch of Fashion-MNIST each on the GPU (the carry's copy), with a
# floor on the test accuracy a working step reaches (the CPU reaches 87.68% and 91.00%,
# docs/results.md; a broken kernel ends near 10%).
train_models=(lenet5:0.85 convnet:0.89)
step_train() {
  local entry model floor out rc=0
  json_value() { grep -o "\"$1\": *[0-9.e+-]*" <<<"$out" | tail -1 | sed 's/.*: *//'; }
  if [ "$have_gpu" -eq 0 ]; then
    RESULT="dry run: would train ${train_models[*]%%:*} for one epoch on cuda from $carry/fashion-mnist"
    return 0
  fi
  for entry in "${train_models[@]}"; do
    model=${entry%%:*} floor=${entry#*:}
    local t0=$SECONDS
    echo "-- $model" >>"$log"
    out=$(capped_at_most 30 "$build/apps/ember" train --device cuda --model "$model" --epochs 1 \
      --data-dir "$carry/fashion-mnist" --min-accuracy "$floor" --json 2>&1) || rc=$?
    echo "$out" >>"$log"
    detail_row "$model" "test accuracy $(awk -v a="$(json_value final_accuracy)" 'BEGIN { printf "%.2f%%", 100 * a }') after 1 epoch (floor $floor), $(json_value samples_per_s | cut -d. -f1) images/s, peak $(json_value peak_mib) MiB" \
      $((SECONDS - t0))
  done
  RESULT="${#train_models[@]} models, one epoch each on Fashion-MNIST"
  return "$rc"
}

# images_per_s TEXT: the images/s of bench-train's JSON line in TEXT.
images_per_s() { grep -o '"images_per_s":[0-9.]*' <<<"$1" | tail -1 | cut -d: -f2; }

# ratio A B: " (ours/vendor 0.84x)" when both are numbers.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf " (ours/vendor %.2fx)", a / b }'; }

# median V...: the middle value (the mean of the two middle ones for an even count); "" for none.
median() {
  printf '%s\n' "$@" | grep -E '^[0-9.]+$' | sort -g |
    awk '{ v[NR] = $1 } END { if (NR) printf "%.1f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Ember's kernels and cuBLAS/cuDNN in turn, per model, bench_rounds times (the GPU drifts from run
# to run as the CPU does: interleaved rounds, medians).
bench_rounds=3
step_bench_train() {
  local model round out rc=0 device=cuda steps=100 warmup=10 rounds=$bench_rounds gemm_conv
  local -A rates
  if [ "$have_gpu" -eq 0 ]; then device=cpu steps=1 warmup=0 rounds=1; fi  # dry run: proves the flags
  for model in "${bench_models[@]}"; do
    local t0=$SECONDS
    for ((round = 1; round <= rounds; ++round)); do
      for gemm_conv in custom/custom cublas/cudnn; do
        echo "-- $model, round $round, EMBER_GEMM=${gemm_conv%/*} EMBER_CONV=${gemm_conv#*/}" >>"$log"
        out=$(EMBER_GEMM=${gemm_conv%/*} EMBER_CONV=${gemm_conv#*/} capped_at_most 20 "$build/apps/ember" \
          bench-train --device "$device" --model "$model" --batch 64 --steps "$steps" --warmup "$warmup" --json 2>&1) || rc=$?
        echo "$out" >>"$log"
        rates[$gemm_conv]+=" $(images_per_s "$out")"
      done
    done
    if [ "$have_gpu" -eq 1 ]; then
      local ours vendor
      # shellcheck disable=SC2086  # the rates are words
      ours=$(median ${rates[custom/custom]}) vendor=$(median ${rates[cublas/cudnn]})
      detail_row "$model" "ember kernels ${ours:-?} img/s, cuBLAS/cuDNN ${vendor:-?} img/s$(ratio "$ours" "$vendor"), medians of $rounds" \
        $((SECONDS - t0))
    fi
    rates=()
  done
  RESULT="${#bench_models[@]} models, batch 64, $steps steps after $warmup on $device, $rounds interleaved rounds"
  [ "$have_gpu" -eq 1 ] || RESULT="dry run: each model's two command lines ran 1 step on the CPU"
  return "$rc"
}
