#!/usr/bin/env bash
# scripts/train.sh: installs what ember needs, builds the `ember` tool and trains the
# default model on the default data, writing the memory report of its first steps
# (memory-report.html; docs/memory.md says how to read it). Extra arguments go to
# `ember train` and override the defaults:
#
#   scripts/train.sh                      # the default run
#   scripts/train.sh --epochs 1           # the default run, one epoch
#   scripts/train.sh --device cuda        # on a GPU, where there is one
#   build/apps/ember train --help         # every option
#
# Environment: EMBER_BUILD_DIR (default build/, the `default` preset's folder),
# EMBER_JOBS (compile jobs, default nproc).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/build-cli.sh
build_dir=${EMBER_BUILD_DIR:-build}
app=ember  # the executable (apps/); its CMake target is ember_cli

# ---- THE DEFAULT TRAINING RUN (one line; change the model/data here) ----
defaults=(--model convnet --data fashion-mnist --memory-report memory-report.html)

# A default applies only when the caller did not pass that flag (CLI11 rejects a
# repeated single-value option).
args=()
for ((i = 0; i < ${#defaults[@]}; i += 2)); do
  flag=${defaults[i]}
  given=0
  for a in "$@"; do
    if [ "$a" = "$flag" ] || [[ $a == "$flag="* ]]; then given=1; fi
  done
  [ "$given" -eq 1 ] || args+=("$flag" "${defaults[i + 1]}")
done

exec "$build_dir/apps/$app" train "${args[@]}" "$@"
