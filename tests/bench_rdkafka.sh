#!/usr/bin/env bash
# `ksim bench cluster --producer --vs-rdkafka` (src/bench/bench_rdkafka.c).
#
#   bench_rdkafka.sh KSIM missing DIR   a ksim with no ksim-rdkafka-mock beside it
#                                       (a copy of KSIM in DIR) exits 2 with the
#                                       message naming librdkafka-dev
#   bench_rdkafka.sh KSIM run           with the program (built when librdkafka is
#                                       installed): both run on a small load, every
#                                       record is delivered, and the output carries
#                                       both rates and the ratios
#
# No wall-clock figure is asserted: speed is measured by running the command.
set -uo pipefail
ksim=$1
mode=$2
failures=0
fail() { printf 'FAIL: %s\n' "$*"; failures=$((failures + 1)); }

# expect_status WANT NAME OUT STATUS
expect_status() {
  [ "$4" -eq "$1" ] || fail "$2 -> status $4, want $1:"$'\n'"$3"
}

# has NAME OUT FIELD...: every FIELD appears in OUT.
has() {
  local name=$1 out=$2 field; shift 2
  for field in "$@"; do
    [[ "$out" == *"$field"* ]] || fail "$name: no $field in"$'\n'"$out"
  done
}

case "$mode" in
missing)
  dir=$3
  rm -rf "$dir" && mkdir -p "$dir" && cp "$ksim" "$dir/ksim" || exit 1
  out=$("$dir/ksim" bench cluster --producer --vs-rdkafka --records 100 2>&1); status=$?
  expect_status 2 "ksim bench cluster --producer --vs-rdkafka (no mock program)" "$out" "$status"
  has "no mock program" "$out" \
      "ksim bench: --vs-rdkafka needs librdkafka's mock cluster: install librdkafka-dev and reconfigure"
  [[ "$out" != *"records acked"* ]] || fail "the benchmark ran without its yardstick:"$'\n'"$out"
  ;;
run)
  mock="$(dirname "$ksim")/ksim-rdkafka-mock"
  out=$("$ksim" bench cluster --producer --vs-rdkafka --records 20000 --json 2>&1); status=$?
  expect_status 0 "--vs-rdkafka --json" "$out" "$status"
  has "--vs-rdkafka --json" "$out" '"records_acked":20000,' '"lost_write":0,' \
      '"records_per_s":' '"records_per_s_checked":' '"rdkafka_mock":{' \
      '"records_delivered":20000,' '"replicated":false' '"partitions":3,' '"value_bytes":100,' \
      '"ratio_checked_vs_rdkafka_mock":' '"ratio_simulated_vs_rdkafka_mock":'
  out=$("$ksim" bench cluster-producer --vs-rdkafka --records 2000 --linger-ms 1 2>&1); status=$?
  expect_status 0 "cluster-producer --vs-rdkafka" "$out" "$status"
  has "cluster-producer --vs-rdkafka" "$out" "cluster (producer): 2000 records acked" \
      "2000 records delivered (acks=all, idempotent, 3 brokers, RF 3 not replicated" \
      "ksim checked / librdkafka mock: " "; simulated only / mock: "
  # The program alone, and its bad arguments.
  out=$("$mock" --records 2000 2>&1); status=$?
  expect_status 0 "ksim-rdkafka-mock --records 2000" "$out" "$status"
  has "ksim-rdkafka-mock" "$out" "2000 records delivered" " M records/s)"
  for args in "--records 0" "--records x" "--window -1" "--value-bytes 0" "extra"; do
    # shellcheck disable=SC2086 # the arguments are meant to split
    out=$("$mock" $args 2>&1); status=$?
    expect_status 2 "ksim-rdkafka-mock $args" "$out" "$status"
    has "ksim-rdkafka-mock $args" "$out" "ksim-rdkafka-mock: "
  done
  # A load librdkafka would refuse is refused before either runs.
  out=$("$ksim" bench cluster --producer --vs-rdkafka --records 100 --linger-ms 1000000 2>&1)
  status=$?
  expect_status 2 "--vs-rdkafka --linger-ms 1000000" "$out" "$status"
  has "--vs-rdkafka --linger-ms 1000000" "$out" "librdkafka's limits"
  # --vs-rdkafka belongs to the producer's benchmark only.
  out=$("$ksim" bench cluster --vs-rdkafka --records 100 2>&1); status=$?
  expect_status 2 "ksim bench cluster --vs-rdkafka" "$out" "$status"
  ;;
*)
  echo "usage: bench_rdkafka.sh KSIM missing DIR | KSIM run"; exit 2 ;;
esac
[ "$failures" -eq 0 ] || exit 1
echo "ksim bench --vs-rdkafka: $mode: ok"
