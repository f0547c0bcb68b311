#!/usr/bin/env bash
# Installs the Debian packages ember needs to build, test and train.
# Idempotent: packages already present are skipped, apt-get runs only when something is missing.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config
  libeigen3-dev            # CPU tensor math API
  libopenblas0-openmp libopenblas-openmp-dev  # BLAS behind Eigen; OpenMP build shares our thread pool
  catch2                   # tests (v2)
  libcli11-dev             # command-line parsing
  nlohmann-json3-dev       # --json output, safetensors headers
  libbenchmark-dev         # bench/
  zlib1g-dev               # .gz datasets
  libopenmpi-dev openmpi-bin  # dist/: MPI collectives on CPU tensors, mpirun for jobs of several processes
  libomp-dev
  dataset-fashion-mnist    # the default training data
  clang-14 libclang-rt-14-dev  # scripts/fuzz.sh: libFuzzer, ASan and UBSan runtimes (libclang_rt.fuzzer*.a)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "setup: all packages present"
