#!/usr/bin/env bash
# Space-time diagrams. `ksim run` writes one per explained pattern beside
# the report (RUN-ANOMALY-pattern-K.svg) and inlines it in report.html;
# `ksim diagram` draws any window of a capsule's or a scenario's run. Every
# SVG parses as XML (python3's xml.etree) and has its lanes, arrows, bands
# and labels; the same window drawn twice is the same file; bad arguments
# exit 2 with a message naming them.
set -uo pipefail
ksim=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# check SVG LANES MIN_MESSAGES PYTHON_ASSERTIONS: parses SVG and checks the
# lanes (comma-separated, in order; "" for any) and at least MIN_MESSAGES
# arrows, then runs the assertions with lanes, messages, bands, labels, text.
check() {
  python3 - "$@" <<'PY'
import sys, xml.etree.ElementTree as ET
path, want_lanes, min_messages, extra = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
svg = "{http://www.w3.org/2000/svg}"
root = ET.parse(path).getroot()
groups = lambda c: [g for g in root.iter(svg + "g") if g.get("class") == c]
lanes = [g.get("data-node") for g in groups("lane")]
messages = groups("message")
bands = groups("band")
labels = groups("label")
text = " ".join("".join(t.itertext()) for t in root.iter(svg + "text"))
if want_lanes:
    assert lanes == want_lanes.split(","), lanes
assert len(messages) >= min_messages, len(messages)
for m in messages:
    assert m.find(svg + "title") is not None and m.get("data-type"), m.attrib
    assert m.find(svg + "line") is not None or m.find(svg + "path") is not None
exec(extra)
PY
}

# ---- the report's diagrams ----
"$ksim" run "$source_dir/scenarios/leader-failure.ini" --out "$work/lf" >/dev/null || fail "leader-failure run"
pattern="$work/lf/run1-acks-1-lost-write-pattern-1.svg"
[ -f "$pattern" ] || fail "no $pattern"
check "$pattern" "producer-writer,broker-1,broker-2,broker-3,zk" 20 '
types = {m.get("data-type") for m in messages}
assert {"Produce request", "Produce response", "LeaderAndIsr request", "ZooKeeper request"} <= types, types
assert any(b.get("data-kind") == "down" and b.get("data-node") == "broker-2" for b in bands), [b.attrib for b in bands]
steps = sorted(int(l.get("data-step")) for l in labels if l.get("data-kind") == "step")
assert steps[:2] == [1, 2] and len(steps) >= 5, steps
assert any(m.get("data-step") == "true" and m.get("data-type") == "LeaderAndIsr request" for m in messages)
assert "ack orders-0 offset" in text and "HW" in text and "epoch" in text and "ISR [" in text, text[:400]
assert "leader of orders-0, epoch 1" in text and "truncated orders-0" in text
assert "later" in text and "left out" in text
' || fail "$pattern"
for f in run1-acks-1-lost-write-pattern-2 run1-acks-1-lost-write-pattern-3; do
  check "$work/lf/$f.svg" "" 5 'assert bands and labels' || fail "$f.svg"
done
# A pattern whose moments fall where the run kept no messages (the trace
# keeps those near cluster events) draws its steps and says so.
check "$work/lf/run1-acks-1-nonmonotonic-send-pattern-1.svg" "" 0 '
assert bands and labels
assert messages or "may be missing" in text, text[:300]
' || fail "run1-acks-1-nonmonotonic-send-pattern-1.svg"
ls "$work/lf" | grep -q "run2-.*pattern" && fail "acks=all has no anomaly, yet a diagram"
python3 - "$work/lf/report.html" "$work/lf/report.md" <<'PY' || fail "report.html/md do not show the diagrams"
import sys
html, md = open(sys.argv[1]).read(), open(sys.argv[2]).read()
import glob, os
patterns = sorted(os.path.basename(p)[:-4] for p in glob.glob(os.path.dirname(sys.argv[1]) + "/run*-pattern-*.svg"))
assert len(patterns) >= 4, patterns
inline = html.count('class="ksim-diagram"')
assert 1 <= inline <= len(patterns), (inline, patterns)
# every pattern's diagram is in the page or linked from it
for p in patterns:
    assert ('id="%s"' % p) in html or ('href="%s.svg"' % p) in html, p
assert "<?xml" not in html
assert html.index('id="run1-acks-1-lost-write-pattern-1"') < html.index("<h2>Durability</h2>")
assert "](run1-acks-1-lost-write-pattern-1.svg)" in md
PY

