# The env step of scripts/gpu-check.sh (sourced): what the check relies on, looked at before
# anything is built. Sets have_gpu, cuda_arch, cudnn_root, sanitizer and the library path.

have_gpu=0
gpu_count=0
cuda_arch=90  # Hopper; replaced by the GPU's own compute capability when there is one
cudnn_root=""
sanitizer=""

# cuDNN: CUDNN_ROOT, else the CUDA toolkit's folders, else a Python package that carries it
# (PyTorch's wheel has site-packages/nvidia/cudnn/{include,lib}).
find_cudnn() {
  if [ -n "${CUDNN_ROOT:-}" ]; then echo "$CUDNN_ROOT"; return; fi
  local d
  for d in /usr/local/cuda /usr/local/cuda/targets/x86_64-linux /usr; do
    if [ -s "$d/include/cudnn.h" ]; then echo "$d"; return; fi
  done
  "$python" - <<'EOF' 2>/dev/null
import glob, os, sys
for root in sys.path:
    for header in sorted(glob.glob(os.path.join(root, "nvidia", "**", "include", "cudnn.h"), recursive=True)):
        print(os.path.dirname(os.path.dirname(header)))
        sys.exit(0)
EOF
}

find_sanitizer() {
  command -v compute-sanitizer && return
  ls /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer 2>/dev/null | head -1
}

# tool NAME VALUE [TEXT]: one line of the env log; an empty VALUE prints TEXT (MISSING) and
# puts NAME on the missing list.
missing=()
tool() {
  printf '  %-18s %s\n' "$1" "${2:-${3:-MISSING}}"
  [ -n "$2" ] || missing+=("$1")
}

# CMake's version if it is 3.25 or newer (CMakePresets.json's version 6).
cmake_version() {
  local v
  v=$(cmake --version 2>/dev/null | awk 'NR == 1 {print $3}')
  [ -n "$v" ] && printf '%s\n3.25\n' "$v" | sort -V -C -r && echo "$v"
}

step_env() {
  [ -d /usr/local/cuda/bin ] && PATH="$PATH:/usr/local/cuda/bin"
  local gpu cap cublas
  gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)
  cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1)
  if [ -n "$gpu" ]; then
    have_gpu=1
    gpu_count=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
    [ -n "$cap" ] && cuda_arch=${cap/./}
  fi
  cudnn_root=$(find_cudnn)
  sanitizer=$(find_sanitizer)
  cublas=$(ls /usr/local/cuda/lib64/libcublas.so /usr/local/cuda/targets/x86_64-linux/lib/libcublas.so 2>/dev/null | head -1)
  missing=()
  local first_line=$(($(wc -l <"$log") + 1))
  {
    echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg)"
    tool GPU "${gpu:+$gpu, sm_$cuda_arch}"
    tool nvcc "$(nvcc --version 2>/dev/null | grep -o 'release [0-9.]*')"
    tool cmake "$(cmake_version)" "MISSING or older than 3.25"
    tool ninja "$(ninja --version 2>/dev/null)"
    tool g++ "$(g++ --version 2>/dev/null | head -1)"
    tool cuBLAS "$cublas"
    tool cuDNN "${cudnn_root:+$(ls "$cudnn_root"/lib*/libcudnn.so* 2>/dev/null | head -1)}"
    tool compute-sanitizer "$sanitizer"
    tool python3 "$("$python" --version 2>&1 | grep -o 'Python [0-9.]*')"
    tool carry "$(head -1 "$carry/MANIFEST" 2>/dev/null)"
  } >>"$log"
  tail -n "+$first_line" "$log"
  # Where nothing is missing but these, the step goes on: a GPU (dry run), the sanitizer
  # (its own step reports it), the carry (configure says what to do), python3.
  local needed=() m
  for m in "${missing[@]}"; do
    case $m in GPU | compute-sanitizer | carry | python3) ;; *) needed+=("$m") ;; esac
  done
  if [ -n "$cudnn_root" ]; then
    export CUDNN_ROOT="$cudnn_root"
    export LD_LIBRARY_PATH="$cudnn_root/lib:$cudnn_root/lib64:${LD_LIBRARY_PATH:-}"
  fi
  export LD_LIBRARY_PATH="$carry/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
  if [ "${#needed[@]}" -gt 0 ]; then
    RESULT="missing: ${needed[*]}"
    stop_after "the env step found something missing"
    return 1
  fi
  if [ "$have_gpu" -eq 0 ] && [ "$allow_no_gpu" != 1 ]; then
    RESULT="no GPU (nvidia-smi sees none); GPU_CHECK_ALLOW_NO_GPU=1 makes a dry run"
    stop_after "no GPU"
    return 1
  fi
  RESULT="${gpu:-no GPU: dry run}; $(nproc) cores"
  [ "${#missing[@]}" -eq 0 ] || RESULT="$RESULT; missing: ${missing[*]}"
}
