#!/usr/bin/env python3
"""Writes tests/fuzz/corpus/simulate/: the library's scenarios shortened to
fit fuzz_simulate.c's caps (4 s of faults, 2 s quiet), each fault moved into
the first 4 s and undone within 1 s. Run from the source root; keep the files
that `ksim check` accepts (the others are removed)."""
import pathlib, re, subprocess, sys

ksim = sys.argv[1] if len(sys.argv) > 1 else "build/ksim"
out = pathlib.Path("tests/fuzz/corpus/simulate")
out.mkdir(parents=True, exist_ok=True)

def seconds(text):
    m = re.fullmatch(r"([\d.]+)(ms|s|m)", text)
    if not m:
        return None
    return float(m.group(1)) * {"ms": 0.001, "s": 1, "m": 60}[m.group(2)]

for src in sorted(pathlib.Path("scenarios").glob("*.ini")):
    group, lines = "", []
    for line in src.read_text().splitlines():
        if line.startswith("["):
            group = line
        m = re.match(r"\s*(duration|quiet|at|stop|start|workload\.stop|members\.stop|members\.start|"
                     r"workload\.start)\s*=\s*([\d.]+(?:ms|s|m))\s*$", line)
        if m:
            key, value = m.group(1), seconds(m.group(2))
            if group == "[scenario]" and key == "duration":
                value = 4
            elif group == "[scenario]" and key == "quiet":
                value = 2
            elif key == "duration":
                value = min(value, 1)
            else:
                value = value % 4
            line = "%s = %gms" % (key, round(value * 1000))
        lines.append(line)
    target = out / src.name
    target.write_text("\n".join(lines) + "\n")
    if subprocess.run([ksim, "check", str(target)], capture_output=True).returncode != 0:
        target.unlink()
print("\n".join(sorted(p.name for p in out.glob("*.ini"))))
