#!/usr/bin/env bash
# KRaft mode's own mechanisms, seen from library scenarios run with
# metadata.mode = kraft:
# - isr-shrink: a follower paused for 20 s with replica.lag.time.max.ms =
#   30 s. In ZooKeeper mode the leader keeps it in the ISR for 30 s and
#   acks=all waits the whole pause (the scenario's own expectation). Under
#   KRaft the paused broker stops heartbeating, the controller fences it
#   after broker.session.timeout.ms (9 s) and takes it out of the ISR
#   (KIP-841): the wait ends then, and the leader's ISR change follows the
#   fencing.
# - kraft.ini: the controller crash is a failover of a controller node
#   (node.id 3000 up), and the new leader's election is a PartitionChange
#   record of the metadata log.
# - faults on the quorum itself (below).
set -uo pipefail
ksim=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

"$ksim" run "$source_dir/scenarios/isr-shrink.ini" --set metadata.mode=kraft \
  --set replica.lag.time.max.ms=30000 --out "$work/isr" >/dev/null
python3 - "$work/isr/summary.json" <<'PY' || fail "isr-shrink under KRaft: acks=all still waited the pause"
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
latency = run["latency_ms"]["produce"]["max"]
# Fenced 9 s after its last heartbeat, out of the ISR half a second later.
sys.exit(0 if 8000 < latency < 12000 else 1)
PY
fenced=$(grep -o '^| [0-9.]* | session | controller 3001 fenced broker 3 (its session timed out' \
  "$work/isr/report.md" | head -1 | awk '{print $2}')
shrunk=$(grep -o '^| [0-9.]* | isr_changed | leader [0-9] changed the ISR of orders-0' \
  "$work/isr/report.md" | head -1 | awk '{print $2}')
if [ -z "$fenced" ] || [ -z "$shrunk" ]; then
  fail "isr-shrink under KRaft: no fencing ($fenced) or ISR change ($shrunk) in the report"
else
  python3 -c 'import sys; f, s = map(float, sys.argv[1:]); sys.exit(0 if 18 < f <= s < f + 1 else 1)' \
    "$fenced" "$shrunk" || fail "isr-shrink under KRaft: fenced at $fenced s, ISR changed at $shrunk s"
fi

"$ksim" run "$source_dir/scenarios/kraft.ini" --set metadata.mode=kraft --set acks=all \
  --out "$work/kraft" >/dev/null || fail "kraft.ini under KRaft"
python3 - "$work/kraft/summary.json" <<'PY' || fail "kraft.ini: the failover is not a controller node's"
import json, sys
failovers = json.load(open(sys.argv[1]))["runs"][0]["failover"]["controller_failovers"]
sys.exit(0 if len(failovers) == 1 and failovers[0]["old_controller"] >= 3000 else 1)
PY
grep -q 'leader of orders-0 in epoch 1 (PartitionChange at offset [0-9]* of the metadata log)' \
  "$work/kraft/report.md" || fail "kraft.ini: no PartitionChange named in the report"

# Faults on the quorum, checked after every event: a follower voter crashes,
# the active controller is cut off from everyone (a zombie that still thinks
# it leads), and a voter pauses. Each loss of the controller is one failover,
# ended by a new active controller; a voter standing for election in an
# epoch the quorum has passed (the zombie, the paused voter) is none.
cat > "$work/quorum.ini" <<'INI'
[scenario]
name = quorum-faults
duration = 40s
quiet = 10s
[cluster]
brokers = 3
metadata.mode = kraft
[topic orders]
partitions = 3
replication.factor = 3
min.insync.replicas = 2
[producer writer]
topic = orders
acks = all
workload.rate = 500
[fault follower-down]
at = 5s
action = crash
target = quorum-follower
duration = 10s
[fault split]
at = 20s
action = partition
groups = controller | *
duration = 8s
[fault pause]
at = 30s
action = pause
target = controller:3002
duration = 3s
[expect]
keeps = lost_write == 0
INI
"$ksim" run "$work/quorum.ini" --paranoid --out "$work/quorum" >/dev/null ||
  fail "quorum faults: the run failed or broke an invariant"
python3 - "$work/quorum/summary.json" <<'PY' || fail "quorum faults: failovers"
import json, sys
failovers = json.load(open(sys.argv[1]))["runs"][0]["failover"]["controller_failovers"]
ok = len(failovers) >= 1 and all(f["old_controller"] >= 3000 and f["led_again_s"] is not None
                                 and f["ms"] < 5000 for f in failovers)
print(failovers) if not ok else None
sys.exit(0 if ok else 1)
PY
grep -q 'crash controller-300[0-9] (quorum-follower)' "$work/quorum/report.md" ||
  fail "quorum faults: quorum-follower not resolved"

[ "$failures" -eq 0 ] && echo "kraft_behaviour: all passed"
exit "$failures"
