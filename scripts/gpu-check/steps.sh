# The step runner of scripts/gpu-check.sh (sourced, not run). A check is a plan of steps,
# each with the seconds it should take on a 16-core H100/H200 box (planned) and the most it
# may take (cap). The caps add up to less than the budget, so every step gets its full cap;
# a step also stops at the budget's end if the budget was lowered. Usage:
#
#   plan_step NAME PLANNED_S CAP_S FUNCTION   # declare, in order
#   run_plan TITLE                            # print the plan, run it, print the summary table
#
# A step FUNCTION runs its commands through `capped` (or `capped_at_most S`), appends their
# output to "$log", sets RESULT to a short text, and returns 0 (ok), 124 (time-out) or
# another code (failure). `detail_row NAME TEXT SECONDS` adds an indented row below its own;
# `stop_after "reason"` skips the steps that follow (a failed configure or build).

plan_names=() plan_planned=() plan_caps=() plan_functions=()
rows=()          # "step|result|seconds|planned|cap", printed by print_summary
failed=0
stop_reason=""
step_deadline=0
cap_scale=${cap_scale:-1}  # a dry run on a 2-core machine scales every cap (gpu-check.sh sets it)

plan_step() {
  plan_names+=("$1") plan_planned+=("$2") plan_caps+=("$3") plan_functions+=("$4")
}

sum() { local s=0 v; for v in "$@"; do s=$((s + v)); done; echo "$s"; }

print_plan() {
  local i
  printf '\n%s: plan for a 16-core H100/H200 box, budget %s s\n' "$1" "$budget"
  printf '  %-18s %9s %6s\n' step "planned s" "cap s"
  for i in "${!plan_names[@]}"; do
    printf '  %-18s %9s %6s\n' "${plan_names[$i]}" "${plan_planned[$i]}" "${plan_caps[$i]}"
  done
  printf '  %-18s %9s %6s\n' total "$(sum "${plan_planned[@]}")" "$(sum "${plan_caps[@]}")"
  if [ "$(sum "${plan_caps[@]}")" -gt "$budget" ]; then
    echo "  (the caps add up to more than the budget: the last steps may be cut short or skipped)"
  fi
  [ "$cap_scale" -eq 1 ] || echo "  (dry run: each cap and the budget x $cap_scale, for a ${jobs}-core machine)"
  echo
}

# capped CMD...: runs CMD until the step's deadline; 124 when it had to be stopped.
capped() {
  local left=$((step_deadline - SECONDS))
  [ "$left" -ge 1 ] || return 124
  timeout --kill-after=5 "$left" "$@"
  local rc=$?
  [ "$rc" -eq 137 ] && rc=124
  return "$rc"
}

# capped_at_most S CMD...: as capped, but at most S seconds (one run among several in a step).
capped_at_most() {
  local limit=$(($1 * cap_scale)) saved=$step_deadline rc
  shift
  [ $((SECONDS + limit)) -lt "$step_deadline" ] && step_deadline=$((SECONDS + limit))
  capped "$@"
  rc=$?
  step_deadline=$saved
  return "$rc"
}

step_details=()  # the running step's detail rows, printed below its own
detail_row() { step_details+=("  $1|$2|$3||"); }
stop_after() { stop_reason=$1; }

run_plan() {
  local title=$1 i name t0 rc left cap result
  local start=$SECONDS deadline=$((SECONDS + budget * cap_scale))
  print_plan "$title"
  for i in "${!plan_names[@]}"; do
    name=${plan_names[$i]}
    if [ -n "$stop_reason" ]; then
      rows+=("$name|skipped: $stop_reason|0|${plan_planned[$i]}|${plan_caps[$i]}")
      continue
    fi
    cap=$((plan_caps[i] * cap_scale))
    left=$((deadline - SECONDS))
    if [ "$left" -lt 5 ]; then
      rows+=("$name|skipped: the budget is spent|0|${plan_planned[$i]}|${plan_caps[$i]}")
      failed=$((failed + 1))
      continue
    fi
    [ "$cap" -gt "$left" ] && cap=$left
    echo "== $name (planned ${plan_planned[$i]} s, cap ${cap} s)"
    log="$logs/$name.log"
    [ "$name" = configure ] && log="$logs/build.log"  # one file fewer: the device tool returns 8
    echo "== $name $(date -u +%T)" >>"$log"
    RESULT="" step_details=()
    t0=$SECONDS
    step_deadline=$((SECONDS + cap))
    "${plan_functions[$i]}"
    rc=$?
    result=${RESULT:-ok}
    if [ "$rc" -eq 124 ]; then
      result="TIMEOUT after ${cap} s${RESULT:+: $RESULT}"
    elif [ "$rc" -ne 0 ]; then
      result="FAIL${RESULT:+: $RESULT}"
    fi
    [ "$rc" -eq 0 ] || failed=$((failed + 1))
    echo "   $result ($((SECONDS - t0)) s)"
    rows+=("$name|$result|$((SECONDS - t0))|${plan_planned[$i]}|${plan_caps[$i]}" "${step_details[@]}")
  done
  print_summary "$title" $((SECONDS - start)) | tee "$logs/summary.txt"
  [ "$failed" -eq 0 ]
}

print_summary() {
  local r step result secs planned cap w1=4 w2=6
  for r in "${rows[@]}"; do
    IFS='|' read -r step result _ <<<"$r"
    [ "${#step}" -gt "$w1" ] && w1=${#step}
    [ "${#result}" -gt "$w2" ] && w2=${#result}
  done
  printf '\n%s: %s step(s) failed, %s s in all (budget %s s)\n' "$1" "$failed" "$2" "$budget"
  printf "%-${w1}s | %-${w2}s | %6s | %4s | %4s\n" step result "time s" plan cap
  printf "%-${w1}s-+-%-${w2}s-+-%6s-+-%4s-+-%4s\n" "" "" "" "" "" | tr ' ' '-'
  for r in "${rows[@]}"; do
    IFS='|' read -r step result secs planned cap <<<"$r"
    printf "%-${w1}s | %-${w2}s | %6s | %4s | %4s\n" "$step" "$result" "$secs" "$planned" "$cap"
  done
  [ "$cap_scale" -eq 1 ] || echo "dry run: times are this ${jobs}-core machine's (load $(cut -d' ' -f1 /proc/loadavg)); plan and cap are a 16-core H100/H200 box's"
  echo "logs: $logs"
}
