#!/usr/bin/env bash
# A bounded KRaft metadata log, end to end (scenarios/kraft-snapshot.ini),
# checked after every event (--paranoid, the quorum's snapshot invariants
# among them):
# - without snapshots (Kafka's default threshold) no broker loads one and no
#   controller moves its log start offset;
# - with them, the controllers clean their logs (log start offset past 0)
#   before broker 3 comes back at 120 s, and broker 3 comes back through a
#   snapshot (FetchSnapshot);
# - both runs keep every acknowledged record (the same durability verdict).
set -uo pipefail
ksim=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

"$ksim" run "$source_dir/scenarios/kraft-snapshot.ini" --paranoid --trace \
  --out "$work/o" >/dev/null || fail "kraft-snapshot --paranoid: expectations or invariants"
python3 - "$work/o/summary.json" <<'PY' || fail "kraft-snapshot: the two runs' verdicts differ"
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
assert len(runs) == 2
for r in runs:
    assert r["invariant_violations"] == 0, r["label"]
    assert r["anomalies"]["lost_write"] == 0, r["label"]
    assert r["produce"]["acked"] > 0, r["label"]
PY

# Run 1: no snapshot anywhere.
if grep -q 'frozen\|log start offset' "$work/o/trace-1.jsonl"; then
  fail "without snapshots: a snapshot or a cleaning in run 1"
fi
sed -n '/^### metadata.log.max.record.bytes.between.snapshots=20971520/,/^### /p' \
  "$work/o/report.md" | grep -q 'loaded the metadata snapshot' &&
  fail "without snapshots: a broker loaded one"

# Run 2: the log was cleaned before broker 3 came back, and it came back
# through a snapshot.
cleaned=$(python3 - "$work/o/trace-2.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    if '"raft 300' in line and 'log start offset 0 ->' in line:
        print(json.loads(line)["t_ns"])
        break
PY
)
[ -n "$cleaned" ] || fail "with snapshots: no controller moved its log start offset"
timeline=$(sed -n '/^### metadata.log.max.record.bytes.between.snapshots=1024/,/^## /p' \
  "$work/o/report.md")
loaded=$(echo "$timeline" | grep -o '^| [0-9.]* | session | broker 3 loaded the metadata snapshot' |
  head -1 | awk '{print $2}')
if [ -z "$loaded" ]; then
  fail "with snapshots: broker 3 did not come back through a snapshot"
else
  python3 -c 'import sys; sys.exit(0 if 120 <= float(sys.argv[1]) < 125 else 1)' "$loaded" ||
    fail "with snapshots: broker 3 loaded its snapshot at $loaded s"
fi

# Combined mode: broker 3's own voter cleaned its log while the node was
# down, so the restarted broker is behind its local log's start and loads the
# voter's latest snapshot (it crashed here, on the snapshot's fsync, before
# the voter's fsyncs carried their voter: a hosted voter's model object is
# its broker's).
"$ksim" run "$source_dir/scenarios/kraft-snapshot.ini" --set process.roles=broker,controller \
  --set metadata.log.max.record.bytes.between.snapshots=1024 --out "$work/c" > "$work/c.log" 2>&1 ||
  fail "combined mode with snapshots: status $?: $(tail -3 "$work/c.log")"
grep -q 'broker 3 loaded the metadata snapshot [0-9]*-[0-9]* (its own voter' "$work/c/report.md" ||
  fail "combined mode with snapshots: broker 3 did not load its own voter's snapshot"

if [ "$failures" -gt 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "kraft_snapshot: ok"
