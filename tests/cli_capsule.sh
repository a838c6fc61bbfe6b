#!/usr/bin/env bash
# The replay capsule and the determinism self-check, as a user meets them:
# `ksim run` writes DIR/capsule.json and `ksim replay` reruns it to the same
# fingerprints (exit 0); a capsule whose fingerprint is edited replays to a
# difference naming the run (exit 1); one made by another commit is refused,
# naming both commits (exit 2), unless --force; a bad capsule file is refused
# with a message (exit 2), never a crash. `ksim run --check-determinism`
# passes on library scenarios. A sweep's failing seed gets a capsule that
# replays.
set -uo pipefail
ksim=$1
src=$2
work=$3
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }

"$ksim" run "$src/scenarios/leader-failure.ini" --out "$work/run" > "$work/run.txt" ||
  fail "ksim run exited $?: $(cat "$work/run.txt")"
capsule="$work/run/capsule.json"
[[ -s "$capsule" ]] || fail "no $capsule"
grep -q "ksim replay '$capsule'" "$work/run.txt" || fail "run prints no replay line"
out=$("$ksim" replay "$capsule" --out "$work/replay") || fail "replay exited $?: $out"
[[ "$out" == *"all 2 fingerprints match"* ]] || fail "replay says: $out"
[[ -s "$work/replay/capsule.json" ]] || fail "the replay wrote no capsule"
echo "round trip: ok"

# A scenario file changed after the run does not matter: the capsule holds its text.
cp "$src/scenarios/leader-failure.ini" "$work/copy.ini"
"$ksim" run "$work/copy.ini" --seed 5 --set acks=1 --out "$work/copy" > /dev/null
echo "[nonsense" >> "$work/copy.ini"
out=$("$ksim" replay "$work/copy/capsule.json" --out "$work/copy-replay") ||
  fail "replay of an edited file's capsule exited $?: $out"
echo "embedded text and --set: ok"

# An edited fingerprint: exit 1, naming the run.
sed 's/"fingerprint" : "[0-9a-f]*"/"fingerprint" : "0000000000000000"/' "$capsule" > "$work/differs.json"
out=$("$ksim" replay "$work/differs.json" --out "$work/differs" 2>&1); status=$?
[[ $status == 1 ]] || fail "edited fingerprint: exit $status, want 1: $out"
[[ "$out" == *"run 1 [acks=1]: fingerprint "*"but the capsule recorded 0000000000000000"* ]] ||
  fail "edited fingerprint says: $out"
echo "fingerprint mismatch: ok"

# Another commit: refused, naming both; --force replays.
sed 's/"git_commit" : "[^"]*"/"git_commit" : "feedfacecafe"/' "$capsule" > "$work/other.json"
out=$("$ksim" replay "$work/other.json" --out "$work/other" 2>&1); status=$?
[[ $status == 2 ]] || fail "other commit: exit $status, want 2: $out"
mine=$("$ksim" --version | sed 's/.*(commit \(.*\))/\1/')
[[ "$out" == *"commit feedfacecafe"*"commit $mine"*"--force"* ]] || fail "other commit says: $out"
out=$("$ksim" replay "$work/other.json" --force --out "$work/other" 2>&1) ||
  fail "--force exited $?: $out"
echo "commit mismatch: ok"

# Bad capsules.
printf '' > "$work/empty.json"
printf 'not json' > "$work/text.json"
printf '{"format": "ksim-capsule", "format_version": 1}' > "$work/partial.json"
sed 's/\\nname = leader-failure/\\nname = other/' "$capsule" > "$work/edited-text.json"
head -c 300 "$capsule" > "$work/cut.json"
for bad in empty text partial edited-text cut; do
  out=$("$ksim" replay "$work/$bad.json" --out "$work/bad" 2>&1); status=$?
  [[ $status == 2 ]] || fail "$bad.json: exit $status, want 2: $out"
  [[ "$out" == *"$work/$bad.json: not a valid ksim capsule"* ]] || fail "$bad.json says: $out"
done
for bad in /nonexistent.json "$work"; do
  out=$("$ksim" replay "$bad" 2>&1); status=$?
  [[ $status == 2 ]] || fail "$bad: exit $status, want 2: $out"
done
out=$("$ksim" replay 2>&1); [[ $? == 2 ]] || fail "no capsule: $out"
echo "bad capsules: ok"

# The determinism self-check passes on library scenarios.
for scenario in leader-failure network-partition; do
  out=$("$ksim" run "$src/scenarios/$scenario.ini" --check-determinism --out "$work/det" 2>&1) ||
    fail "$scenario --check-determinism exited $?: $out"
  [[ "$out" == *"made twice"* ]] || fail "$scenario: not made twice: $out"
  [[ "$out" != *"determinism:"* ]] || fail "$scenario: $out"
done
echo "determinism check: ok"

# A sweep's failing seed gets a capsule that replays to the same run.
cat > "$work/failing.ini" <<'INI'
[scenario]
name = failing
duration = 3s
quiet = 2s
[topic orders]
partitions = 1
replication.factor = 3
[producer writer]
topic = orders
workload.rate = 50
[expect]
impossible = produce.acked == 0
INI
out=$("$ksim" sweep "$work/failing.ini" --seeds 1..2 --jobs 1 --out "$work/sweep" 2>&1)
[[ $? == 1 ]] || fail "the failing sweep: $out"
[[ "$out" == *"ksim replay '$work/sweep/seed-2/capsule.json'"* ]] || fail "sweep says: $out"
out=$("$ksim" replay "$work/sweep/seed-2/capsule.json" --out "$work/sweep-replay") ||
  fail "replaying the sweep's seed: $out"
echo "sweep capsule: ok"
