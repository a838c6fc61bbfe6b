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
expect 2 "swarm" -- run "$data/example.ini" --set random-faults:swarm=maybe
expect 2 "--recheck takes a percentage" -- sweep "$data/example.ini" --seeds 1..2 --recheck 5%%
expect 2 "give --seed N" -- bisect "$data/example.ini"
# The disk faults' keys: a size that is not one, a target a disk error cannot take.
expect 2 "bad-disk-dirty-bytes.ini:8: \[cluster\] disk.dirty.bytes: 'lots' is not" -- \
  run "$data/bad-disk-dirty-bytes.ini"
expect 2 "bad-disk-error-target.ini:20: \[fault kill\] target: 'zk' cannot be used with action 'disk-error'" -- \
  run "$data/bad-disk-error-target.ini"
expect 2 "disk.bandwidth: '-1' is out of range" -- run "$data/example.ini" --set disk.bandwidth=-1
# A topic whose assignment znode ZooKeeper would refuse is refused up front.
expect 2 "partitions: topic orders: 100000 partitions .*jute.maxbuffer" -- \
  run "$data/example.ini" --set partitions=100000
# [broker N], racks and the targets that name brokers, racks and replicas.
lib="$data/../../../scenarios"
expect 2 "\[broker 7\] there is no broker 7: the cluster has 6 brokers" -- \
  check "$lib/rack-outage.ini" --set 'broker 7:broker.rack=x'
expect 2 "--set broker 3:broker.rack=: \[broker 3\] broker.rack: '' is not a rack name" -- \
  check "$lib/rack-outage.ini" --set 'broker 3:broker.rack='
expect 2 "not all brokers have rack information (5 of 6 have broker.rack).*in the run 'topic orders:disable.rack.aware=false'" -- \
  check "$lib/rack-outage.ini" --set 'broker 3:broker.rack=null'
expect 2 "no broker is in rack 'us-east-1d' (the racks are us-east-1a, us-east-1b, us-east-1c); did you mean 'us-east-1a'" -- \
  check "$lib/rack-outage.ini" --set 'fault zone-down:target=rack:us-east-1d'
expect 2 "'follower(orders-0, 3)' does not exist: orders-0 has 3 replicas, so at most 2 followers" -- \
  check "$lib/rack-outage.ini" --set 'fault zone-down:target=follower(orders-0, 3)'
expect 2 "whether broker 1 holds a replica of orders-1 depends on the seed" -- \
  check "$lib/rack-outage.ini" --set 'fault zone-down:target=replica(orders-1, broker:1)'
expect 2 "\[broker 2\] num.partitions: is the same on every broker" -- \
  check "$data/example.ini" --set 'broker 2:num.partitions=4'
expect 2 "A..B" -- sweep "$data/example.ini" --seeds 5..1
expect 2 "K/N" -- sweep "$data/example.ini" --seeds 1..2 --shard 3/2
expect 2 "unknown benchmark" -- bench nothing
expect 2 "partitions" -- partition key
expect 2 "strategy" -- assign --strategy nope --topic t:1 --member a:t
# Faults over a time window and clock steps: each bad value names file, line, group and key.
tmp=$(mktemp -d)
window_fault() { # window_fault NAME BODY...: a scenario whose [fault f] ends with BODY
  local file="$tmp/$1.ini"; shift
  printf '[scenario]\nduration = 60s\n[topic a]\n[fault f]\nat = 5s\n' >"$file"
  printf '%s\n' "$@" >>"$file"
  echo "$file"
}
expect 2 "loss-rate.ini:8: \[fault f\] rate: '120%' is not a loss rate" -- \
  check "$(window_fault loss-rate 'action = loss' 'target = broker:1' 'rate = 120%')"
expect 2 "jitter.ini:9: \[fault f\] jitter: 60ms is more than latency 50ms" -- \
  check "$(window_fault jitter 'action = latency' 'target = broker:1' 'latency = 50ms' 'jitter = 60ms')"
expect 2 "bandwidth.ini:8: \[fault f\] bandwidth: '0B/s' is not a bandwidth" -- \
  check "$(window_fault bandwidth 'action = bandwidth' 'target = broker:1' 'bandwidth = 0B/s')"
expect 2 "offset.ini:8: \[fault f\] offset: '30' is not a clock step" -- \
  check "$(window_fault offset 'action = clock' 'target = broker:1' 'offset = 30')"
expect 2 "clock-to.ini:9: \[fault f\] to: does not apply to action 'clock'" -- \
  check "$(window_fault clock-to 'action = clock' 'target = broker:1' 'offset = +1s' 'to = broker:2')"
