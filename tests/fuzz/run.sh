#!/usr/bin/env bash
# run.sh FUZZER SECONDS [WORK]: fuzzes one libFuzzer target for SECONDS with
# the seed corpus and the dictionary, at low priority and one job (the machine
# is shared). New inputs go to WORK/corpus (default: the fuzzer's directory),
# a crash to WORK/crash-*; the exit status is libFuzzer's (non-zero on a
# crash). A crash found is kept: copy it into tests/fuzz/regressions/TARGET/,
# where ctest replays it, and fix it.
#   fuzz_scenario: seeds are scenarios/ and tests/data/scenarios/
#   fuzz_simulate: seeds are tests/fuzz/corpus/simulate/
set -euo pipefail
fuzzer=${1:?usage: run.sh FUZZER SECONDS [WORK]} seconds=${2:?seconds}
here=$(cd "$(dirname "$0")" && pwd) root=$(cd "$(dirname "$0")/../.." && pwd)
work=${3:-$(dirname "$fuzzer")/work-$(basename "$fuzzer")}
mkdir -p "$work/corpus"
case "$(basename "$fuzzer")" in
  fuzz_simulate*) seeds=("$here/corpus/simulate" "$here/regressions/simulate"); timeout=30 ;;
  *) seeds=("$root/scenarios" "$root/tests/data/scenarios" "$here/regressions/scenario"); timeout=10 ;;
esac
# The first directory receives new inputs; the seed directories are only read.
exec nice -n 10 "$fuzzer" -max_total_time="$seconds" -max_len=65536 -timeout="$timeout" \
  -rss_limit_mb=3072 -dict="$here/scenario.dict" -artifact_prefix="$work/" -print_final_stats=1 \
  "$work/corpus" "${seeds[@]}"
