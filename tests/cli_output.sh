#!/usr/bin/env bash
# The report directory as a whole: a run killed at any step of writing its
# report leaves the complete old report or the complete new one, never a mix,
# and the next run removes what the killed one left; a full disk (the test
# hook KSIM_TEST_OUTFILE_FAULT of reports/outfile.h, which only the report
# writer reads) gives the system's message, exit status 2 and no partial
# report; an --out that cannot be written is refused before the simulation;
# a scenario name that is not a safe directory name is refused; a sweep of a
# scenario named with quotes writes valid JSON.
#   cli_output.sh KSIM SCENARIO_DIR WORK_DIR
set -uo pipefail
ksim=$1 data=$2 work=$3
scenario=$data/small-report.ini
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
rm -rf "$work" && mkdir -p "$work" || exit 1

# The seed a report says it is of, from its summary.json.
seed_of() {
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["seed"])' "$1/summary.json" \
    2>/dev/null || echo none
}
# TRUE when report directory $1 is exactly reference $2: the same file names,
# the same bytes in every file but the three that record wall-clock times,
# and the same seed.
same_report() {
  diff <(cd "$1" && ls -A) <(cd "$2" && ls -A) >/dev/null || return 1
  local f
  for f in "$2"/*; do
    case ${f##*/} in summary.json | report.md | report.html) continue ;; esac
    cmp -s "$f" "$1/${f##*/}" || return 1
  done
  [ "$(seed_of "$1")" = "$(seed_of "$2")" ]
}
# The temporaries beside report directory $1 (.NAME.tmp-*, .NAME.old-*).
leftovers() {
  local parent base
  parent=$(dirname "$1") base=$(basename "$1")
  (cd "$parent" && ls -A | grep -E "^\.$base\.(tmp|old)-" || true)
}

# References: complete reports of seed 1 (the old one) and seed 2 (the new).
"$ksim" run "$scenario" --seed 1 --out "$work/ref1" >/dev/null 2>&1 || fail "reference seed 1"
"$ksim" run "$scenario" --seed 2 --out "$work/ref2" >/dev/null 2>&1 || fail "reference seed 2"
same_report "$work/ref1" "$work/ref2" && fail "seeds 1 and 2 give the same report"
# Steps 1..F are the F files written through the report writer (not the
# images gnuplot draws), F+1 the commit before the rename, F+2 right after.
files=$(cd "$work/ref1" && ls | grep -vc -E '\.(svg|png)$')

# Killed at every step: the old report until the rename, the new one after.
out=$work/killed/report
for ((step = 1; step <= files + 3; step++)); do
  rm -rf "$work/killed" && cp -r "$work/ref1" "$work/killed-ref" && mkdir -p "$work/killed" &&
    mv "$work/killed-ref" "$out"
  KSIM_TEST_OUTFILE_FAULT=kill:$step "$ksim" run "$scenario" --seed 2 --out "$out" \
    >/dev/null 2>&1
  status=$?
  if [ "$step" -le "$((files + 2))" ] && [ "$status" -ne 137 ]; then
    fail "kill:$step: status $status, not killed"
    continue
  fi
  want=$work/ref1
  [ "$step" -ge "$((files + 2))" ] && want=$work/ref2
  same_report "$out" "$want" || fail "kill:$step: $out is not exactly $(basename "$want")"
  # The next run removes what the killed one left and writes the whole report
  # (checked after a kill among the first files, in the middle, before the
  # rename and after it, to keep the test short).
  case $step in 1 | $((files / 2)) | $((files + 1)) | $((files + 2))) ;; *) continue ;; esac
  "$ksim" run "$scenario" --seed 2 --out "$out" >/dev/null 2>&1 || fail "rerun after kill:$step"
  same_report "$out" "$work/ref2" || fail "rerun after kill:$step: not the whole new report"
  [ -z "$(leftovers "$out")" ] || fail "rerun after kill:$step left $(leftovers "$out")"
done