expect 0 "" -- check "$(window_fault good 'action = loss' 'target = broker:1' 'to = broker:2' 'rate = 0.2' 'duration = 1s')"
rm -rf "$tmp"
# A failed expectation: exit 1, and the replay command names each setting once.
out=$(mktemp -d)
expect 1 "replay: ksim run '.*hw-truncation.ini' --seed 3 --set 'ksim.truncation.mode=hw'$" -- \
  run "$data/../../../scenarios/hw-truncation.ini" --seed 3 --set ksim.truncation.mode=hw --out "$out"
rm -rf "$out"
# What KRaft mode does not model yet is refused, naming the key.
# Consumer groups and transactions run in KRaft mode (their internal topics
# created through the controller).
expect 0 "is valid" -- \
  check "$data/../../../scenarios/transactions.ini" --set metadata.mode=kraft
expect 2 "\[cluster\] metadata.mode: kraft: a KRaft cluster has no ZooKeeper to target" -- \
  check "$data/../../../scenarios/network-partition.ini" --set metadata.mode=kraft
expect 2 "eligible leader replicas (KIP-966) are the KRaft controller's" -- \
  check "$data/../../../scenarios/last-replica-standing.ini" --set metadata.mode=zookeeper
# KIP-966's unclean recovery: its strategies by name, and only with ELR.
expect 2 "unclean.recovery.strategy: 'Greedy' is not allowed; expected one of: Balanced, Aggressive, None" -- \
  check "$data/../../../scenarios/unclean-recovery.ini" --set unclean.recovery.strategy=Greedy
expect 2 "unclean.recovery.timeout.ms: '0' is out of range" -- \
  check "$data/../../../scenarios/unclean-recovery.ini" --set unclean.recovery.timeout.ms=0
expect 2 "unclean-recovery.ini:51: \[cluster\] unclean.recovery.manager.enabled: the unclean recovery manager (KIP-966) recovers partitions whose ISR and ELR are empty: it needs metadata.mode = kraft and eligible.leader.replicas.version = 1" -- \
  check "$data/../../../scenarios/unclean-recovery.ini" --set eligible.leader.replicas.version=0
expect 2 "unclean.recovery.manager.enabled: the unclean recovery manager (KIP-966)" -- \
  check "$data/../../../scenarios/last-replica-standing.ini" --set unclean.recovery.manager.enabled=true
expect 2 "unclean.recovery.manager.enabled: 'maybe'" -- \
  check "$data/../../../scenarios/unclean-recovery.ini" --set unclean.recovery.manager.enabled=maybe
expect 2 "controllers" -- check "$data/example.ini" --set controllers=0
# KIP-890: transaction.version is a KRaft feature level from 0 to 2; the hold
# fault needs a request type it knows and a hold time.
late="$data/../../../scenarios/late-transaction-requests.ini"
expect 2 "transaction.version is a KRaft feature level" -- \
  check "$late" --set metadata.mode=zookeeper
expect 2 "transaction.version: '3' is out of range" -- check "$late" --set transaction.version=3
expect 2 "transaction.partition.verification.enable: 'sometimes'" -- \
  check "$late" --set transaction.partition.verification.enable=sometimes
hold_fault() {
  printf '[scenario]\nduration = 20s\n[cluster]\nbrokers = 3\n[topic t]\npartitions = 1\n[producer p]\ntopic = t\n[fault f]\nat = 5s\naction = hold\ntarget = producer:p\n%b' "$1" > "$out-hold.ini"
}
hold_fault 'message = Frobnicate\ndelay = 1s\n'
expect 2 "hold.ini:13: \\[fault f\\] message: 'Frobnicate'" -- check "$out-hold.ini"
hold_fault 'delay = 1s\n'
expect 2 "\\[fault f\\] message: is required by action 'hold'" -- check "$out-hold.ini"
hold_fault 'message = EndTxn\n'
expect 2 "\\[fault f\\] delay: is required by action 'hold'" -- check "$out-hold.ini"
hold_fault 'message = EndTxn\ndelay = 0s\n'
expect 2 "\\[fault f\\] delay: '0s' is out of range" -- check "$out-hold.ini"
hold_fault 'message = Produce\ndelay = 1s\ncount = 0\n'
expect 2 "\\[fault f\\] count: '0' is out of range" -- check "$out-hold.ini"
hold_fault 'message = Produce\ndelay = 1s\nto = broker:1\ncount = 2\n'
expect 0 "is valid" -- check "$out-hold.ini"
# The metadata log's keys: a segment below metadata.log.segment.min.bytes is
# refused as KafkaMetadataLog refuses it; out-of-range values by the range.
expect 2 "\[cluster\] metadata.log.segment.bytes: is 4096, below metadata.log.segment.min.bytes (8388608), as Kafka refuses" -- \
  check "$data/../../../scenarios/kraft.ini" --set metadata.log.segment.bytes=4096
