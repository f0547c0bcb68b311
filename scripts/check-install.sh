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
# ember::ember), build it and run its CTest (every example: the README's training loop, the
# libtorch ports, the planner; seconds each),
# once as found through CMAKE_PREFIX_PATH and once more with
# CMAKE_FIND_PACKAGE_PREFER_CONFIG=ON; configure, build and run
# scripts/install-consumer/ (a project with its own FindOpenBLAS and FindCuDNN that
# finds ember twice, from two folders) under each of: CMAKE_PREFIX_PATH, ember_DIR,
# CMAKE_FIND_PACKAGE_PREFER_CONFIG=ON, CMAKE_FIND_PACKAGE_TARGETS_GLOBAL=ON; compile and
# link scripts/install-consumer/smoke.cpp with nothing but `pkg-config --cflags --libs
# ember` and run it. One install serves every step. The temporary folder is removed when
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

# configure_against_prefix SOURCE BINARY CMAKE-ARGS...: configures a project of its own
# against the installed ember and checks that the ember it found is that one.
configure_against_prefix() {
  local source=$1 binary=$2
  shift 2
  rm -rf "$binary"
  cmake -S "$source" -B "$binary" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "$@" \
        >"$binary.configure.log" 2>&1 || { cat "$binary.configure.log" >&2; return 1; }
  # It must be the installed package, not some other ember CMake can find.
  local ember_dir
  ember_dir=$(sed -n 's/^ember_DIR:PATH=//p' "$binary/CMakeCache.txt")
  case "$ember_dir" in
    "$prefix"/*) echo "found ember at $ember_dir" ;;
    *) echo "check-install: $source found ember at '$ember_dir', not under $prefix" >&2; return 1 ;;
  esac
}

# build_and_test BINARY: builds a configured project and runs its CTest.
build_and_test() {
  cmake --build "$1" -j "$jobs"
  ctest --test-dir "$1" --output-on-failure --no-tests=error
}

t0=$SECONDS
step "examples/ as a project of its own: find_package(ember CONFIG REQUIRED)"
configure_against_prefix "$root/examples" "$work/examples" -DCMAKE_PREFIX_PATH="$prefix"
build_and_test "$work/examples"
step "examples/ again, with CMAKE_FIND_PACKAGE_PREFER_CONFIG=ON (OpenBLAS has a package config of its own)"
configure_against_prefix "$root/examples" "$work/examples-prefer-config" -DCMAKE_PREFIX_PATH="$prefix" \
                         -DCMAKE_FIND_PACKAGE_PREFER_CONFIG=ON
build_and_test "$work/examples-prefer-config"
examples_s=$((SECONDS - t0))

t0=$SECONDS
consumer=$root/scripts/install-consumer
config_dir=$(dirname "$(find "$prefix" -name emberConfig.cmake | head -1)")
for setting in CMAKE_PREFIX_PATH ember_DIR CMAKE_FIND_PACKAGE_PREFER_CONFIG CMAKE_FIND_PACKAGE_TARGETS_GLOBAL; do
  case $setting in
    CMAKE_PREFIX_PATH) args=(-DCMAKE_PREFIX_PATH="$prefix") ;;
    ember_DIR) args=(-Dember_DIR:PATH="$config_dir") ;;
    *) args=(-DCMAKE_PREFIX_PATH="$prefix" "-D$setting=ON") ;;
  esac
  step "scripts/install-consumer/ (its own FindOpenBLAS and FindCuDNN; ember found twice, from two folders): ${args[*]}"
  configure_against_prefix "$consumer" "$work/consumer-$setting" "${args[@]}"
  build_and_test "$work/consumer-$setting"
done
consumer_s=$((SECONDS - t0))

t0=$SECONDS
step "a program linked through pkg-config"
export PKG_CONFIG_PATH="$(dirname "$(find "$prefix" -name ember.pc | head -1)")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
flags=$(pkg-config --cflags --libs ember)
echo "pkg-config --cflags --libs ember: $flags"
# shellcheck disable=SC2086  # the flags are words
"${CXX:-c++}" -std=c++17 -O1 "$consumer/smoke.cpp" $flags -o "$work/pkg_config_smoke"
"$work/pkg_config_smoke"
pkg_config_s=$((SECONDS - t0))

echo
echo "== check-install: passed: build ${build_s} s, install ${install_s} s, examples ${examples_s} s, consumer settings ${consumer_s} s, pkg-config ${pkg_config_s} s; total $((SECONDS - start)) s wall"
