#!/usr/bin/env bash
# Coverage marks: a run's summary.json lists the marks it reached and its
# report shows them; a sweep counts per mark the seeds that reached it and
# names those none reached; --until-marks draws seeds until its budget, the
# same ones with 1 job and 2; swarm = true is deterministic and draws other
# faults than without it.
set -uo pipefail
ksim=$1 library=$2 out=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$out" && mkdir -p "$out"

"$ksim" run "$library/unclean-election.ini" --out "$out/run" >/dev/null || fail "ksim run"
python3 - "$out/run/summary.json" <<'PY' || fail "summary.json lacks the marks"
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
marks = {r["label"]: r["marks"] for r in runs}
assert marks["unclean.leader.election.enable=true"]["unclean_election"] >= 1, marks
assert "unclean_election" not in marks["unclean.leader.election.enable=false"], marks
assert marks["unclean.leader.election.enable=false"]["offline_partition"] >= 1, marks
PY
grep -q "Coverage marks unclean.leader.election.enable=true reached: unclean_election" \
  "$out/run/report.md" || fail "report.md does not show the marks"

stdout=$("$ksim" sweep "$library/unclean-election.ini" --seeds 1..2 --jobs 2 --out "$out/sweep") ||
  fail "the sweep"
grep -qE "^  unclean_election +2$" <<<"$stdout" || fail "the mark table: $stdout"
grep -q "no seed reached:.* fenced_zombie_write" <<<"$stdout" || fail "unreached marks: $stdout"
grep -q '"unclean_election":2' "$out/sweep/sweep.json" || fail "sweep.json lacks the marks"

for jobs in 1 2; do
  "$ksim" sweep "$library/unclean-election.ini" --seeds 1..100 --until-marks --budget 3 \
    --jobs $jobs --recheck 0 --out "$out/until$jobs" >/dev/null || fail "--until-marks, $jobs jobs"
  [ "$(wc -l < "$out/until$jobs/sweep.jsonl")" -eq 3 ] || fail "--budget 3 ran other than 3 seeds"
done
cmp "$out/until1/sweep.jsonl" "$out/until2/sweep.jsonl" || fail "--until-marks depends on --jobs"
message=$("$ksim" sweep "$library/unclean-election.ini" --seeds 1..9 --budget 3 2>&1)
[ $? -eq 2 ] && grep -q "goes with --until-marks" <<<"$message" || fail "--budget alone: $message"
message=$("$ksim" sweep "$library/unclean-election.ini" --seeds 1..9 --until-marks --budget 3x 2>&1)
[ $? -eq 2 ] && grep -q "takes a number of seeds" <<<"$message" || fail "--budget 3x: $message"
message=$("$ksim" sweep "$library/unclean-election.ini" --seeds 1..9 --recheck 101 2>&1)
[ $? -eq 2 ] && grep -q "percentage 0..100" <<<"$message" || fail "--recheck 101: $message"

fingerprint() { "$ksim" run "$library/chaos.ini" --seed 4 --out "$out/chaos" "$@" |
  grep -o 'fingerprint [0-9a-f]*'; }
plain=$(fingerprint) swarm1=$(fingerprint --set random-faults:swarm=true)
swarm2=$(fingerprint --set random-faults:swarm=true)
[ -n "$swarm1" ] && [ "$swarm1" = "$swarm2" ] || fail "swarm runs differ: $swarm1 $swarm2"
[ "$plain" != "$swarm1" ] || fail "swarm = true ran the same faults as without it"
echo "marks are listed per run and per sweep; --until-marks keeps its budget; swarm is deterministic"
