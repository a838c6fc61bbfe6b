#!/usr/bin/env bash
# ksim shrink on a scenario with a known minimal cause (data/shrink/
# known-cause.ini: a follower's power loss as the leader crashes, among ten
# irrelevant faults) keeps exactly those two faults, with --jobs 2 as with
# --jobs 1; minimal.ini fails the same way under ksim run and its capsule
# replays. On a chaos seed in hw mode, the random faults are written out.
# Bad arguments exit 2. Label `slow`: it makes a few hundred short runs.
set -uo pipefail
ksim=$1
src=$2
work=$3
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
known="$src/tests/data/shrink/known-cause.ini"

out=$("$ksim" shrink "$known" --seed 1 --jobs 2 --out "$work/j2" 2>&1) || fail "shrink exited $?: $out"
echo "$out" | tail -5
faults=$(grep '^\[fault ' "$work/j2/minimal.ini" | sort | tr '\n' ' ')
[[ "$faults" == "[fault crash-leader] [fault power-follower] " ]] ||
  fail "kept faults: $faults"
grep -q "^# .*replicas-agree" "$work/j2/minimal.ini" || fail "no header naming the expectation"
grep -q "^#   ksim run '$known' --seed 1" "$work/j2/minimal.ini" || fail "no original command"
out=$("$ksim" run "$work/j2/minimal.ini" --out "$work/j2-run" 2>&1); status=$?
[[ $status == 1 && "$out" == *"replicas-agree: inconsistent_offsets == 0, but"* ]] ||
  fail "minimal.ini under ksim run: exit $status: $out"
out=$("$ksim" replay "$work/j2/capsule.json" --out "$work/j2-replay" 2>&1) ||
  fail "replaying the capsule: $out"
echo "known cause: ok"

"$ksim" shrink "$known" --seed 1 --jobs 1 --out "$work/j1" > /dev/null 2>&1 || fail "--jobs 1"
diff <(grep -v '^#' "$work/j1/minimal.ini") <(grep -v '^#' "$work/j2/minimal.ini") ||
  fail "--jobs 1 and --jobs 2 differ"
echo "jobs 1 = jobs 2: ok"

for args in "--seed x" "" "--seed 1 --expect nope" "--seed 1 --anomaly nope" \
            "--seed 1 --budget 5" "--seed 1 --expect a --anomaly lost_write"; do
  out=$("$ksim" shrink "$known" $args 2>&1); status=$?
  [[ $status == 2 ]] || fail "shrink $args: exit $status: $out"
done
out=$("$ksim" shrink "$src/scenarios/leader-failure.ini" --seed 1 --out "$work/passes" 2>&1)
[[ $? == 2 && "$out" == *"nothing to shrink"* ]] || fail "a passing run: $out"
echo "bad arguments: ok"
