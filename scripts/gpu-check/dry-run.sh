#!/usr/bin/env bash
# scripts/gpu-check/dry-run.sh: what `scripts/gpu-check.sh --dry-run` runs, HERE, as root, in a
# mount namespace of its own (unshare), so nothing outside it sees the changes below.
#
# It hides the system's copies of every package .device-carry/ holds (empty folders and files
# mounted over them) and lays cuDNN out as PyTorch's wheel does (site-packages/nvidia/cudnn
# with include/ and lib/libcudnn.so.9 only), hiding the CUDA toolkit's copy. Then it runs the
# main check and the --peers check without a GPU in a fresh build folder: configure and build
# can only have succeeded from the carry, and every step prints its time next to its plan.
#
#   scripts/gpu-check.sh --prepare && scripts/gpu-check.sh --dry-run
#
# Environment: GPU_CHECK_BUILD_DIR (default build-gpu-check-dry, emptied first); the others
# as scripts/gpu-check.sh reads them.
set -uo pipefail
self=$(readlink -f "${BASH_SOURCE[0]}")
cd "$(dirname "$self")/../.." || exit 1
# Re-run itself in a mount namespace of its own (unshare), where the mounts below stay.
namespace=$(readlink /proc/self/ns/mnt)
if [ -z "${GPU_CHECK_OUTER_NAMESPACE:-}" ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "gpu-check --dry-run: needs root, to hide the system's packages in a mount namespace of its own" >&2
    exit 2
  fi
  export GPU_CHECK_OUTER_NAMESPACE=$namespace
  exec unshare --mount --propagation private "$self" "$@"
elif [ "$namespace" = "$GPU_CHECK_OUTER_NAMESPACE" ]; then
  echo "gpu-check --dry-run: unshare gave no mount namespace of its own" >&2
  exit 2
fi
multiarch=/usr/lib/x86_64-linux-gnu
scratch=$(mktemp -d)
mkdir "$scratch/empty-dir" && : >"$scratch/empty-file"
mounts=()  # undone on exit, last first
cleanup() {
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; --i)); do umount "${mounts[$i]}"; done
  rm -rf "$scratch"
}
trap cleanup EXIT
bind() { mount --bind "$1" "$2" || exit 1; mounts+=("$2"); }

# hide PATH...: an empty folder or an empty file mounted over each.
hide() {
  local path
  for path in "$@"; do
    if [ -d "$path" ]; then bind "$scratch/empty-dir" "$path"
    elif [ -f "$path" ]; then bind "$scratch/empty-file" "$path"
    fi
  done
}

# hide_in DIR PATTERN: DIR seen without its entries named PATTERN: a folder of links to the
# others is mounted over it (the links reach the originals through a second mount).
hide_in() {
  local dir=$1 pattern=$2 n=${#mounts[@]} entry
  mkdir "$scratch/original-$n" "$scratch/view-$n"
  bind "$dir" "$scratch/original-$n"
  for entry in "$scratch/original-$n"/*; do
    # shellcheck disable=SC2053  # PATTERN is a glob
    [[ "$(basename "$entry")" == $pattern ]] || ln -s "$entry" "$scratch/view-$n/"
  done
  bind "$scratch/view-$n" "$dir"
}

# The carried packages (scripts/gpu-check/prepare.sh copies them). An empty zlib.h or libz.a
# left where the carry's should have been found fails the build, as an absent one would.
hide /usr/include/eigen3 /usr/include/catch2 /usr/include/CLI /usr/include/nlohmann \
  /usr/include/benchmark /usr/include/zlib.h /usr/include/zconf.h /usr/lib/cmake/Catch2 \
  $multiarch/cmake/benchmark "$(readlink -f $multiarch/libbenchmark.so)" $multiarch/libbenchmark_main.a \
  $multiarch/libz.a

# cuDNN as PyTorch's wheel has it, and not in the CUDA toolkit: the env step must find it
# through python3.
site="$scratch/site-packages"
mkdir -p "$site/nvidia/cudnn/include" "$site/nvidia/cudnn/lib"
cp /usr/local/cuda/include/cudnn*.h "$site/nvidia/cudnn/include/"
cp "$(readlink -f /usr/local/cuda/lib64/libcudnn.so.9)" "$site/nvidia/cudnn/lib/libcudnn.so.9"
hide_in /usr/local/cuda/include 'cudnn*'
hide_in /usr/local/cuda/lib64 'libcudnn*'
export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
unset CUDNN_ROOT

if [ -e /usr/include/eigen3/Eigen ] || [ -s /usr/include/zlib.h ] || [ -e /usr/local/cuda/include/cudnn.h ] ||
  [ -e /usr/local/cuda/lib64/libcudnn.so.9 ]; then
  echo "gpu-check --dry-run: the system's copies are still visible" >&2
  exit 1
fi
echo "gpu-check --dry-run: the system's copies of the carried packages hidden; cuDNN only in $site"

export GPU_CHECK_ALLOW_NO_GPU=1 GPU_CHECK_BUILD_DIR=${GPU_CHECK_BUILD_DIR:-build-gpu-check-dry}
rm -rf "$GPU_CHECK_BUILD_DIR"
scripts/gpu-check.sh
main_rc=$?
scripts/gpu-check.sh --peers  # reuses the build, as on a machine still warm from the main check
peers_rc=$?
echo "gpu-check --dry-run: main check rc $main_rc, --peers rc $peers_rc"
[ "$main_rc" -eq 0 ] && [ "$peers_rc" -eq 0 ]
