# scripts/gpu-check.sh --prepare (sourced), run HERE, where scripts/setup.sh installed the
# Debian packages: copies what the GPU machine's build needs and lacks into .device-carry/.
#
# Eigen, Catch2 (catch.hpp, Catch.cmake, CatchAddTests.cmake), CLI11, nlohmann-json, Google
# Benchmark (headers, CMake package, shared library: Debian ships no static one) and zlib
# (headers, libz.a). Not OpenBLAS: Debian's libopenblas.a needs libgfortran, so the GPU build
# uses Eigen's own GEMM (EMBER_USE_BLAS=OFF; CPU speed does not matter there). Not cuDNN: the
# env step finds it on the GPU machine (the CUDA toolkit, or PyTorch's nvidia/cudnn package).
# And Fashion-MNIST (Debian's dataset-fashion-mnist, 30 MiB), which the train step trains on.

prepare() {
  local multiarch=lib/x86_64-linux-gnu so
  set -e
  scripts/setup.sh
  rm -rf "$carry"
  mkdir -p "$carry/include/eigen3" "$carry/cmake" "$carry/$multiarch/cmake"
  cp -r /usr/include/eigen3/Eigen "$carry/include/eigen3/"  # unsupported/ is not used
  cp -r /usr/include/catch2 /usr/include/CLI /usr/include/nlohmann /usr/include/benchmark "$carry/include/"
  cp /usr/include/zlib.h /usr/include/zconf.h "$carry/include/"
  cp /usr/lib/cmake/Catch2/Catch.cmake /usr/lib/cmake/Catch2/CatchAddTests.cmake "$carry/cmake/"
  # benchmark's CMake package finds its files relative to itself: mirror /usr's layout.
  cp -r /usr/$multiarch/cmake/benchmark "$carry/$multiarch/cmake/"
  so=$(readlink -f /usr/$multiarch/libbenchmark.so)
  # Real copies under every name (links may not survive the trip).
  cp "$so" "$carry/$multiarch/$(basename "$so")"
  cp "$so" "$carry/$multiarch/$(objdump -p "$so" | awk '/SONAME/ {print $2}')"
  cp "$so" "$carry/$multiarch/libbenchmark.so"
  cp /usr/$multiarch/libbenchmark_main.a /usr/$multiarch/libz.a "$carry/$multiarch/"
  mkdir -p "$carry/fashion-mnist"
  cp -L /usr/share/datasets/fashion-mnist/*-ubyte.gz "$carry/fashion-mnist/"
  {
    echo "prepared $(date -u +%FT%TZ) by scripts/gpu-check.sh --prepare"
    dpkg-query -W libeigen3-dev catch2 libcli11-dev nlohmann-json3-dev libbenchmark-dev zlib1g-dev dataset-fashion-mnist
  } >"$carry/MANIFEST"
  set +e

  # What the device tool sends: tracked and untracked-not-ignored files, and the carry.
  local tree_kb carry_kb
  tree_kb=$(git ls-files -co --exclude-standard -z | du -c -k --files0-from=- 2>/dev/null | tail -1 | cut -f1)
  carry_kb=$(du -s -k "$carry" | cut -f1)
  echo "gpu-check: carry ready in $carry: ${carry_kb} KiB"
  echo "gpu-check: the call sends ${tree_kb} KiB of working tree + ${carry_kb} KiB of carry" \
    "= $(((tree_kb + carry_kb) / 1024)) MiB (the device tool's limit: 64 MiB; ours: 56)"
  if [ $((tree_kb + carry_kb)) -gt $((56 * 1024)) ]; then
    echo "gpu-check: over 56 MiB: look for large untracked files" >&2
    return 1
  fi
  echo "gpu-check: next, here: scripts/gpu-check.sh --dry-run; there:" \
    "run(command=\"scripts/gpu-check.sh\", carry=[\".device-carry\"], timeout_s=480)"
}
