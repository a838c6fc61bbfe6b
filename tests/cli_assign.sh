#!/usr/bin/env bash
# `ksim assign` prints each member's partitions as Kafka's assignors choose
# them: the examples from Kafka's RangeAssignor, RoundRobinAssignor and
# StickyAssignor documentation, KIP-429's member joining a cooperative-sticky
# group in two rebalances, and a member that gets nothing.
set -uo pipefail
ksim=$1
failures=0
expect() { # expect WANT -- ARGS...
  local want=$1; shift 2
  local got; got=$("$ksim" assign "$@" 2>&1); local status=$?
  if [ "$status" -ne 0 ] || [ "$got" != "$want" ]; then
    printf 'FAIL: ksim assign %s -> status %d\n--- want\n%s\n--- got\n%s\n' "$*" "$status" "$want" "$got"
    failures=$((failures + 1))
  fi
}
two_topics=(--topic t0:3 --topic t1:3 --member C1:t0,t1 --member C0:t0,t1)
expect $'C0 t0-0 t0-1 t1-0 t1-1\nC1 t0-2 t1-2' -- --strategy range "${two_topics[@]}"
expect $'C0 t0-0 t0-2 t1-1\nC1 t0-1 t1-0 t1-2' -- --strategy roundrobin "${two_topics[@]}"
four_topics=(--topic t0:2 --topic t1:2 --topic t2:2 --topic t3:2)
for c in C0 C1 C2; do four_topics+=(--member "$c:t0,t1,t2,t3"); done
expect $'C0 t0-0 t1-1 t3-0\nC1 t0-1 t2-0 t3-1\nC2 t1-0 t2-1' -- --strategy sticky "${four_topics[@]}"
# KIP-429: C3 joins C1 and C2 on 6 partitions. The first rebalance withholds
# the partitions that move (t-2, t-5) while their owners revoke them; the
# second, with what each member then owns, gives them to C3.
joiner=(--strategy cooperative-sticky --topic t:6 --member C1:t --member C2:t --member C3:t)
expect $'C1 t-0 t-1\nC2 t-3 t-4\nC3' -- "${joiner[@]}" --owned C1:t-0,t-1,t-2 --owned C2:t-3,t-4,t-5
expect $'C1 t-0 t-1\nC2 t-3 t-4\nC3 t-2 t-5' -- "${joiner[@]}" --owned C1:t-0,t-1 --owned C2:t-3,t-4
expect $'a t-0\nb' -- --strategy range --topic t:1 --member a:t --member b:t
[ "$failures" -eq 0 ] || exit 1
echo "ksim assign: all outputs as expected"
