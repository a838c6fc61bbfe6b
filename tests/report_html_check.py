#!/usr/bin/env python3
"""Checks a ksim report.html with real parsers, as a browser would read it.

In-page links (each pattern's "diagram") must name an element's id.

html.parser (the standard library's HTML tokenizer) walks the whole page:
every non-void element is closed in order, nothing is left open, no
attribute is repeated; each inline <svg> parses as XML (a browser renders
inline SVG as XML-ish foreign content, and a malformed one is cut short);
each <img> is a data: URI with alt text, so the page needs no other file.

Then the first screen, what a reader sees before scrolling (the issue's
"what went wrong, why, and what did it cost"): the title, the Verdict
heading, its table with a row per run and the cost columns, and a
sentence per anomaly naming its patterns, all before the Explanations.

Usage: report_html_check.py REPORT.html RUNS [--anomalies] [--max-bytes N]
--anomalies: the runs found some, so the first screen must name their patterns.
"""
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
        "source", "track", "wbr"}


class Walker(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []
        self.errors = []
        self.events = []  # (kind, tag or text), in document order
        self.imgs = []
        self.svg_depth = 0

    def handle_starttag(self, tag, attrs):
        names = [a for a, _ in attrs]
        if len(names) != len(set(names)):
            self.errors.append(f"<{tag}> repeats an attribute: {names}")
        if tag == "svg":
            self.svg_depth += 1
        if self.svg_depth == 0 and tag not in VOID:
            self.stack.append(tag)
        if tag == "img":
            self.imgs.append(dict(attrs))
        self.events.append(("start", tag, dict(attrs)))

    def handle_startendtag(self, tag, attrs):
        if tag == "img":
            self.imgs.append(dict(attrs))
        self.events.append(("start", tag, dict(attrs)))

    def handle_endtag(self, tag):
        self.events.append(("end", tag, None))
        if tag == "svg":
            self.svg_depth -= 1
            return
        if self.svg_depth > 0 or tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
            return
        self.stack.pop()

    def handle_data(self, data):
        if data.strip():
            self.events.append(("text", data.strip(), None))


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def main():
    path, runs = sys.argv[1], int(sys.argv[2])
    options = sys.argv[3:]
    anomalies = "--anomalies" in options
    max_bytes = 1000000  # 1 MB
    if "--max-bytes" in options:
        max_bytes = int(options[options.index("--max-bytes") + 1])
    text = open(path, encoding="utf-8").read()
    if len(text.encode()) > max_bytes:
        fail(f"{path} is {len(text.encode())} bytes, over {max_bytes}")
    if not text.startswith("<!DOCTYPE html>"):
        fail("no doctype")
    walker = Walker()
    walker.feed(text)
    walker.close()
    if walker.errors:
        fail("; ".join(walker.errors[:5]))
    if walker.stack:
        fail(f"left open: {walker.stack}")

    # Every inline SVG is well-formed XML.
    start = 0
    svgs = 0
    while True:
        i = text.find("<svg", start)
        if i < 0:
            break
        j = text.find("</svg>", i)
        if j < 0:
            fail("an <svg> is never closed")
        try:
            ET.fromstring(text[i:j + 6])
        except ET.ParseError as e:
            fail(f"inline SVG {svgs + 1} is not XML: {e}")
        svgs += 1
        start = j + 6
    # Every in-page link (a pattern's "diagram") names an element's id.
    ids = {a.get("id") for k, t, a in walker.events if k == "start" and a and a.get("id")}
    ids |= set(__import__("re").findall(r'<svg[^>]* id="([^"]+)"', text))
    for k, t, a in walker.events:
        if k == "start" and t == "a" and a.get("href", "").startswith("#"):
            if a["href"][1:] not in ids:
                fail(f"a link to {a['href']} has no target")
    for img in walker.imgs:
        if not img.get("src", "").startswith("data:image/"):
            fail(f"an <img> is not inline: {img.get('src', '')[:60]}")
        if not img.get("alt"):
            fail("an <img> has no alt text")

    # The first screen: in order, h1, the Verdict h2, its table, before the
    # Explanations h2.
    texts = [(k, t) for k, t, _ in walker.events if k in ("start", "text")]
    def index_of(kind, value, after=0):
        for n in range(after, len(texts)):
            if texts[n] == (kind, value):
                return n
        fail(f"no {kind} {value!r} after position {after}")
    h1 = index_of("start", "h1")
    verdict = index_of("text", "Verdict", h1)
    table = index_of("start", "table", verdict)
    explanations = index_of("text", "Explanations", table)
    header = [t for k, t in texts[table:explanations] if k == "text"]
    for column in ("Run", "Expectations", "Lost", "Duplicated", "Reordered", "p50 ms",
                   "p99 ms", "Availability"):
        if column not in header:
            fail(f"the verdict table has no {column!r} column")
    rows = sum(1 for k, t in texts[table:explanations] if (k, t) == ("start", "tr"))
    # The verdict table's header and its runs; a comparison table may follow.
    if rows < runs + 1:
        fail(f"the first screen has {rows} table rows, want at least {runs + 1}")
    first_screen = " ".join(t for k, t in texts[verdict:explanations] if k == "text")
    if anomalies and "pattern" not in first_screen:
        fail("the first screen names no pattern")
    print(f"ok: {len(text.encode())} bytes, {svgs} inline SVG, {len(walker.imgs)} images, "
          f"{rows} rows before the explanations")


if __name__ == "__main__":
    main()
