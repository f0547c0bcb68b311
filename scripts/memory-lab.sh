#!/usr/bin/env bash
# scripts/memory-lab.sh: installs what ember needs, builds the `ember` tool and runs the
# memory lab (`ember lab`, apps/lab_command.h): one measured experiment per memory remedy,
# written to docs/lab/README.md with its SVG pictures. About a minute on a 2-core CPU.
# Extra arguments go to `ember lab`:
#
#   scripts/memory-lab.sh                          # rewrites docs/lab/
#   scripts/memory-lab.sh --out /tmp/lab --threads 1
#
# Environment: EMBER_BUILD_DIR (default build/), EMBER_JOBS (compile jobs, default nproc).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/build-cli.sh
build_dir=${EMBER_BUILD_DIR:-build}
args=("$@")  # a default applies only when the caller did not pass that flag
[[ " $* " == *" --out "* ]] || args+=(--out docs/lab)
[[ " $* " == *" --threads "* ]] || args+=(--threads 2)
"$build_dir/apps/ember" lab "${args[@]}"
