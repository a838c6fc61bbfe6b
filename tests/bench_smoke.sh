#!/usr/bin/env bash
# The cluster benchmarks run end to end on a small load: every record is
# acknowledged, none is lost, and the JSON carries the fields the benchmark
# figures are read from. (Speed is measured by running them, not here.)
set -uo pipefail
ksim=$1
failures=0
check() { # check NAME ARGS...
  local name=$1; shift
  local out; out=$("$ksim" bench "$name" --json "$@" 2>&1); local status=$?
  local field
  if [ "$status" -ne 0 ]; then
    printf 'FAIL: ksim bench %s %s -> status %d\n%s\n' "$name" "$*" "$status" "$out"
    failures=$((failures + 1)); return
  fi
  for field in '"records_per_s":' '"records_per_s_checked":' '"peak_rss_bytes":' \
               '"peak_rss_bytes_per_record":' '"virtual_s":' '"wall_s":' '"check_s":' \
               '"records_acked":2000,' '"lost_write":0,'; do
    if [[ "$out" != *"$field"* ]]; then
      printf 'FAIL: ksim bench %s %s: no %s in\n%s\n' "$name" "$*" "$field" "$out"
      failures=$((failures + 1))
    fi
  done
}
check cluster --records 2000
check cluster-producer --records 2000
check cluster --producer --records 2000
[ "$failures" -eq 0 ] || exit 1
echo "ksim bench: cluster benchmarks ran"
