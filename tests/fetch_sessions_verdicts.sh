#!/usr/bin/env bash
# Incremental fetch sessions (KIP-227) change what a fetch carries, never
# what a replica ends with: library scenarios whose faults hit followers and
# leaders give the same verdicts with sessions (the default) as with
# max.incremental.fetch.session.cache.slots = 0 (every fetch full). The
# verdicts are each run's expectations, its anomaly counts (lost, duplicate,
# reordered, ...), its consumers' anomalies and its invariant violations;
# fingerprints differ (fetches are smaller), and are not compared.
set -uo pipefail
ksim=$1 scenarios=$2 out=$3
rm -rf "$out" && mkdir -p "$out"
failures=0
verdicts() {
  python3 - "$1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
for r in s["runs"]:
    consumers = r.get("consumers") or {}
    keys = ("lost_consumption", "duplicate_consumption", "poll_skip", "nonmonotonic_poll",
            "truncated_read")
    groups = {g: [v.get(k) for k in keys] for g, v in sorted(consumers.items())}
    print(r["label"], r["expectations"]["passed"], sorted(r["anomalies"].items()),
          r["invariant_violations"], len(r["violations"] or []), groups)
PY
}
for name in leader-failure follower-failure hw-truncation kip-279 unclean-election \
            consumer-truncation; do
  for mode in sessions full; do
    set_args=()
    [ "$mode" = full ] && set_args=(--set max.incremental.fetch.session.cache.slots=0)
    "$ksim" run "$scenarios/$name.ini" "${set_args[@]}" --out "$out/$name-$mode" \
      > "$out/$name-$mode.log" 2>&1
    echo "exit $?" > "$out/$name-$mode.verdicts"
    verdicts "$out/$name-$mode/summary.json" >> "$out/$name-$mode.verdicts" ||
      { echo "FAIL: $name ($mode): no summary"; failures=$((failures + 1)); }
  done
  if ! diff -u "$out/$name-full.verdicts" "$out/$name-sessions.verdicts"; then
    echo "FAIL: $name: verdicts differ with fetch sessions"
    failures=$((failures + 1))
  fi
done
[ "$failures" -eq 0 ] || exit 1
echo "fetch sessions: same verdicts as full fetches"
