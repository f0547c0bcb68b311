# The configure and build steps of scripts/gpu-check.sh (sourced). Configure uses only what
# `--prepare` carried for the third-party packages; build makes only the targets a check
# names (build_targets), on every core.

# What --prepare puts in the carry; configure refuses to start without any of it.
carry_files=(MANIFEST include/eigen3/Eigen/Core include/catch2/catch.hpp include/CLI/CLI.hpp
             include/nlohmann/json.hpp include/benchmark/benchmark.h include/zlib.h
             cmake/Catch.cmake cmake/CatchAddTests.cmake
             lib/x86_64-linux-gnu/cmake/benchmark/benchmarkConfig.cmake lib/x86_64-linux-gnu/libz.a
             fashion-mnist/train-images-idx3-ubyte.gz fashion-mnist/t10k-labels-idx1-ubyte.gz)
# The cache entries that must point into the carry once configure has run (and cuDNN's into
# the env step's cudnn_root: headers and library from one place).
carried_cache_entries=(EIGEN3_INCLUDE_DIR CATCH2_INCLUDE_DIR CLI11_INCLUDE_DIR NLOHMANN_INCLUDE_DIR
                       ZLIB_INCLUDE_DIR ZLIB_LIBRARY_RELEASE benchmark_DIR EMBER_CATCH_CMAKE)

ninja_jobs() { cat "$build/.ninja_log" 2>/dev/null | wc -l; }  # one line per job run (and one header)
cache_value() { sed -n "s|^$1:[A-Z]*=||p" "$build/CMakeCache.txt"; }

step_configure() {
  local f absent=()
  for f in "${carry_files[@]}"; do [ -e "$carry/$f" ] || absent+=("$f"); done
  if [ "${#absent[@]}" -gt 0 ]; then
    RESULT="no .device-carry/${absent[0]}: run scripts/gpu-check.sh --prepare, send carry=[\".device-carry\"]"
    echo "$RESULT" >>"$log"
    stop_after "configure failed"
    return 1
  fi
  capped cmake --preset gpu -B "$build" \
    -DCMAKE_PREFIX_PATH="$carry" \
    -DEMBER_CATCH_CMAKE="$carry/cmake/Catch.cmake" \
    -DEMBER_USE_BLAS=OFF \
    -DCMAKE_CUDA_ARCHITECTURES="$cuda_arch" \
    ${cudnn_root:+-DCUDNN_ROOT="$cudnn_root"} >>"$log" 2>&1
  local rc=$?
  if [ "$rc" -ne 0 ]; then
    grep -m1 -A6 'CMake Error' "$log"
    RESULT="cmake failed (build.log)"
    stop_after "configure failed"
    return "$rc"
  fi
  local entry value outside=()
  for entry in "${carried_cache_entries[@]}"; do
    value=$(cache_value "$entry")
    [[ "$value" == "$carry"/* ]] || outside+=("$entry=$value")
  done
  for entry in EMBER_CUDNN_INCLUDE_DIR EMBER_CUDNN_LIBRARY; do
    value=$(cache_value "$entry")
    [[ "$value" == "$cudnn_root"/* ]] || outside+=("$entry=$value")
  done
  if [ "${#outside[@]}" -gt 0 ]; then
    RESULT="found elsewhere than the carry and $cudnn_root: ${outside[*]}"
    stop_after "configure failed"
    return 1
  fi
  RESULT="third-party packages from the carry; cuDNN $(cache_value EMBER_CUDNN_LIBRARY); sm_$cuda_arch"
}

# Sets children_cpu to the seconds of CPU this shell's finished children have used (user +
# system). `times` must run in this shell: a $(...) subshell has no such children.
read_children_cpu() {
  times >"$build/times.txt"
  children_cpu=$(awk 'NR == 2 {
    n = split($0, t, " "); s = 0
    for (i = 1; i <= n; ++i) { split(t[i], ms, "m"); s += ms[1] * 60 + ms[2] }
    printf "%d", s }' "$build/times.txt")
}

step_build() {
  local cpu0 jobs0 rc cpu_s built
  read_children_cpu
  cpu0=$children_cpu
  jobs0=$(ninja_jobs)
  # -k 0: one failed build lists every error, not only the first jobs' (a device call is dear)
  capped cmake --build "$build" -j "$jobs" --target "${build_targets[@]}" -- -k 0 >>"$log" 2>&1
  rc=$?
  read_children_cpu
  cpu_s=$((children_cpu - cpu0))
  built=$(($(ninja_jobs) - jobs0))
  if [ "$rc" -ne 0 ]; then
    grep -m3 -B2 -A10 'error' "$log" | tail -30
    echo "every error (build.log):"; grep -E ': (fatal )?error' "$log" | sort -u | head -40
    stop_after "the build failed"
  fi
  RESULT="${build_targets[*]}: $built jobs, $cpu_s CPU-s"
  # A 16-core box should take a sixteenth of the CPU time, times 1.5 for slower server cores
  # and the serial tail (the last links): the build's planned time comes from this figure.
  [ "$dry_run" -eq 1 ] && RESULT="$RESULT (on 16 cores ~$((cpu_s * 3 / 32 + 1)) s)"
  return "$rc"
}