# ---- ksim diagram ----
capsule="$work/lf/capsule.json"
out=$("$ksim" diagram "$capsule" --from 16s --to 16012ms --out "$work/w1.svg") || fail "diagram of a capsule: $out"
case "$out" in *"wrote $work/w1.svg: 6 lanes"*) ;; *) fail "diagram said: $out" ;; esac
check "$work/w1.svg" "producer-writer,broker-1,broker-2,broker-3,zk,admin" 30 '
types = {m.get("data-type") for m in messages}
assert {"ZooKeeper request", "ZooKeeper reply", "ZooKeeper watch event", "LeaderAndIsr request"} <= types, types
assert any(m.get("data-dropped") == "true" for m in messages)
assert [b.get("data-kind") for b in bands] == ["down"], [b.attrib for b in bands]
assert "leader of orders-0, epoch 1, LEO 13464, HW 13056" in text, text[:300]
assert "session 0x3 expired" in text
' || fail "w1.svg"
"$ksim" diagram "$work/lf" --from 16s --to 16012ms --out "$work/w1-again.svg" >/dev/null || fail "diagram of a directory"
cmp -s "$work/w1.svg" "$work/w1-again.svg" || fail "the same window drew two different files"
"$ksim" diagram "$source_dir/scenarios/leader-failure.ini" --seed 1 --from 19998ms --to 20.012s \
  --nodes broker:1,broker-2,zk --out "$work/w2.svg" >/dev/null || fail "diagram of a scenario"
check "$work/w2.svg" "broker-1,broker-2,zk" 10 '
assert "truncated orders-0: LEO 13676 → 6528" in text, text[:300]
assert not any(m.get("data-type", "").startswith("Produce") for m in messages)
assert "off these lanes" in text
' || fail "w2.svg"
"$ksim" diagram "$source_dir/scenarios/leader-failure.ini" --run 2 --from 30s --to 30.01s \
  --out "$work/w3.svg" >/dev/null || fail "diagram of run 2"
check "$work/w3.svg" "" 3 'assert any(b.get("data-kind") == "power-loss" for b in bands), [b.attrib for b in bands]' \
  || fail "w3.svg"
(cd "$work" && "$ksim" diagram "$capsule" --from 9.8s --to 9.85s >/dev/null) || fail "default --out"
[ -f "$work/leader-failure-run1-9800ms-9850ms.svg" ] || fail "no default output file: $(ls "$work")"

# ---- bad arguments: exit 2 and a message naming the problem ----
bad() {
  local want=$1
  shift
  message=$("$ksim" diagram "$@" 2>&1 >/dev/null)
  status=$?
  [ "$status" -eq 2 ] || fail "ksim diagram $*: exit $status (want 2)"
  case "$message" in *"$want"*) ;; *) fail "ksim diagram $*: said '$message', want '$want'" ;; esac
}
lf="$source_dir/scenarios/leader-failure.ini"
bad "give the window with --from and --to" "$capsule" --from 1s
bad "give exactly one capsule or scenario file" --from 1s --to 2s
bad "--from: '10' needs a unit" "$capsule" --from 10 --to 20s
bad "unknown unit 'parsec'" "$capsule" --from 1parsec --to 20s
bad "--from 20s is not before --to 10s" "$capsule" --from 20s --to 10s
bad "--run 3: the scenario makes 2 runs" "$capsule" --run 3 --from 1s --to 2s
bad "--run: 'x' is not a run number" "$capsule" --run x --from 1s --to 2s
bad "--from 100s: the run ends at 80.000 s" "$capsule" --from 100s --to 101s
bad "--seed and --set do not go with a capsule" "$capsule" --seed 2 --from 1s --to 2s
bad "--seed: 'minus' is not a non-negative integer" "$lf" --seed minus --from 1s --to 2s
bad "--nodes: no node 'broker-9' in this run" "$capsule" --nodes broker:9 --from 1s --to 1.01s
bad "--nodes: 'zk' is named twice" "$capsule" --nodes zk,zk --from 1s --to 1.01s
bad "has an empty node name" "$capsule" --nodes broker:1,,zk --from 1s --to 2s
bad "no-such.ini" "$work/no-such.ini" --from 1s --to 2s
bad "no-such.json" "$work/no-such.json" --from 1s --to 2s

[ "$failures" -eq 0 ] || exit 1
echo "cli_diagram: all checks passed"
