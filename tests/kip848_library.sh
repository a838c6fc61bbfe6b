#!/usr/bin/env bash
# KIP-848 groups (group.protocol = consumer) in library scenarios written for
# the classic protocol, whose expectations must still hold:
# - chaos-clients: an exactly-once pipeline and a group of readers under
#   random broker crashes and isolations. Each coordinator move recreates the
#   group at the new coordinator; its group epoch must go on from the stored
#   one, or a member epoch given again lets an old transaction's offsets pass
#   and exactly once breaks (pipeline_duplicate > 0).
set -uo pipefail
ksim=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
run() { # run SCENARIO [--set ...]
  local scenario=$1; shift
  if ! "$ksim" run "$source_dir/scenarios/$scenario.ini" --out "$work/$scenario" "$@" \
      > "$work/log" 2>&1; then
    echo "FAIL: $scenario $*:"; grep -A3 "expectations failed\|assertion" "$work/log"
    failures=$((failures + 1))
  fi
}
run chaos-clients --set group.protocol=consumer
if [ "$failures" -ne 0 ]; then echo "$failures failures"; exit 1; fi
echo "KIP-848 groups keep the library's expectations"
