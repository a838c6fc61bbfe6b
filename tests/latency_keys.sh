#!/usr/bin/env bash
# Each latency key moves the measured latency the way Kafka's behaviour
# predicts. One short scenario per key, a [vary] over two values, and the
# direction of the change in produce p50.
#
# Tolerance: each pair of values is chosen so that the predicted change is a
# large multiple of the run's noise, and the assertion only asks for the
# direction with a margin (factor below): e.g. linger.ms 0 -> 40 at 100
# records/s adds about the linger to every record (a batch never fills), so
# p50 must rise by well over 10 ms; num.io.threads 8 -> 1 at ρ ≈ 0.8 per
# thread-equivalent multiplies the queueing delay several times. The seeds
# are fixed, so the outcome is reproducible; nothing here reads a clock.
set -uo pipefail
ksim=$1 out=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$out" && mkdir -p "$out"

# scenario NAME EXTRA_CLUSTER EXTRA_PRODUCER VARY [CONSUMER]
scenario() {
  cat > "$out/$1.ini" <<INI
[scenario]
name = $1
duration = 2s
quiet = 1s
seed = 1

[cluster]
brokers = 1
network.latency = const:200us
$2

[topic t]
partitions = 1
replication.factor = 1
min.insync.replicas = 1

[producer writer]
topic = t
acks = 1
workload.arrival = poisson
workload.record.size = const:100
$3
${5:-}

[vary]
$4
INI
}

# check NAME METRIC LOW_LABEL HIGH_LABEL FACTOR: p50 at HIGH_LABEL > FACTOR * p50 at LOW_LABEL
check() {
  "$ksim" run "$out/$1.ini" --out "$out/$1" >/dev/null 2>"$out/$1.err" ||
    fail "$1: ksim run: $(cat "$out/$1.err")"
  python3 - "$out/$1/summary.json" "$2" "$3" "$4" "$5" <<'PY' || fail "$1"
import json, sys
path, metric, low, high, factor = sys.argv[1:]
runs = {r["label"]: r for r in json.load(open(path))["runs"]}
def p50(run):
    return run["latency_ms"]["produce"]["p50"]
a, b = p50(runs[low]), p50(runs[high])
print(f"{low}: {a:.3f} ms  {high}: {b:.3f} ms")
assert b > float(factor) * a, (low, a, high, b)
PY
}

scenario linger "" "workload.rate = 100" "linger.ms = 0, 40"
check linger produce linger.ms=0 linger.ms=40 2

# With a long linger, a batch that fills (batch.size a few records) goes at once.
scenario batch "" "workload.rate = 2000
linger.ms = 50" "batch.size = 512, 16384"
check batch produce batch.size=512 batch.size=16384 2

# A connection has one request in the broker at a time (muting), so the I/O
# threads matter when several producers' connections compete for them.
producers="
[producer w2]
topic = t
acks = 1
workload.arrival = poisson
workload.rate = 600
linger.ms = 0

[producer w3]
topic = t
acks = 1
workload.arrival = poisson
workload.rate = 600
linger.ms = 0

[producer w4]
topic = t
acks = 1
workload.arrival = poisson
workload.rate = 600
linger.ms = 0"
scenario io "num.io.threads = 8
ksim.request.time = 400us
ksim.request.service.distribution = exponential" "workload.rate = 600
linger.ms = 0" "num.io.threads = 8, 1" "$producers"
check io produce num.io.threads=8 num.io.threads=1 1.5

scenario rtime "ksim.request.service.distribution = exponential" "workload.rate = 500
linger.ms = 0" "ksim.request.time = 50us, 1500us"
check rtime produce ksim.request.time=50us ksim.request.time=1500us 1.5

