#!/usr/bin/env bash
# Sweep results survive: a sweep killed with kill -9 keeps every finished
# seed in its journal, its workers die with it, and --resume runs only the
# missing seeds, to the same sweep.jsonl as an uninterrupted sweep; a
# directory of another seed range or scenario text is refused, naming the
# difference; a worker that crashes fails its seed (with the signal) and the
# sweep carries on; --merge refuses shards of different sweeps and lists
# missing seeds; failing seeds keep their replay lines through a merge.
set -uo pipefail
ksim=$1 scenario=$2 other=$3 out=$4
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$out" && mkdir -p "$out"

# The reference: one uninterrupted sweep.
"$ksim" sweep "$scenario" --seeds 1..12 --jobs 2 --recheck 25% --out "$out/whole" >/dev/null ||
  fail "the uninterrupted sweep"
[ "$(wc -l < "$out/whole/sweep.jsonl")" -eq 12 ] || fail "the uninterrupted sweep has not 12 seeds"
[ ! -e "$out/whole.journal.jsonl" ] || fail "a finished sweep left its journal"

# Killed mid-way: wait until some seeds are in the journal, then kill -9.
"$ksim" sweep "$scenario" --seeds 1..12 --jobs 2 --recheck 25% --out "$out/killed" \
  >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  lines=0
  [ -e "$out/killed.journal.jsonl" ] && lines=$(wc -l < "$out/killed.journal.jsonl")
  [ "$lines" -ge 4 ] && break
  sleep 0.05
done
kill -9 "$pid"
wait "$pid" 2>/dev/null
done_before=$(($(wc -l < "$out/killed.journal.jsonl") - 1))
[ "$done_before" -ge 3 ] && [ "$done_before" -lt 12 ] ||
  fail "the journal holds $done_before seeds, want some but not all"
[ ! -e "$out/killed" ] || fail "a killed sweep left a report directory"
sleep 0.5
if pgrep -f -- "--out $out/killed" >/dev/null; then fail "workers outlived the sweep"; fi

# Without --resume the journal is not overwritten.
message=$("$ksim" sweep "$scenario" --seeds 1..12 --jobs 2 --recheck 25% --out "$out/killed" 2>&1)
[ $? -eq 2 ] || fail "a sweep over an interrupted one without --resume was not refused"
grep -q -- "--resume" <<<"$message" || fail "the refusal does not mention --resume: $message"

resumed=$("$ksim" sweep "$scenario" --seeds 1..12 --jobs 2 --recheck 25% --out "$out/killed" \
  --resume) || fail "the resumed sweep"
grep -q "seeds done" <<<"$resumed" || fail "the resume does not say what was done: $resumed"
cmp "$out/whole/sweep.jsonl" "$out/killed/sweep.jsonl" ||
  fail "the resumed sweep.jsonl differs from the uninterrupted one"
[ ! -e "$out/killed.journal.jsonl" ] || fail "a finished resume left its journal"
grep -q '"recheck":"same"' "$out/whole/sweep.jsonl" || fail "no seed was rechecked"

# Another seed range, another scenario text: refused, naming the difference.
message=$("$ksim" sweep "$scenario" --seeds 1..5 --jobs 2 --out "$out/whole" 2>&1)
[ $? -eq 2 ] || fail "another seed range was not refused"
grep -q "another seed range (1..12, not 1..5)" <<<"$message" || fail "range message: $message"
message=$("$ksim" sweep "$other" --seeds 1..12 --jobs 2 --out "$out/whole" 2>&1)
[ $? -eq 2 ] || fail "another scenario was not refused"
grep -q "another scenario text" <<<"$message" || fail "scenario message: $message"

# A crashing worker: seed 3 fails with its signal, every other seed runs.
stdout=$(KSIM_TEST_SWEEP_CRASH=3 "$ksim" sweep "$scenario" --seeds 1..6 --jobs 2 --recheck 0 \
  --out "$out/crash" 2>/dev/null)
[ $? -eq 1 ] || fail "a sweep with a crashed seed did not exit 1"
[ "$(wc -l < "$out/crash/sweep.jsonl")" -eq 6 ] || fail "the sweep did not carry on after a crash"
grep -q "seed 3: ksim run" <<<"$stdout" || fail "the crashed seed has no replay line: $stdout"
grep -q "failed: the worker died of signal 6" <<<"$stdout" || fail "no signal named: $stdout"
[ "$(grep -c '"passed":false' "$out/crash/sweep.jsonl")" -eq 1 ] || fail "not exactly one failure"

# Shards merge; their failures keep their replay lines.
"$ksim" sweep "$scenario" --seeds 1..4 --jobs 1 --recheck 0 --shard 1/2 --out "$out/s1" >/dev/null
KSIM_TEST_SWEEP_CRASH=4 "$ksim" sweep "$scenario" --seeds 1..4 --jobs 1 --recheck 0 --shard 2/2 \
  --out "$out/s2" >/dev/null 2>&1
"$ksim" sweep "$scenario" --seeds 1..6 --jobs 1 --recheck 0 --shard 2/2 --out "$out/s2wide" \
  >/dev/null
stdout=$("$ksim" sweep --merge "$out/s1" "$out/s2" --out "$out/merged")
[ $? -eq 1 ] || fail "a merge with a failed seed did not exit 1"
grep -q "seed 4: ksim run .* --seed 4" <<<"$stdout" || fail "merged failure lost its replay: $stdout"
message=$("$ksim" sweep --merge "$out/s1" "$out/s1" --out "$out/merged2" 2>&1)
[ $? -eq 2 ] && grep -q "given twice" <<<"$message" || fail "a shard given twice: $message"
message=$("$ksim" sweep --merge "$out/s1" "$out/s2wide" --out "$out/merged3" 2>&1)
[ $? -eq 2 ] && grep -q "another seed range" <<<"$message" || fail "shards of two ranges: $message"
stdout=$("$ksim" sweep --merge "$out/s1" --out "$out/merged4")
[ $? -eq 2 ] && grep -q "missing seeds (2 of 1..4): 2 4" <<<"$stdout" || fail "missing: $stdout"
echo "killed sweeps resume to the same results; crashes, mixed shards and missing seeds are reported"
