#!/usr/bin/env bash
# A leader's fetch sessions skip their quiet partitions (replica_fetch.c,
# ksim.fetch.quiet.partitions): the runs must be exactly those of reading
# every partition of a session on every fetch, as Kafka does. Library
# scenarios that move the fetch path (leaders and followers failing, ISR
# changes, retention, clock jumps, consumers' sessions, transactions,
# KRaft, random faults over three seeds) run both ways; every run's
# fingerprint must be the same.
set -uo pipefail
ksim=$1
root=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
runs=0
fingerprints() {
  grep -o '^run [0-9/]* .* fingerprint [0-9a-f]*' "$1" | sed 's/ [0-9.]* s wall,.* fingerprint / /'
}
check() {
  local name=$1
  shift
  "$ksim" run "$@" --out "$work/a" > "$work/a.log" 2>&1
  "$ksim" run "$@" --set ksim.fetch.quiet.partitions=false --out "$work/b" > "$work/b.log" 2>&1
  local a b
  a=$(fingerprints "$work/a.log")
  b=$(fingerprints "$work/b.log")
  if [ -z "$a" ]; then
    echo "FAIL: $name: no run finished: $(tail -3 "$work/a.log")"
    failures=$((failures + 1))
  elif [ "$a" != "$b" ]; then
    echo "FAIL: $name: quiet partitions changed the runs:"
    diff <(echo "$a") <(echo "$b")
    failures=$((failures + 1))
  fi
  runs=$((runs + $(echo "$a" | grep -c .)))
}
for scenario in leader-failure follower-failure isr-shrink retention clock-jump \
                consumer-rebalance transactions kraft rolling-restart network-partition; do
  check "$scenario" "$root/scenarios/$scenario.ini"
done
for seed in 1 2 3; do
  check "chaos seed $seed" "$root/scenarios/chaos.ini" --seed "$seed"
done
echo "$runs runs compared"
[ "$runs" -ge 20 ] || { echo "FAIL: only $runs runs compared"; failures=$((failures + 1)); }
exit $((failures > 0))
