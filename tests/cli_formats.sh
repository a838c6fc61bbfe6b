#!/usr/bin/env bash
# `ksim run`'s other output formats.
# --history=jepsen writes each run's client history as Jepsen's Kafka
# workload reads it: well formed (tests/jepsen_history_check.py), with
# transactions and polls; and Jepsen's first analysis (offsets that hold two
# acknowledged values) agrees with ksim's verdict on leader-failure: under
# acks=1 every lost write's offset went to another record, under acks=all none.
# The report's verdict names each pattern of lost writes (patterns.c).
# --trace=chrome writes one Trace Event Format document per run: named
# processes and threads, message slices, every flow arrow with both ends.
set -uo pipefail
ksim=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
check() { python3 "$source_dir/tests/jepsen_history_check.py" "$1.edn" "$1-keys.json"; }
lost_write() {
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["runs"][int(sys.argv[2])]["anomalies"]["lost_write"])' \
    "$1/summary.json" "$2"
}

"$ksim" run "$source_dir/scenarios/exactly-once-pipeline.ini" --history=jepsen --trace=chrome \
  --out "$work/eos" >/dev/null || fail "exactly-once-pipeline run"
python3 - "$work/eos/trace-2.json" <<'PY' || fail "trace-2.json"
import collections, json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
phases = collections.Counter(e["ph"] for e in events)
starts = {e["id"] for e in events if e["ph"] == "s"}
ends = {e["id"] for e in events if e["ph"] == "f"}
threads = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
names = {e["name"] for e in events if e["ph"] == "X"}
assert phases["X"] > 0 and phases["C"] > 0, phases
assert starts == ends and len(starts) == phases["s"], "unmatched flows"
assert {"client", "request handler", "replica fetcher", "coordinators"} <= threads, threads
assert {"Produce request", "Fetch response", "EndTxn request", "WriteTxnMarkers request"} <= names, names
assert all(e["dur"] >= 0 for e in events if e["ph"] == "X")
PY
for i in 1 2; do
  counts=$(check "$work/eos/history-$i") || fail "history-$i: $counts"
  case "$counts" in *poll-ok=*) ;; *) fail "history-$i has no polls: $counts" ;; esac
done
case "$(check "$work/eos/history-2")" in *txn-ok=*) ;; *) fail "history-2 has no committed :txn" ;; esac

"$ksim" run "$source_dir/scenarios/leader-failure.ini" --history=jepsen --out "$work/lf" \
  >/dev/null || fail "leader-failure run"
for i in 1 2; do
  counts=$(check "$work/lf/history-$i") || fail "leader-failure history-$i: $counts"
  inconsistent=${counts##*inconsistent=}
  lost=$(lost_write "$work/lf" $((i - 1)))
  [ "$inconsistent" = "$lost" ] || fail "run $i: Jepsen's inconsistent offsets $inconsistent, ksim's lost writes $lost"
done
[ "$(lost_write "$work/lf" 0)" -gt 0 ] || fail "leader-failure acks=1 lost nothing"

message=$("$ksim" run "$source_dir/scenarios/leader-failure.ini" --history=edn --out "$work/x" 2>&1)
status=$?
[ "$status" -eq 2 ] || fail "--history=edn exit $status"
case "$message" in *"--history: 'edn' is not a history format (jepsen)"*) ;;
  *) fail "--history=edn said: $message" ;; esac

# The report groups every lost write by its causal pattern: under acks=1 the
# showcase loses records two ways (acknowledged before the HW reached them,
# then truncated after another broker's election; and acknowledged by a
# leader already deposed), each named once on the first screen, in either
# metadata mode.
"$ksim" run "$source_dir/scenarios/acks-durability.ini" --out "$work/ad" >/dev/null ||
  fail "acks-durability run"
for mode in zookeeper kraft; do
  grep -Eq "^acks=1,metadata.mode=$mode: [0-9]+ lost_write, every record in 2 patterns:" \
    "$work/ad/report.md" || fail "acks-durability: acks=1's lost writes ($mode) are not in 2 patterns"
done
# The page as a browser reads it: well-formed HTML and inline SVG, images
# inline, under a megabyte, and a first screen of verdict, cost and patterns
# (tests/report_html_check.py).
python3 "$source_dir/tests/report_html_check.py" "$work/ad/report.html" 6 --anomalies ||
  fail "acks-durability: report.html"
# Kafka's metrics under their JMX names, a column per metric and broker, and
# how the first fault (broker 2, leader of orders-0 and follower of the
# rest, crashes) moved them: every partition under-replicated.
head -1 "$work/ad/run1-acks-0-metadata-mode-zookeeper-metrics.csv" |
  grep -q '^time_s,"kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions",' ||
  fail "acks-durability: metrics.csv header"
head -1 "$work/ad/run1-acks-0-metadata-mode-zookeeper-metrics.csv" | grep -q '"kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec;broker=3"' ||
  fail "acks-durability: metrics.csv has no per-broker column"
grep -q '^| acks=0,metadata.mode=zookeeper | 1: crash broker-2 (leader(orders-0)) | UnderReplicatedPartitions | 0 → 3 |' \
  "$work/ad/report.md" || fail "acks-durability: no metric change across the first fault"
# When each partition had no leader: orders-0 from broker 2's crash at 10 s
# until its next leader, orders-1 and orders-2 from broker 1's at 40 s.
grep -q '^2,orders-0,10,1[0-9.]*$' "$work/ad/run1-acks-0-metadata-mode-zookeeper-unavailability.csv" ||
  fail "acks-durability: orders-0's outage"
[ "$(tail -n +2 "$work/ad/run1-acks-0-metadata-mode-zookeeper-unavailability.csv" | wc -l)" -eq 3 ] ||
  fail "acks-durability: outages"
grep -q 'a deposed leader (a newer one had been elected); A truncated it' "$work/ad/report.md" ||
  fail "acks-durability: no deposed-leader pattern"

# --trace (JSON Lines): the run ends with messages still in flight; freeing
# the world drops them after the trace writer has finished, and those drops
# are no part of the trace (they once tripped the writer's assertion).
"$ksim" run "$source_dir/scenarios/consumer-rebalance.ini" --trace --out "$work/cr" >/dev/null ||
  fail "consumer-rebalance --trace run"
python3 - "$work/cr/trace-1.jsonl" <<'PY' || fail "consumer-rebalance trace-1.jsonl"
import json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
assert records and records[-1]["t_ns"] <= 70000000000, records[-1:]
PY

message=$("$ksim" run "$source_dir/scenarios/leader-failure.ini" --trace=xml --out "$work/x" 2>&1)
status=$?
[ "$status" -eq 2 ] || fail "--trace=xml exit $status"
case "$message" in *"--trace: 'xml' is not a trace format (jsonl, chrome)"*) ;;
  *) fail "--trace=xml said: $message" ;; esac

[ "$failures" -eq 0 ] && echo "cli_formats: all checks passed"
exit $((failures > 0))
