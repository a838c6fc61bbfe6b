#!/usr/bin/env bash
# Bad command lines and scenario files end with exit status 2 and a message
# that names what is wrong; never a crash. A run whose expectation fails ends
# with status 1 and the command that replays it.
set -uo pipefail
ksim=$1 data=$2
failures=0
expect() { # expect STATUS PATTERN -- ARGS...
  local status=$1 pattern=$2; shift 3
  local output; output=$("$ksim" "$@" 2>&1); local got=$?
  if [ "$got" -ne "$status" ] || ! grep -q -- "$pattern" <<<"$output"; then
    echo "FAIL: ksim $* -> status $got (want $status), output: $output"
    failures=$((failures + 1))
  fi
}
expect 2 "unknown command 'frobnicate'" -- frobnicate
expect 2 "unknown option '--frob'" -- --frob
expect 0 "Usage: ksim COMMAND" -- --help
expect 0 "ksim 0" -- --version
expect 2 "exactly one scenario" -- run
expect 2 "No such file" -- run /nonexistent.ini
expect 2 "not a non-negative integer" -- run "$data/example.ini" --seed -3
expect 2 "did you mean" -- run "$data/bad-unknown-key.ini"
expect 2 "bad-rf-above-brokers.ini:" -- run "$data/bad-rf-above-brokers.ini"
expect 2 "bad-unit.ini:" -- run "$data/bad-unit.ini"
expect 2 "bad-zk-in-flight.ini:8: \[cluster\] zookeeper.max.in.flight.requests: '0' is out of range" -- \
  run "$data/bad-zk-in-flight.ini"
expect 2 "bad-leader-and-isr-time.ini:8: \[cluster\] ksim.leader.and.isr.partition.time: '50' needs a unit" -- \
  run "$data/bad-leader-and-isr-time.ini"
expect 2 "bad-update-metadata-time.ini:8: \[cluster\] ksim.update.metadata.partition.time: '-5us'" -- \
  run "$data/bad-update-metadata-time.ini"
expect 2 "bad-zk-byte-time.ini:8: \[cluster\] zookeeper.byte.time: '20' needs a unit" -- \
  run "$data/bad-zk-byte-time.ini"
expect 2 "zookeeper.request.time: '-1ms' is not a non-negative number" -- \
  run "$data/example.ini" --set zookeeper.request.time=-1ms
expect 2 "ksim.leader.and.isr.partition.time: '2s' is out of range.*of at most 1000000000ns" -- \
  run "$data/example.ini" --set ksim.leader.and.isr.partition.time=2s
# The parser's own checks, which GKeyFile alone would not make: each names its line.
expect 2 "bad-duplicate-key.ini:16: \[producer writer\] acks: set twice (first at line 15)" -- \
  run "$data/bad-duplicate-key.ini"
expect 2 "bad-duplicate-group.ini:23: \[topic orders\] appears twice (first at line 9)" -- \
  run "$data/bad-duplicate-group.ini"
expect 2 "bad-key-before-group.ini:2: .* comes before any \[group\] line" -- \
  run "$data/bad-key-before-group.ini"
expect 2 "acks" -- run "$data/example.ini" --set acks=2
# A topic whose assignment znode ZooKeeper would refuse is refused up front.
expect 2 "partitions: topic orders: 100000 partitions .*jute.maxbuffer" -- \
  run "$data/example.ini" --set partitions=100000
expect 2 "A..B" -- sweep "$data/example.ini" --seeds 5..1
expect 2 "K/N" -- sweep "$data/example.ini" --seeds 1..2 --shard 3/2
expect 2 "unknown benchmark" -- bench nothing
expect 2 "partitions" -- partition key
expect 2 "strategy" -- assign --strategy nope --topic t:1 --member a:t
# A failed expectation: exit 1, and the replay command names each setting once.
out=$(mktemp -d)
expect 1 "replay: ksim run '.*hw-truncation.ini' --seed 7 --set 'ksim.truncation.mode=hw'$" -- \
  run "$data/../../../scenarios/hw-truncation.ini" --seed 7 --set ksim.truncation.mode=hw --out "$out"
rm -rf "$out"
if [ "$failures" -ne 0 ]; then echo "$failures failures"; exit 1; fi
echo "bad input gets exit status 2 and a clear message"
