#!/usr/bin/env bash
# Every library scenario in KRaft's combined mode (--set metadata.mode=kraft
# --set process.roles=broker,controller: the three voters run inside brokers
# 1 to 3): each runs and its expectations hold, but for those whose point does
# not survive the brokers taking the controllers with them. Only the
# expectations named for each may fail, and why:
# - network-partition targets the coordination node: refused (exit 2);
# - hw-truncation, kip-279: the HW design's divergence at their own seed, a
#   seed-dependent outcome (as under dedicated KRaft);
# - controller-failover, kraft: the failover is no longer the election alone:
#   the crashed controller's broker led partitions, and the new controller
#   fences it only after a broker session (README, "KRaft mode");
# - isr-shrink: the paused broker may be the active controller, so its fence
#   waits for an election first;
# - network-degraded: the follower on the slow, lossy links is a voter, and
#   may be the active controller the leader's AlterPartition must reach;
# - rack-outage: brokers 1 and 3 share a rack, so the outage takes two of the
#   three voters and the quorum: nothing is re-elected until the rack returns;
# - last-replica-standing: pausing both followers pauses two of three voters,
#   so neither is fenced and the ISR never shrinks to the leader; after its
#   power loss the leader cannot register without a quorum, so it publishes
#   no metadata and leads nothing: nothing is lost, with or without ELR (its
#   point needs the quorum outside the failing brokers);
# - unclean-recovery: likewise, its faults take two of the three voters, so
#   no recovery runs until they return: the Balanced and Aggressive runs end
#   without a leader and Aggressive loses nothing;
# - transactions: cutting off and crashing the coordinator's broker takes a
#   voter each time (the active controller at 3 s), so the leadership of
#   __transaction_state does not move before the coordinator restarts and
#   finishes its own prepared transaction: no other coordinator resumes it;
# - chaos, zk-session-expiry: a voter cut off stands for election again and
#   again; once back, its higher epochs keep resetting the others' election
#   timers while its shorter log loses every vote (Kafka 4.0 without KIP-996
#   pre-vote), so the quorum stays leaderless: liveness fails.
set -uo pipefail
ksim=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# The expectations a scenario may fail in combined mode (an extended regex
# over the failed lines' expectation names), or "" for none.
allowed() {
  case "$1" in
    hw-truncation | kip-279) echo '[a-z-]*-diverges' ;;
    controller-failover) echo 'failover-is-the-election' ;;
    kraft) echo 'kraft-fails-over' ;;
    isr-shrink) echo 'kraft-fences-the-paused-broker' ;;
    network-degraded) echo 'ISR-drops-the-slow-follower' ;;
    rack-outage) echo 'aware-keeps-writing' ;;
    last-replica-standing) echo 'without-elr-loses' ;;
    unclean-recovery) echo 'liveness|aggressive-elects-a-short-log' ;;
    transactions) echo 'resumed-after-coordinator-crash' ;;
    chaos | zk-session-expiry) echo 'liveness' ;;
    *) echo '' ;;
  esac
}

for f in "$source_dir"/scenarios/*.ini; do
  name=$(basename "$f" .ini)
  "$ksim" run "$f" --set metadata.mode=kraft --set process.roles=broker,controller \
    --out "$work/$name" > "$work/$name.log" 2>&1
  status=$?
  if [ "$name" = network-partition ]; then
    [ "$status" -eq 2 ] && grep -q 'metadata.mode: kraft: a KRaft cluster has no ZooKeeper' "$work/$name.log" ||
      fail "$name: not refused as ZooKeeper-only (status $status)"
    continue
  fi
  pattern=$(allowed "$name")
  failed=$(sed -n '/^expectations failed:/,$p' "$work/$name.log" | grep '^  \[')
  if [ -n "$pattern" ]; then
    other=$(grep -v -E -- "^  \[[^]]*\] ($pattern)[: ]" <<<"$failed")
    { [ "$status" -le 1 ] && [ -z "$other" ]; } || fail "$name: status $status; failed: $other"
  else
    [ "$status" -eq 0 ] || fail "$name: status $status: $failed"
  fi
  rm -rf "$work/$name"
done
[ "$failures" -eq 0 ] && echo "ok: every library scenario under KRaft's combined mode"
exit $((failures > 0))
