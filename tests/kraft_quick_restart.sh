#!/usr/bin/env bash
# A KRaft leader back within its broker session (tests/data/kraft-quick-restart.ini):
# - with the scenario's quiet period, the old registration is fenced when its
#   session lapses (about 9 s after its last heartbeat), a follower leads,
#   the broker registers again after its exponential backoff (its try at
#   about 17.8 s, the first after the fencing), and the expectations
#   (nothing lost) hold;
# - with a quiet period that ends before the session lapses, the partition
#   is leaderless at the end: the liveness check fails (status 1), and the
#   records the crashed leader acknowledged above the followers' HW are
#   `leaderless`, not lost writes;
# - shut down cleanly instead (controlled shutdown: the controller fences it
#   when it lets it go, at about 6 s) and restarted at 7 s, the broker
#   registers at once: a fenced broker has no valid session
#   (BrokerHeartbeatManager.hasValidSession), whenever it was last heard.
set -uo pipefail
ksim=$1
scenario=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

"$ksim" run "$scenario" --out "$work/full" > "$work/full.log" 2>&1 ||
  fail "the full run: $(sed -n '/^expectations failed:/,$p' "$work/full.log")"
fenced=$(grep -o '^| [0-9.]* | session | controller [0-9]* fenced broker [0-9] (its session timed out' \
  "$work/full/report.md" | head -1 | awk '{print $2}')
python3 -c 'import sys; sys.exit(0 if 12 < float(sys.argv[1]) < 13.5 else 1)' "${fenced:-0}" ||
  fail "the old registration was fenced at '${fenced}' s, not one session after the crash"
back=$(grep -o '^| [0-9.]* | session | broker [0-9] registered' "$work/full/report.md" |
  tail -1 | awk '{print $2}')
python3 -c 'import sys; sys.exit(0 if 17.5 < float(sys.argv[1]) < 18.2 else 1)' "${back:-0}" ||
  fail "the restarted broker registered again at '${back}' s, not at its backoff's try after 12.3 s"

"$ksim" run "$scenario" --set quiet=2s --out "$work/short" > "$work/short.log" 2>&1
status=$?
[ "$status" -eq 1 ] && grep -q 'liveness: .*orders-0 has no leader' "$work/short.log" ||
  fail "the short run: status $status, no liveness failure naming orders-0"
python3 - "$work/short/summary.json" <<'PY' || fail "the short run counted a loss"
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
lost, held = run["anomalies"]["lost_write"], run["produce"].get("leaderless", 0)
print(f"lost_write {lost}, leaderless {held}")
sys.exit(0 if lost == 0 and held > 0 else 1)
PY

"$ksim" run "$scenario" --set 'fault leader-crash:action=shutdown' \
  --set 'fault leader-crash:duration=3s' --out "$work/clean" > "$work/clean.log" 2>&1 ||
  fail "the clean restart: $(sed -n '/^expectations failed:/,$p' "$work/clean.log")"
again=$(grep -o '^| [0-9.]* | session | broker [0-9] registered' "$work/clean/report.md" |
  tail -1 | awk '{print $2}')
python3 -c 'import sys; sys.exit(0 if 7 <= float(sys.argv[1]) < 7.5 else 1)' "${again:-0}" ||
  fail "the cleanly shut down broker registered again at '${again}' s, not at its restart (7 s)"
exit $((failures > 0))
