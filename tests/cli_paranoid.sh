#!/usr/bin/env bash
# The run-time checks from the outside: `ksim run --paranoid` and the scenario
# key pass on a sound run with the fingerprint of the unchecked run; a check
# that fails (injected by tests/paranoid_inject.c, which no scenario can do)
# stops the run with exit status 3 and a message naming the failed check,
# the event, the virtual time, the seed and the replay command; and the sweep
# rejects a bad --paranoid-sample.
set -uo pipefail
ksim=$1 inject=$2 data=$3 out=$4
scenario=$data/good-paranoid.ini
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$out" && mkdir -p "$out"

fp() { sed -n 's/.*fingerprint \([0-9a-f]*\).*/\1/p' "$1"; }
"$ksim" run "$scenario" --set paranoid=false --out "$out/plain" > "$out/plain.txt" || true
"$ksim" run "$scenario" --set paranoid=false --paranoid --out "$out/flag" > "$out/flag.txt" || true
grep -q "checks    every invariant after every event" "$out/flag.txt" || fail "no banner line"
grep -q ", checked$" "$out/flag.txt" || fail "the run is not marked checked"
[ -n "$(fp "$out/plain.txt")" ] || fail "no fingerprint"
[ "$(fp "$out/plain.txt")" = "$(fp "$out/flag.txt")" ] || fail "--paranoid changed the fingerprint"

"$inject" "$scenario" 4 1200 > "$out/inject.out" 2> "$out/inject.err"
status=$?
cat "$out/inject.err"
[ "$status" -eq 3 ] || fail "exit status $status, expected 3"
for want in \
    "ksim: assertion failed: sim_world_events(world) != event (" \
    "invariant violated: sim_world_events(world) != event (" \
    "paranoid_inject.c:" \
    "found by the check after event 1200 at " \
    "virtual time" \
    "seed 4, checked after every event" \
    "replay        ksim run $scenario --seed 4 --paranoid" \
    "exit status 3"; do
    grep -qF -- "$want" "$out/inject.err" || fail "the report lacks '$want'"
done
grep -qE "event 1200 at [0-9]+\.[0-9]{9} s( on [a-z0-9-]+)?: [a-z_]+ node=" "$out/inject.err" ||
    fail "the event is not named as the trace names it"
[ ! -s "$out/inject.out" ] || fail "the run went on after the violation"

"$ksim" sweep "$scenario" --seeds 1..2 --paranoid-sample 101 --out "$out/sweep" \
    > /dev/null 2> "$out/sweep.err"
[ $? -eq 2 ] || fail "--paranoid-sample 101 accepted"
grep -q "0..100" "$out/sweep.err" || fail "no message for --paranoid-sample 101"
echo "checked runs keep their fingerprint; a violation stops the run with status 3 and its replay"
