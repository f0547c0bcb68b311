#!/usr/bin/env bash
# scripts/check-install.sh: checks that an installed ember builds programs the way a
# user builds them.
#
#   scripts/check-install.sh build    # an existing build folder (CI passes build/)
#   scripts/check-install.sh          # configures and builds build-install-check/ first
#
# Steps: bring the build folder up to date (a no-op when it is); `cmake --install` it
# into a temporary prefix; run the installed `ember` tool; configure examples/ as a
# project of its own against that prefix (find_package(ember CONFIG REQUIRED), linking
# ember::ember), build it and run its CTest (the README's training loop, a few seconds);
# compile and link scripts/pkg_config_smoke.cpp with nothing but
# `pkg-config --cflags --libs ember` and run it. The temporary folder is removed when
# every step passed and kept, and named, when one failed. Re-running is safe.
#
# Environment:
#   EMBER_JOBS    parallel compile jobs (default: nproc)
#   EMBER_PRESET  preset of the build folder it configures itself (default: default,
#                 which compiles the CUDA backend where nvcc exists)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
start=$SECONDS
jobs=${EMBER_JOBS:-$(nproc)}
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

step() { echo; echo "== check-install: $*"; }

build=${1:-}
if [ -z "$build" ]; then
  build=build-install-check
  step "configure $build (preset ${EMBER_PRESET:-default}, no tests or benchmarks)"
  cmake --preset "${EMBER_PRESET:-default}" -B "$build" -DEMBER_TESTS=OFF -DEMBER_BENCH=OFF
fi
[ -f "$build/CMakeCache.txt" ] || { echo "check-install: $build is not a configured build folder" >&2; exit 2; }
build=$(cd "$build" && pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/ember-check-install.XXXXXX")
prefix=$work/prefix
trap 'rc=$?; if [ $rc -eq 0 ]; then rm -rf "$work"; else echo "check-install: FAILED (rc $rc); files kept in $work" >&2; fi' EXIT

t0=$SECONDS
step "build $build"
cmake --build "$build" -j "$jobs"
build_s=$((SECONDS - t0))

t0=$SECONDS
step "install into $prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
echo "$(grep -c 'Installing:' "$work/install.log") files; $(cd "$prefix" && find . -name '*.cmake' -o -name '*.pc' -o -name '*.a' | sort | tr '\n' ' ')"
"$prefix/bin/ember" --help >/dev/null
echo "installed bin/ember runs"
install_s=$((SECONDS - t0))

t0=$SECONDS
step "examples/ as a project of its own: find_package(ember CONFIG REQUIRED)"
examples=$work/examples
cmake -S "$root/examples" -B "$examples" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$prefix" >"$work/examples-configure.log"
# It must be the installed package, not some other ember CMake can find.
ember_dir=$(sed -n 's/^ember_DIR:PATH=//p' "$examples/CMakeCache.txt")
case "$ember_dir" in
  "$prefix"/*) echo "found ember at $ember_dir" ;;
  *) echo "check-install: examples/ found ember at '$ember_dir', not under $prefix" >&2; exit 1 ;;
esac
cmake --build "$examples" -j "$jobs"
ctest --test-dir "$examples" --output-on-failure --no-tests=error
examples_s=$((SECONDS - t0))

t0=$SECONDS
step "a program linked through pkg-config"
export PKG_CONFIG_PATH="$(dirname "$(find "$prefix" -name ember.pc | head -1)")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
flags=$(pkg-config --cflags --libs ember)
echo "pkg-config --cflags --libs ember: $flags"
# shellcheck disable=SC2086  # the flags are words
"${CXX:-c++}" -std=c++17 -O1 "$root/scripts/pkg_config_smoke.cpp" $flags -o "$work/pkg_config_smoke"
"$work/pkg_config_smoke"
pkg_config_s=$((SECONDS - t0))

echo
echo "== check-install: passed: build ${build_s} s, install ${install_s} s, examples ${examples_s} s, pkg-config ${pkg_config_s} s; total $((SECONDS - start)) s wall"
