#!/usr/bin/env bash
# ksim bisect: a key's threshold where it is known (a follower pause against
# an expectation on produce latency: the longest latency is the pause, so
# `latency_ms.produce.max < 3000` starts to fail at a pause of exactly
# 3000 ms), the point of no return of unclean-election's losing run (the
# leader's crash at 25 s: healed before it nothing is lost), and bad input.
set -uo pipefail
ksim=$1 data=$2 library=$3
fail() { echo "FAIL: $*" >&2; exit 1; }

out=$("$ksim" bisect "$data/bisect/pause-latency.ini" --key 'fault pause-follower:duration' \
  --range 1000ms..6000ms --seeds 1..2 --expect fast) || fail "the threshold search: $out"
grep -q "threshold: fault pause-follower:duration=3000ms is the first value upward" <<<"$out" ||
  fail "the threshold is not 3000ms: $out"
grep -q "duration=2999ms: 0/2 seeds fail (0%)" <<<"$out" || fail "2999ms was not probed: $out"

out=$("$ksim" bisect "$library/unclean-election.ini" --seed 1 --anomaly lost_write) ||
  fail "the point of no return: $out"
grep -q "point of no return: 25.000 s. Healing every fault at 24.999 s passes" <<<"$out" ||
  fail "the point of no return is not the leader's crash at 25 s: $out"
grep -q "fault began: crash broker-.* (leader(orders-0))" <<<"$out" ||
  fail "the events before it do not show the crash: $out"
grep -q "acknowledged at .* is not in the committed log" <<<"$out" || fail "no lost write: $out"

expect2() {
  local want=$1; shift
  local message
  message=$("$ksim" bisect "$@" 2>&1 >/dev/null)
  [ $? -eq 2 ] || fail "ksim bisect $* did not exit 2"
  grep -qF -- "$want" <<<"$message" || fail "ksim bisect $*: '$message' lacks '$want'"
}
expect2 "--seed N" "$library/unclean-election.ini"
expect2 "not both" "$library/unclean-election.ini" --seed 1 --expect a --anomaly lost_write
expect2 "--anomaly takes one of" "$library/unclean-election.ini" --seed 1 --anomaly lost
expect2 "no expectation named 'nope'" "$library/unclean-election.ini" --seed 1 --expect nope
expect2 "does not fail by anomaly lost_write" "$library/unclean-election.ini" --seed 1 \
  --anomaly lost_write --set unclean.leader.election.enable=false
expect2 "--range takes A..B" "$data/bisect/pause-latency.ini" --key x --range 5..1 --expect fast
expect2 "--key needs --expect" "$data/bisect/pause-latency.ini" --key x --range 1..5
echo "bisect finds the known threshold and the point of no return; bad input exits 2"
