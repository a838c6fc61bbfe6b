#!/usr/bin/env bash
# A sweep's results do not depend on --jobs, and shards merge into the same
# result: runs seeds 1..4 with 1 job, with 2 jobs, and as two shards merged,
# and compares the three sweep.jsonl files byte for byte.
set -euo pipefail
ksim=$1 scenario=$2 out=$3
rm -rf "$out"
"$ksim" sweep "$scenario" --seeds 1..4 --jobs 1 --out "$out/one" >/dev/null
"$ksim" sweep "$scenario" --seeds 1..4 --jobs 2 --out "$out/two" >/dev/null
"$ksim" sweep "$scenario" --seeds 1..4 --shard 1/2 --out "$out/shard1" >/dev/null
"$ksim" sweep "$scenario" --seeds 1..4 --shard 2/2 --out "$out/shard2" >/dev/null
"$ksim" sweep --merge "$out/shard1" "$out/shard2" --out "$out/merged" >/dev/null
test "$(wc -l < "$out/one/sweep.jsonl")" -eq 4
cmp "$out/one/sweep.jsonl" "$out/two/sweep.jsonl"
cmp "$out/one/sweep.jsonl" "$out/merged/sweep.jsonl"
# The same seed gives the same fingerprints: run seed 3 again on its own.
"$ksim" sweep "$scenario" --seeds 3..3 --jobs 1 --out "$out/again" >/dev/null
grep '"seed":3,' "$out/one/sweep.jsonl" | cmp - "$out/again/sweep.jsonl"
echo "sweep results are the same with 1 and 2 jobs, sharded and merged, and on replay"
