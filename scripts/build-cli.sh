#!/usr/bin/env bash
# scripts/build-cli.sh: installs what ember needs (scripts/setup.sh), configures the
# `default` preset if the build folder has none yet, and builds the `ember` tool
# (CMake target ember_cli) into $EMBER_BUILD_DIR/apps/ember. scripts/train.sh and
# scripts/memory-lab.sh start with it.
#
# Environment: EMBER_BUILD_DIR (default build/, the `default` preset's folder),
# EMBER_JOBS (compile jobs, default nproc).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/setup.sh

build_dir=${EMBER_BUILD_DIR:-build}
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  cmake --preset default -B "$build_dir"
fi
cmake --build "$build_dir" -j "${EMBER_JOBS:-$(nproc)}" --target ember_cli