# A full disk at the first file, a middle one and the last (summary.json):
# the system's message naming the file, status 2, the old report untouched,
# nothing left beside it; a report that did not exist is not created.
for at in 1 $((files / 2)) "$files"; do
  out=$work/full/report
  rm -rf "$work/full" && mkdir -p "$work/full" && cp -r "$work/ref1" "$out"
  message=$(KSIM_TEST_OUTFILE_FAULT=enospc:$at "$ksim" run "$scenario" --seed 2 --out "$out" \
    2>&1 >/dev/null)
  status=$?
  [ "$status" -eq 2 ] || fail "enospc:$at: status $status, want 2"
  grep -q "cannot write \"$out/[^\"]*\": No space left on device" <<<"$message" ||
    fail "enospc:$at: message: $message"
  same_report "$out" "$work/ref1" || fail "enospc:$at: the old report changed"
  [ -z "$(leftovers "$out")" ] || fail "enospc:$at left $(leftovers "$out")"
  KSIM_TEST_OUTFILE_FAULT=enospc:$at "$ksim" run "$scenario" --out "$work/full/new" \
    >/dev/null 2>&1
  [ ! -e "$work/full/new" ] || fail "enospc:$at: a partial new report was left"
done

# An --out that cannot be written: status 2 and the path and reason, before
# any run; a directory of someone's other files is neither used nor touched.
echo text > "$work/plain"
mkdir -p "$work/mine" && echo mine > "$work/mine/notes.txt"
while IFS='|' read -r out pattern; do
  output=$("$ksim" run "$scenario" --out "$out" 2>&1)
  status=$?
  [ "$status" -eq 2 ] || fail "--out $out: status $status, want 2"
  grep -qF -- "$pattern" <<<"$output" || fail "--out $out: message: $output"
  grep -q "^run 1/" <<<"$output" && fail "--out $out: the simulation ran first"
done <<EOF
$work/plain/report|cannot write the report directory "$work/plain/report": Not a directory
$work/plain|"$work/plain": it exists and is not a directory
$work/mine|"$work/mine": it holds files but no summary.json
EOF
[ "$(cat "$work/mine/notes.txt")" = mine ] && [ "$(ls -A "$work/mine")" = notes.txt ] ||
  fail "--out $work/mine: its files were touched"

# Unsafe scenario names, in the file or by --set: status 2, a message naming
# the file and key, and nothing written anywhere (run from inside the work
# directory, where "../../x" would land two levels up).
mkdir -p "$work/cwd/a/b"
sed 's|^name = .*|name = ../../x|' "$scenario" > "$work/unsafe.ini"
while IFS='|' read -r file set; do
  args=(run "$file")
  [ -n "$set" ] && args+=(--set "$set")
  output=$(cd "$work/cwd/a/b" && "$ksim" "${args[@]}" 2>&1)
  status=$?
  [ "$status" -eq 2 ] || fail "${args[*]}: status $status, want 2"
  grep -q "$(basename "$file"): \[scenario\] name: .* cannot be used as a directory name" \
    <<<"$output" || fail "${args[*]}: message: $output"
done <<EOF
$work/unsafe.ini|
$scenario|name=../../x
$scenario|name=a/b
$scenario|name=..
$scenario|name=.hidden
EOF
[ -z "$(ls -A "$work/cwd/a/b")" ] && [ "$(ls -A "$work/cwd/a")" = b ] &&
  [ "$(ls -A "$work/cwd")" = a ] && [ ! -e "$work/x" ] || fail "an unsafe name wrote files"

# A sweep of a scenario whose name has quotes: sweep.json is valid JSON and
# holds the name as written; a full disk while writing it leaves no sweep.
sed 's|^name = .*|name = say "hi" to {x}|' "$scenario" > "$work/quoted.ini"
"$ksim" sweep "$work/quoted.ini" --seeds 1..2 --jobs 1 --out "$work/sweep" >/dev/null 2>&1 ||
  fail "sweep of quoted.ini"
name=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["scenario"])' \
  "$work/sweep/sweep.json" 2>&1)
[ "$name" = 'say "hi" to {x}' ] || fail "sweep.json: $name"
message=$(KSIM_TEST_OUTFILE_FAULT=enospc:2 "$ksim" sweep "$work/quoted.ini" --seeds 1..1 \
  --jobs 1 --out "$work/sweep-full" 2>&1 >/dev/null)
status=$?
[ "$status" -eq 2 ] || fail "sweep enospc: status $status, want 2"
grep -qF "cannot write \"$work/sweep-full/sweep.json\": No space left on device" <<<"$message" ||
  fail "sweep enospc: message: $message"
[ ! -e "$work/sweep-full" ] && [ -z "$(leftovers "$work/sweep-full")" ] ||
  fail "sweep enospc: a partial sweep was left"

if [ "$failures" -ne 0 ]; then echo "$failures failures"; exit 1; fi
echo "killed and failed writes leave the whole old report or the whole new one; bad places and names are refused"