# (Each --set is checked as it comes: the minimum goes first.)
expect 0 "is valid" -- check "$data/../../../scenarios/kraft.ini" \
  --set metadata.log.segment.min.bytes=1024 --set metadata.log.segment.bytes=4096
expect 2 "metadata.max.retention.bytes: '-2' is out of range" -- \
  check "$data/../../../scenarios/kraft.ini" --set metadata.max.retention.bytes=-2
expect 2 "metadata.log.max.record.bytes.between.snapshots: '0' is out of range" -- \
  check "$data/../../../scenarios/kraft.ini" --set metadata.log.max.record.bytes.between.snapshots=0
expect 2 "metadata.log.max.snapshot.interval.ms" -- \
  check "$data/../../../scenarios/kraft.ini" --set metadata.log.max.snapshot.interval.ms=-1
# controller:N names a KRaft controller by node.id, only in KRaft mode.
kraft_target() {
  printf '[scenario]\nduration = 20s\n[cluster]\nbrokers = 3\nmetadata.mode = %s\n[topic t]\npartitions = 1\n[producer p]\ntopic = t\n[fault f]\nat = 5s\naction = crash\ntarget = %s\n' "$1" "$2" > "$out-kraft.ini"
}
kraft_target kraft controller:3005
expect 2 "kraft.ini:13: \\[fault f\\] target: 'controller:3005' does not exist: the quorum's controllers are controller:3000, controller:3001, controller:3002" -- check "$out-kraft.ini"
kraft_target zookeeper controller:3000
expect 2 "'controller:3000' names a KRaft controller, and this cluster runs metadata.mode = zookeeper" -- check "$out-kraft.ini"
kraft_target kraft quorum-follower
expect 0 "is valid" -- check "$out-kraft.ini"
# Combined mode: controller:N names a voter, which is a broker.
kraft_target $'kraft\nprocess.roles = broker,controller\ncontrollers = 2' controller:3000
expect 2 "kraft.ini:15: \\[fault f\\] target: 'controller:3000' does not exist: the quorum's voters (combined with brokers of the same node.id) are controller:1, controller:2" -- \
  check "$out-kraft.ini"
kraft_target $'kraft\nprocess.roles = broker,controller' controller:2
expect 0 "is valid" -- check "$out-kraft.ini"
rm -f "$out-kraft.ini"
# KIP-848's keys: group.protocol's values, group.remote.assignor only with
# group.protocol=consumer and among the brokers' group.consumer.assignors,
# the brokers' heartbeat below their session.
expect 2 "group.protocol: 'kip848' is not allowed; expected one of: classic, consumer" -- \
  check "$lib/consumer-rebalance.ini" --set group.protocol=kip848
expect 2 "\[consumer-group billing\] group.remote.assignor: cannot be set when group.protocol=classic" -- \
  check "$lib/pubsub-vs-queue.ini" --set group.remote.assignor=uniform
expect 2 "group.remote.assignor: 'sticky' is not a server-side assignor (uniform or range)" -- \
  check "$lib/consumer-rebalance.ini" --set group.protocol=consumer --set group.remote.assignor=sticky
expect 2 "group.remote.assignor: 'uniform' is not in the brokers' group.consumer.assignors" -- \
  check "$lib/consumer-rebalance.ini" --set group.protocol=consumer --set group.consumer.assignors=range \
  --set group.remote.assignor=uniform
expect 2 "\[cluster\] group.consumer.heartbeat.interval.ms: must be lower than group.consumer.session.timeout.ms" -- \
  check "$lib/consumer-rebalance.ini" --set group.consumer.heartbeat.interval.ms=7000
expect 2 "group.consumer.assignors: 'sticky' has 'sticky', which is not allowed" -- \
  check "$lib/consumer-rebalance.ini" --set group.consumer.assignors=sticky
printf '[scenario]\nduration = 20s\n[cluster]\nbrokers = 3\n[broker 2]\ngroup.consumer.session.timeout.ms = 6000\n[topic t]\npartitions = 1\n[producer p]\ntopic = t\n' > "$out-broker-consumer.ini"
expect 2 "\[broker 2\] group.consumer.session.timeout.ms: is the same on every broker in ksim" -- \
  check "$out-broker-consumer.ini"
