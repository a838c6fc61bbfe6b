#!/usr/bin/env python3
"""Checks a history.edn as Jepsen's Kafka workload would read it.

Usage: jepsen_history_check.py HISTORY.edn KEYS.json
Exit 0 when: every line is one op map; :index counts from 0; :time never
goes back; each Jepsen process alternates invoke and completion with the
same :f and is never used again after an :info; every key is in KEYS.json;
Prints the counts it saw, and "inconsistent=N": the [key offset] pairs
to which :ok sends and polls gave more than one value, the first analysis
of Jepsen's checker (a leader that acknowledged an offset and was then
replaced by one that gave the offset to another record).
"""
import json
import re
import sys

OP = re.compile(r"^\{:index (\d+), :time (\d+), :type :(invoke|ok|fail|info), :process (\d+), "
                r":f :(send|poll|txn|assign), :value (.*?)(?:, :error :([a-z-]+))?\}$")
SEND = re.compile(r"\[:send (\d+) (?:\[(\d+|nil) (\d+)\]|(\d+))\]")
POLL_KEY = re.compile(r"(\d+) \[((?:\[\d+ \d+\] ?)*)\]")
PAIR = re.compile(r"\[(\d+) (\d+)\]")


def fail(message):
    print("jepsen_history_check: " + message)
    sys.exit(1)


def main():
    history, keys_path = sys.argv[1], sys.argv[2]
    keys = {k["key"] for k in json.load(open(keys_path))["keys"]}
    pending = {}  # process -> f
    retired = set()
    at = {}  # (key, offset) -> value
    counts = {}
    last_time = -1
    for n, line in enumerate(open(history), 0):
        m = OP.match(line.rstrip("\n"))
        if m is None:
            fail("line %d is not an op: %s" % (n + 1, line[:200]))
        index, time, type_, process, f, value = (int(m.group(1)), int(m.group(2)), m.group(3),
                                                 int(m.group(4)), m.group(5), m.group(6))
        if index != n:
            fail("line %d has :index %d" % (n + 1, index))
        if time < last_time:
            fail("line %d goes back in time" % (n + 1))
        last_time = time
        if process in retired:
            fail("line %d reuses process %d after an :info" % (n + 1, process))
        if type_ == "invoke":
            if process in pending:
                fail("line %d: process %d invokes with an op outstanding" % (n + 1, process))
            pending[process] = f
        else:
            if pending.get(process) != f:
                fail("line %d: process %d completes :%s without its invocation" % (n + 1, process, f))
            del pending[process]
            if type_ == "info":
                retired.add(process)
        counts[(type_, f)] = counts.get((type_, f), 0) + 1
        used = [int(k) for k in re.findall(r"\[:send (\d+)", value)]
        if f == "assign":
            used = [int(k) for k in value.strip("[]").split()]
        pairs = []
        if type_ == "ok" and f in ("send", "txn"):
            for s in SEND.finditer(value):
                if s.group(2) not in (None, "nil"):
                    pairs.append((int(s.group(1)), int(s.group(2)), int(s.group(3))))
        if type_ == "ok" and f == "poll":
            for k in POLL_KEY.finditer(value):
                used.append(int(k.group(1)))
                for p in PAIR.finditer(k.group(2)):
                    pairs.append((int(k.group(1)), int(p.group(1)), int(p.group(2))))
        for k in used:
            if k not in keys:
                fail("line %d names key %d, not in %s" % (n + 1, k, keys_path))
        for k, offset, v in pairs:
            at.setdefault((k, offset), set()).add(v)
    inconsistent = sum(1 for values in at.values() if len(values) > 1)
    print(" ".join("%s-%s=%d" % (f, t, c) for (t, f), c in sorted(counts.items())) +
          " inconsistent=%d" % inconsistent)


main()