# Muting (request_channel.c, invariant 4): one producer pipelining up to five
# requests on its connection to a broker with 8 I/O threads and exponential
# service times. Handled concurrently, its requests would be appended out of
# order and retried into duplicates; muted, they are handled one at a time.
scenario mute "num.io.threads = 8
ksim.request.time = 400us
ksim.request.service.distribution = exponential" "workload.rate = 2000
linger.ms = 0" "num.io.threads = 8"
"$ksim" run "$out/mute.ini" --out "$out/mute" >/dev/null 2>"$out/mute.err" ||
  fail "mute: ksim run: $(cat "$out/mute.err")"
python3 - "$out/mute/summary.json" <<'PY' || fail "mute: pipelined requests were not handled in order"
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
bad = {k: v for k, v in run["anomalies"].items() if v}
print("anomalies:", bad)
assert run["latency_ms"]["produce"]["count"] > 1000 and not bad, bad
PY

# buffer.memory bounds the accumulator: against a broker slower than the
# offered load (500ms per MiB, 3 MB/s offered), a 32 MiB buffer queues
# records for hundreds of ms, while a 64 KiB one with max.block.ms = 0 fails
# the sends that find it full (BufferExhaustedException) and keeps the queue,
# and so the acknowledged records' latency, short.
scenario buffer "ksim.request.mib.time = 500ms
ksim.request.service.distribution = exponential" "workload.rate = 3000
workload.record.size = const:1000
linger.ms = 0
max.block.ms = 0" "buffer.memory = 33554432, 65536"
# The template's 100-byte records give way to these 1 KB ones.
sed -i 's/^workload.record.size = const:100$//' "$out/buffer.ini"
"$ksim" run "$out/buffer.ini" --out "$out/buffer" >/dev/null 2>"$out/buffer.err" ||
  fail "buffer: ksim run: $(cat "$out/buffer.err")"
python3 - "$out/buffer/summary.json" <<'PY' || fail "buffer.memory"
import json, sys
runs = {r["label"]: r for r in json.load(open(sys.argv[1]))["runs"]}
big, small = runs["buffer.memory=33554432"], runs["buffer.memory=65536"]
p50 = lambda r: r["latency_ms"]["produce"]["p50"]
print(f"32 MiB: p50 {p50(big):.3f} ms, {big['produce']['failed']} failed; "
      f"64 KiB: p50 {p50(small):.3f} ms, {small['produce']['failed']} failed")
assert p50(big) > 10 * p50(small), (p50(big), p50(small))
assert small["produce"]["failed"] > 2 * big["produce"]["failed"]
PY

# fetch.min.bytes holds a consumer's fetch until that many bytes can be read
# below the HW, or fetch.max.wait.ms passes (Kafka's DelayedFetch): at 100
# records/s of 100 bytes, 1 MB never accumulates, so every fetch waits the
# full 300 ms and end-to-end delivery slows by about half of it at p50.
scenario fetch "group.initial.rebalance.delay.ms = 0" "workload.rate = 100
linger.ms = 0" "fetch.min.bytes = 1, 1000000" "
[consumer-group readers]
topics = t
members = 1
auto.offset.reset = earliest
fetch.max.wait.ms = 300"
"$ksim" run "$out/fetch.ini" --out "$out/fetch" >/dev/null 2>"$out/fetch.err" ||
  fail "fetch: ksim run: $(cat "$out/fetch.err")"
python3 - "$out/fetch/summary.json" <<'PY' || fail "fetch.min.bytes"
import json, sys
runs = {r["label"]: r["consumers"]["readers"] for r in json.load(open(sys.argv[1]))["runs"]}
one, big = runs["fetch.min.bytes=1"], runs["fetch.min.bytes=1000000"]
print(f"fetch.min.bytes=1: e2e p50 {one['e2e_p50_ms']:.3f} ms ({one['polled']} polled); "
      f"1000000: {big['e2e_p50_ms']:.3f} ms ({big['polled']} polled)")
assert one["polled"] > 50 and big["polled"] > 50, (one["polled"], big["polled"])
assert big["e2e_p50_ms"] > one["e2e_p50_ms"] + 75, (one["e2e_p50_ms"], big["e2e_p50_ms"])
PY
