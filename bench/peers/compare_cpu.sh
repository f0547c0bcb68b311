#!/usr/bin/env bash
# Training speed, ember vs libtorch, on this machine's CPU: same models (docs/models.md:
# LeNet-5, ConvNet, ResNet-20), same synthetic batches, same batch size and thread count. Runs are interleaved
# (ember, libtorch, ember, ...) and repeated; the table shows medians and the ratio.
# libtorch runs in its strongest set-up measured here: OpenBLAS's OpenMP build and a
# glibc malloc that keeps freed memory instead of returning it (no CPU caching allocator).
#
# ISA=avx2 runs both as an AVX2-only machine would, on a CPU that has AVX-512: ember built for
# x86-64-v3 (AVX2 + FMA) with EMBER_CPU_ISA=avx2, OpenBLAS's Haswell kernels and glibc's AVX2
# string functions for both, and libtorch's ATen and oneDNN capped at AVX2
# (ATEN_CPU_CAPABILITY, DNNL_MAX_CPU_ISA; oneDNN then picks its jit:avx2 convolutions).
#
# OpenBLAS matters to both sides (libtorch's GEMMs; ember's only under EMBER_CPU_GEMM=openblas),
# so the native run prints two tables: OPENBLAS_CORETYPE=Haswell (what this project's machines
# set) and OPENBLAS_CORETYPE unset (OpenBLAS picks the kernels for the CPU it finds). ISA=avx2
# prints the Haswell one. The ember column's "of peak" is bench-train's GFLOP/s in the CPU's
# products over the fp32 peak it measured on as many threads.
#
#   bench/peers/compare_cpu.sh                 # lenet5, convnet and resnet20, 1 and 2 threads, 3 repeats
#   REPEATS=5 MODELS=convnet THREADS=2 bench/peers/compare_cpu.sh
#   BLAS=unset bench/peers/compare_cpu.sh      # one table: OPENBLAS_CORETYPE unset
#   ISA=avx2 bench/peers/compare_cpu.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

REPEATS=${REPEATS:-3}
MODELS=${MODELS:-"lenet5 convnet resnet20"}
THREADS=${THREADS:-"1 2"}
BATCH=${BATCH:-64}
ISA=${ISA:-native}
case "$ISA" in
  native) BUILD=${BUILD:-build-peers} isa_flags=() isa_env=() glibc_isa="" BLAS=${BLAS:-"Haswell unset"} ;;
  avx2)
    BUILD=${BUILD:-build-peers-avx2} BLAS=Haswell
    isa_flags=(-DEMBER_NATIVE=OFF -DCMAKE_CXX_FLAGS=-march=x86-64-v3)
    isa_env=(EMBER_CPU_ISA=avx2 ATEN_CPU_CAPABILITY=avx2 DNNL_MAX_CPU_ISA=AVX2)
    glibc_isa=":glibc.cpu.hwcaps=-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX512CD" ;;
  *) echo "compare_cpu.sh: ISA must be native or avx2, got '$ISA'" >&2; exit 2 ;;
esac

cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEMBER_CUDA=OFF -DEMBER_TESTS=OFF \
  -DEMBER_BENCH_PEERS=ON "${isa_flags[@]}" >/dev/null
ninja -C "$BUILD" ember_cli libtorch_train >/dev/null

steps_for() { case "$1" in convnet) echo 30 ;; resnet20) echo 20 ;; *) echo 150 ;; esac; }

blas_env=()  # the OpenBLAS setting of the table being run: OPENBLAS_CORETYPE=... or -u OPENBLAS_CORETYPE
run_ember() {
  env "${blas_env[@]}" "${isa_env[@]}" GLIBC_TUNABLES="${glibc_isa#:}" "$BUILD/apps/ember" bench-train --model "$1" --batch "$BATCH" --threads "$2" --steps "$(steps_for "$1")" --warmup 5 --json
}
run_libtorch() {
  env "${blas_env[@]}" "${isa_env[@]}" LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp \
  GLIBC_TUNABLES="glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=4294967296$glibc_isa" \
  OMP_NUM_THREADS="$2" "$BUILD/bench/peers/libtorch_train" --model "$1" --batch "$BATCH" --threads "$2" \
    --steps "$(steps_for "$1")" --warmup 5
}
field() { sed -n "s/.*\"$1\": *\([0-9.]*\).*/\1/p"; }
source bench/median.sh

for blas in $BLAS; do
  if [ "$blas" = unset ]; then blas_env=(-u OPENBLAS_CORETYPE); else blas_env=("OPENBLAS_CORETYPE=$blas"); fi
  echo
  echo "ISA=$ISA, OPENBLAS_CORETYPE=$blas; batch $BATCH, medians of $REPEATS interleaved runs, $(date -u +%F)"
  printf '%-8s %7s %14s %8s %14s %7s   %s\n' model threads "ember img/s" "of peak" "libtorch img/s" ratio "runs (ember | libtorch)"
  for model in $MODELS; do
    for threads in $THREADS; do
      ours=() theirs=() fractions=()
      for _ in $(seq "$REPEATS"); do
        json=$(run_ember "$model" "$threads")
        ours+=("$(field images_per_s <<<"$json")")
        fractions+=("$(awk -v g="$(field cpu_gflops <<<"$json")" -v p="$(field cpu_peak_gflops <<<"$json")" 'BEGIN {print 100 * g / p}')")
        theirs+=("$(run_libtorch "$model" "$threads" | field images_per_s)")
      done
      m_ours=$(printf '%s\n' "${ours[@]}" | median)
      m_theirs=$(printf '%s\n' "${theirs[@]}" | median)
      m_fraction=$(printf '%s\n' "${fractions[@]}" | median)
      printf '%-8s %7s %14.0f %7.0f%% %14.0f %6.2fx   %s | %s\n' "$model" "$threads" "$m_ours" "$m_fraction" "$m_theirs" \
        "$(awk -v a="$m_ours" -v b="$m_theirs" 'BEGIN {print a / b}')" "${ours[*]}" "${theirs[*]}"
    done
  done
done
