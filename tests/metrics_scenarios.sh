#!/usr/bin/env bash
# Kafka's metrics (reports/jmx.h) move in library scenarios as an operator's
# dashboard would show them, each counted by the mechanism Kafka counts it
# by:
# - min-insync: with min.insync.replicas = 2, the partitioned follower leaves
#   the ISR and orders-0 is under its min ISR; acks=all produce requests then
#   fail with NOT_ENOUGH_REPLICAS, which FailedProduceRequestsPerSec counts;
#   with min.insync.replicas = 1 the partition is never under it.
# - unclean-election: an unclean election only where it is allowed.
# - consumer-commit: consumers fall behind (records-lag-max) while they
#   process, and acks-durability's producers retry (record-retry-rate) when
#   leaders fail under acks=all.
set -uo pipefail
ksim=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# column_max DIR RUN-PREFIX METRIC-NAME: the largest value of the cluster's
# column `kafka...name=METRIC` in the run's metrics.csv.
column_max() {
  python3 - "$1" "$2" "$3" <<'PY'
import csv, glob, sys
path, = glob.glob(f"{sys.argv[1]}/{sys.argv[2]}-*metrics.csv")
rows = list(csv.reader(open(path)))
column = [i for i, c in enumerate(rows[0]) if c.endswith("name=" + sys.argv[3])]
assert len(column) == 1, (sys.argv[3], rows[0])
print(max(float(r[column[0]]) for r in rows[1:]))
PY
}
positive() { python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) > 0 else 1)' "$1"; }
zero() { python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) == 0 else 1)' "$1"; }

for s in min-insync unclean-election consumer-commit acks-durability; do
  "$ksim" run "$source_dir/scenarios/$s.ini" --out "$work/$s" >/dev/null || fail "$s run"
done

zero "$(column_max "$work/min-insync" run1 UnderMinIsrPartitionCount)" ||
  fail "min-insync: under min ISR with min.insync.replicas = 1"
positive "$(column_max "$work/min-insync" run2 UnderMinIsrPartitionCount)" ||
  fail "min-insync: never under min ISR with min.insync.replicas = 2"
positive "$(column_max "$work/min-insync" run2 FailedProduceRequestsPerSec)" ||
  fail "min-insync: no failed produce requests under min ISR"
grep -q '^| min.insync.replicas=2 | 1: partition broker-2 .* | UnderMinIsrPartitionCount | 0 → 1 | 15.0 s |' \
  "$work/min-insync/report.md" || fail "min-insync: no UnderMinIsrPartitionCount change in the report"

zero "$(column_max "$work/unclean-election" run1 UncleanLeaderElectionsPerSec)" ||
  fail "unclean-election: an unclean election though not enabled"
positive "$(column_max "$work/unclean-election" run2 UncleanLeaderElectionsPerSec)" ||
  fail "unclean-election: no unclean election though enabled"

positive "$(column_max "$work/consumer-commit" run1 records-lag-max)" ||
  fail "consumer-commit: no consumer lag"
positive "$(column_max "$work/acks-durability" run3 record-retry-rate)" ||
  fail "acks-durability: no producer retries under acks=all"
positive "$(column_max "$work/acks-durability" run3 BytesInPerSec)" ||
  fail "acks-durability: no bytes in"

[ "$failures" -eq 0 ] && echo "metrics_scenarios: all passed"
exit "$failures"
