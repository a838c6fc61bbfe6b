#!/usr/bin/env bash
# The comparison of a scenario's [vary] runs: a table of the runs side by
# side, durability against latency on one plot, and, along an offered load,
# the latency curves with their knees (report.md, report.html,
# comparison*.csv, summary.json).
set -uo pipefail
ksim=$1 source_dir=$2 work=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work"

"$ksim" run "$source_dir/scenarios/latency-vs-load.ini" --out "$work/lvl" >/dev/null ||
  fail "latency-vs-load run"
out=$work/lvl
# A row per run (5 rates x 2 acks), the varied keys as columns.
head -1 "$out/comparison.csv" | grep -q '^number,run,workload.rate,acks,acked,lost_write,' ||
  fail "comparison.csv header: $(head -1 "$out/comparison.csv")"
[ "$(tail -n +2 "$out/comparison.csv" | wc -l)" -eq 10 ] || fail "comparison.csv rows"
# Two curves (acks=1, acks=all) of five loads each.
[ "$(tail -n +2 "$out/comparison-load-1.csv" | wc -l)" -eq 5 ] || fail "curve 1 points"
[ "$(tail -n +2 "$out/comparison-load-2.csv" | wc -l)" -eq 5 ] || fail "curve 2 points"
python3 - "$out/summary.json" <<'PY' || fail "summary.json comparison"
import json, sys
c = json.load(open(sys.argv[1]))["comparison"]
assert c["load_key"] == "workload.rate", c["load_key"]
curves = {k["label"]: k for k in c["curves"]}
assert sorted(curves) == ["acks=1", "acks=all"], sorted(curves)
for label, curve in curves.items():
    loads = [p["load"] for p in curve["points"]]
    assert loads == sorted(loads) and len(loads) == 5, (label, loads)
    p99 = [p["p99_ms"] for p in curve["points"]]
    # A knee exists, inside the curve, and p99 beyond it grows faster
    # than before it: the curve bends upward there.
    k = loads.index(curve["knee"])
    assert 0 < k < 4, (label, k)
    before = (p99[k] - p99[0]) / (loads[k] - loads[0])
    after = (p99[-1] - p99[k]) / (loads[-1] - loads[k])
    assert after > 2 * before, (label, before, after)
# acks=all waits for followers through the same queues: its knee comes at
# a lower load than acks=1's.
assert curves["acks=all"]["knee"] < curves["acks=1"]["knee"], curves
PY
[ "$(tail -n +2 "$out/comparison-knees.csv" | wc -l)" -eq 2 ] || fail "knees"
grep -q '^## Comparison' "$out/report.md" || fail "report.md has no comparison"
grep -q '^| workload.rate | acks=1 p50 ms | acks=1 p99 ms | acks=all p50 ms | acks=all p99 ms |' \
  "$out/report.md" || fail "report.md has no load table"
grep -q '(knee)' "$out/report.md" || fail "report.md marks no knee"
python3 "$source_dir/tests/report_html_check.py" "$out/report.html" 10 ||
  fail "latency-vs-load: report.html"
if command -v gnuplot >/dev/null; then
  for plot in comparison-tradeoff comparison-load; do
    [ -s "$out/$plot.svg" ] || fail "$plot.svg missing"
    grep -q "alt=\"[^\"]*\"" "$out/report.html" || fail "report.html has no images"
  done
fi

# A [vary] over a key that is not a load (acks): the side-by-side table and
# the trade-off, no load curve.
"$ksim" run "$source_dir/scenarios/acks-durability.ini" --out "$work/ad" >/dev/null ||
  fail "acks-durability run"
grep -q '^| # | acks | metadata.mode | Lost | Duplicated | Reordered | p50 ms | p99 ms | Availability |' \
  "$work/ad/report.md" || fail "acks-durability: no side-by-side table"
[ ! -e "$work/ad/comparison-load-1.csv" ] || fail "acks-durability: a load curve over acks"
python3 -c 'import json,sys; assert "comparison" not in json.load(open(sys.argv[1]))' \
  "$work/ad/summary.json" || fail "acks-durability: summary.json has a load comparison"

# One run (a [vary] narrowed by --set to one value of each key): no comparison.
"$ksim" run "$source_dir/scenarios/latency-vs-load.ini" --set workload.rate=3000 --set acks=1 \
  --out "$work/one" >/dev/null 2>&1
[ ! -e "$work/one/comparison.csv" ] || fail "a single run has a comparison"
echo ok
