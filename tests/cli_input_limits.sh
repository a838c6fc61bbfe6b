#!/usr/bin/env bash
# The input side of the command line: `ksim check` accepts every good file
# and refuses every bad one with status 2; values the engine cannot represent
# and runs too large to simulate are refused before anything runs; a file is
# read only up to its limit; a byte-order mark changes no fingerprint; numeric
# arguments are refused rather than wrapped.
set -uo pipefail
ksim=$1 data=$2 library=$3 work=$4
failures=0
rm -rf "$work" && mkdir -p "$work"
expect() { # expect STATUS PATTERN -- ARGS...
  local status=$1 pattern=$2; shift 3
  local output; output=$("$ksim" "$@" 2>&1); local got=$?
  if [ "$got" -ne "$status" ] || ! grep -q -- "$pattern" <<<"$output"; then
    echo "FAIL: ksim $* -> status $got (want $status), output: ${output:0:600}"
    failures=$((failures + 1))
  fi
}

# ksim check: the good fixtures pass, every bad one is refused with status 2.
for f in "$data"/good-*.ini "$data"/example.ini; do
  expect 0 "is valid" -- check "$f"
done
for f in "$data"/bad-*.ini; do
  expect 2 "$(basename "$f"):" -- check "$f"
done
expect 0 "run 3/6  acks=1,metadata.mode=zookeeper" -- check "$library/acks-durability.ini"
expect 0 "runs      2" -- run --check "$library/acks-durability.ini" --set acks=1
expect 0 "runs      1" -- run --check "$library/acks-durability.ini" --set acks=1 --set metadata.mode=kraft
expect 2 "exactly one scenario" -- check
expect 2 "acks" -- check "$library/acks-durability.ini" --set acks=2

# Values past what virtual time (int64 ns) represents: exit 2 naming the key.
scenario() { printf '[scenario]\nduration = 2s\n[cluster]\nbrokers = 1\n%s\n[topic t]\n[producer p]\n' "$1" > "$work/$2.ini"; }
scenario "network.latency = 1e19" latency; expect 2 "\[cluster\] network.latency: '1e19'" -- run "$work/latency.ini" --out "$work/o"
scenario "disk.fsync.latency = 1e308" fsync; expect 2 "disk.fsync.latency" -- run "$work/fsync.ini" --out "$work/o"
scenario "network.latency = uniform:1s..1e300s" uniform; expect 2 "above 100000h" -- run "$work/uniform.ini" --out "$work/o"
scenario "network.latency = 5" bare; expect 2 "without a unit" -- run "$work/bare.ini" --out "$work/o"
printf '[scenario]\nduration = 2s\n[topic t]\n[consumer-group g]\ntopics = t\npoll.interval = 1e308\n' > "$work/poll.ini"
expect 2 "\[consumer-group g\] poll.interval" -- run "$work/poll.ini" --out "$work/o"
expect 2 "of at most 100000h" -- check "$library/acks-durability.ini" --set duration=100001h

# Runs too large to simulate: refused with the estimate; --force is named.
# 16 Mi partitions over 256 topics (one topic's assignment must fit a znode).
{ printf '[scenario]\nduration = 2s\n'
  for i in $(seq 1 256); do printf '[topic t%d]\npartitions = 65536\n' "$i"; done
  printf '[producer p]\ntopic = t1\n'; } > "$work/big.ini"
expect 2 "too large to simulate: an estimated .* --force runs it anyway" -- run "$work/big.ini" --out "$work/o"
expect 2 "--force runs it anyway" -- sweep "$work/big.ini" --seeds 1..2 --out "$work/o"
expect 0 "is valid" -- check "$work/big.ini" --force
printf '[scenario]\nduration = 60h\n[topic t]\n[producer p]\nworkload.rate = 10000\n' > "$work/long.ini"
expect 2 "too large to simulate" -- check "$work/long.ini"

# A device or huge file is read only to the limit and one byte.
expect 2 "larger than 4194304 bytes" -- run /dev/urandom --out "$work/o"
expect 2 "larger than 4194304 bytes" -- check /dev/zero

# A 100,000-character unknown key is echoed cut short.
{ printf '[scenario]\nduration = 2s\n[cluster]\n'; head -c 100000 /dev/zero | tr '\0' k; printf ' = 3\n'; } > "$work/longkey.ini"
out=$("$ksim" check "$work/longkey.ini" 2>&1)
if [ $? -ne 2 ] || [ ${#out} -gt 400 ] || ! grep -q "kkk…: unknown key" <<<"$out"; then
  echo "FAIL: long key not refused cut short: ${out:0:200}"; failures=$((failures + 1))
fi
expect 2 "…" -- check "$library/acks-durability.ini" --set "$(head -c 100000 /dev/zero | tr '\0' k)=3"

# Numbers on the command line: no wrap-around, no sign.
expect 2 "seeds from 0 to 9223372036854775807" -- sweep "$library/acks-durability.ini" --seeds 1..99999999999999999999
expect 2 "seeds from 0 to" -- sweep "$library/acks-durability.ini" --seeds -1..2
expect 2 "K/N" -- sweep "$library/acks-durability.ini" --seeds 1..2 --shard 1/-1
expect 2 "K/N" -- sweep "$library/acks-durability.ini" --seeds 1..2 --shard 1/99999999999
expect 2 "K/N" -- sweep "$library/acks-durability.ini" --seeds 1..2 --shard 1/2/3
expect 2 "not a non-negative integer" -- run "$library/acks-durability.ini" --seed 99999999999999999999
expect 2 "not a non-negative integer" -- run "$library/acks-durability.ini" --seed " 5"
expect 2 "out of range" -- sweep "$library/acks-durability.ini" --seeds 1..2 --jobs 99999999999
expect 2 "must be positive" -- bench engine --steps -3

# A byte-order mark and CRLF change no fingerprint.
src="$library/leader-failure.ini"
{ printf '\xEF\xBB\xBF'; sed 's/$/\r/' "$src"; } > "$work/leader-failure.ini"
"$ksim" run "$src" --out "$work/plain" > /dev/null 2>&1
"$ksim" run "$work/leader-failure.ini" --out "$work/bom" > /dev/null 2>&1
fp() { grep -o '"fingerprint": *"[0-9a-f]*"' "$1/summary.json"; }
if [ -z "$(fp "$work/plain")" ] || [ "$(fp "$work/plain")" != "$(fp "$work/bom")" ]; then
  echo "FAIL: the BOM+CRLF file ran with other fingerprints"; failures=$((failures + 1))
fi

if [ "$failures" -ne 0 ]; then echo "$failures failed"; exit 1; fi
echo "cli_input_limits: all passed"
