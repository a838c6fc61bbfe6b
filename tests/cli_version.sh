#!/usr/bin/env bash
# `ksim --version` names the commit the binary was built from (read at build
# time, so a rebuild after a commit names the new one).
set -uo pipefail
ksim=$1
src=$2
out=$("$ksim" --version) || { echo "FAIL: ksim --version exited $?"; exit 1; }
if ! commit=$(git -C "$src" rev-parse --short=12 HEAD 2>/dev/null); then
  [[ "$out" == *"(commit unknown)"* ]] || { echo "FAIL: no git, yet: $out"; exit 1; }
  echo "ksim --version: no git checkout, commit unknown"; exit 0
fi
[[ "$out" == "ksim "*"(commit $commit"*")" ]] || { echo "FAIL: want commit $commit in: $out"; exit 1; }
echo "ksim --version: $out"
