#!/usr/bin/env bash
# `ksim bench scale` runs end to end on two small sizes (1,000 and 2,000
# partitions on 30 brokers, 10 s virtual): the JSON carries every figure of
# the table and the ratios of the second size to the first, and bad sizes
# are refused with status 2. (Speed is measured by running it, not here.)
set -uo pipefail
ksim=$1
failures=0
out=$("$ksim" bench scale --sizes 1000,2000 --virtual 10 --json 2>/dev/null); status=$?
if [ "$status" -ne 0 ]; then
  printf 'FAIL: ksim bench scale -> status %d\n%s\n' "$status" "$out"; exit 1
fi
for field in '"partitions":1000,' '"wall_s":' '"virtual_per_wall":' '"events":' \
             '"peak_rss_bytes":' '"bytes_per_partition":' '"controller_failover_ms":' \
             '"acked":' '"metadata_mode":"zookeeper"' '"cpu_us_per_event":' \
             '"ratios":[{"from":1000,"to":2000,"partitions":2.0,"events":' '"cpu_per_event":' \
             '"peak_rss":'; do
  if [[ "$out" != *"$field"* ]]; then
    printf 'FAIL: no %s in\n%s\n' "$field" "$out"; failures=$((failures + 1))
  fi
done
if [[ "$out" == *'"events":0,'* ]]; then
  printf 'FAIL: no event ran\n%s\n' "$out"; failures=$((failures + 1))
fi
# KRaft mode runs the same cluster with a controller quorum.
out=$("$ksim" bench scale --sizes 1000 --virtual 10 --mode kraft --json 2>/dev/null); status=$?
if [ "$status" -ne 0 ] || [[ "$out" != *'"metadata_mode":"kraft"'* ]] || [[ "$out" == *'"acked":0,'* ]] ||
   [[ "$out" == *'"acked":0}'* ]]; then
  printf 'FAIL: ksim bench scale --mode kraft -> status %d\n%s\n' "$status" "$out"
  failures=$((failures + 1))
fi
for bad in "--sizes abc" "--sizes 5" "--virtual 1" "--mode paxos"; do
  # shellcheck disable=SC2086
  "$ksim" bench scale $bad > /dev/null 2>&1; status=$?
  if [ "$status" -ne 2 ]; then
    printf 'FAIL: ksim bench scale %s -> status %d, not 2\n' "$bad" "$status"
    failures=$((failures + 1))
  fi
done
[ "$failures" -eq 0 ] || exit 1
echo "ksim bench scale: 1000 and 2000 partitions ran"