rm -f "$out-broker-consumer.ini"
# KRaft's roles and voters ([cluster] process.roles, controllers,
# controller.quorum.voters) refuse what contradicts itself or the cluster,
# naming the file, the group, the key and its line.
roles() { # roles MODE LINES...: a [cluster] with brokers = 3 and the lines given
  local mode=$1; shift
  { printf '[scenario]\nduration = 20s\n[cluster]\nbrokers = 3\nmetadata.mode = %s\n' "$mode"
    printf '%s\n' "$@"
    printf '[topic t]\npartitions = 1\n[producer p]\ntopic = t\n'; } > "$out-roles.ini"
}
roles zookeeper "process.roles = broker,controller"
expect 2 "roles.ini:6: \\[cluster\\] process.roles: process.roles is KRaft's.*metadata.mode = zookeeper" -- check "$out-roles.ini"
roles zookeeper "controller.quorum.voters = 3000@c0:9093"
expect 2 "roles.ini:6: \\[cluster\\] controller.quorum.voters: controller.quorum.voters is KRaft's" -- check "$out-roles.ini"
roles kraft "process.roles = controller"
expect 2 "roles.ini:6: \\[cluster\\] process.roles: process.roles = controller would leave the cluster without brokers" -- check "$out-roles.ini"
roles kraft "process.roles = broker, broker"
expect 2 "roles.ini:6: \\[cluster\\] process.roles: duplicate role names found in \`process.roles\`" -- check "$out-roles.ini"
roles kraft "process.roles = broker,zookeeper"
expect 2 "roles.ini:6: \\[cluster\\] process.roles: 'broker,zookeeper' has 'zookeeper', which is not allowed" -- check "$out-roles.ini"
roles kraft "process.roles = broker,controller" "controller.quorum.voters = 1@broker-1:9093,4@broker-4:9093"
expect 2 "roles.ini:7: \\[cluster\\] controller.quorum.voters: voter 4 names no broker: in combined mode" -- check "$out-roles.ini"
roles kraft "controller.quorum.voters = 1@broker-1:9093"
expect 2 "roles.ini:6: \\[cluster\\] controller.quorum.voters: voter 1 is broker-1's node.id: dedicated controllers" -- check "$out-roles.ini"
roles kraft "controller.quorum.voters = 3000@c0"
expect 2 "roles.ini:6: \\[cluster\\] controller.quorum.voters: failed to parse host name from entry '3000@c0'" -- check "$out-roles.ini"
roles kraft "controller.quorum.voters = x@c0:9093"
expect 2 "roles.ini:6: \\[cluster\\] controller.quorum.voters: failed to parse voter ID as an integer from 'x'" -- check "$out-roles.ini"
roles kraft "controller.quorum.voters = 3000@c0:9093,3000@c1:9093"
expect 2 "roles.ini:6: \\[cluster\\] controller.quorum.voters: names voter 3000 twice" -- check "$out-roles.ini"
roles kraft "controllers = 2" "controller.quorum.voters = 3000@c0:9093"
expect 2 "roles.ini:6: \\[cluster\\] controllers: controllers = 2, but controller.quorum.voters names 1 voter" -- check "$out-roles.ini"
roles kraft "process.roles = broker,controller" "controllers = 5"
expect 2 "roles.ini:7: \\[cluster\\] controllers: combined mode.*controllers = 5 needs at least 5 brokers (brokers = 3)" -- check "$out-roles.ini"
roles kraft "node.id = 1"
expect 2 "roles.ini:6: \\[cluster\\] node.id: '1': a scenario does not set node.id: ksim numbers its nodes itself: broker N" -- check "$out-roles.ini"
roles kraft "process.roles = broker,controller" "controller.quorum.voters = 1@broker-1:9093,3@broker-3:9093"
expect 0 "is valid" -- check "$out-roles.ini"
roles kraft "process.roles = broker" "controller.quorum.voters = 3000@c0:9093,3007@c1:9093,3009@c2:9093"
expect 0 "is valid" -- check "$out-roles.ini"
roles kraft "controller.quorum.voters = 100@c0:9093"
expect 2 "roles.ini:6: \\[cluster\\] controller.quorum.voters: voter 100: ksim gives dedicated controllers node.ids from 3000 up" -- check "$out-roles.ini"
rm -f "$out-roles.ini"
# Each command's usage line names its arguments once ("run [OPTION?]
# SCENARIO - ...", not "SCENARIO SCENARIO").
for command in run check sweep shrink bisect replay diagram partition assign bench; do
  usage=$("$ksim" "$command" --help 2>&1 | sed -n 2p)
  if echo "$usage" | grep -Eq '(^| )([A-Z|.]+) \2( |$)'; then
    echo "FAIL: $command --help: $usage"
    failures=$((failures + 1))
  fi
done
if [ "$failures" -ne 0 ]; then echo "$failures failures"; exit 1; fi
echo "bad input gets exit status 2 and a clear message"
