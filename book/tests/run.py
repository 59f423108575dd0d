#!/usr/bin/env python3
"""Tests for book/include.lua, printed as TAP lines ("ok N - ..." / "not ok N - ...").

good.md: every block must resolve, and the text of each block with an
identifier must equal good.expected/<identifier>.txt.

bad-*.md: pandoc must fail, and its error output must contain every
substring listed in the file's first line,
    <!-- expect: SUBSTRING | SUBSTRING | !MUST-NOT-APPEAR -->
which names the chapter (file:line) and the reference.

Usage: run.py [--start N] [--pandoc PANDOC]   (exit status 1 if any test failed)
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BOOK = os.path.dirname(HERE)
FILTER = os.path.join(BOOK, "include.lua")
FIXTURE = os.path.join(HERE, "fixture")
CASES = os.path.join(HERE, "cases")


class Tap:
    def __init__(self, start):
        self.n = start
        self.failed = 0

    def result(self, good, what, diag=""):
        self.n += 1
        print(("ok" if good else "not ok") + " %d - %s" % (self.n, what))
        if not good:
            self.failed += 1
            for line in diag.rstrip("\n").splitlines()[:25]:
                print("#   " + line)
        sys.stdout.flush()


def pandoc(args, exe):
    # Run from the cases directory, so chapter names are short ("bad-x.md").
    return subprocess.run([exe, "--lua-filter", FILTER, "-M", "cm-root=" + FIXTURE] + args,
                          cwd=CASES, capture_output=True, text=True)


def code_blocks(ast):
    found = {}

    def walk(x):
        if isinstance(x, dict):
            if x.get("t") == "CodeBlock":
                (ident, classes, kv), text = x["c"]
                found[ident] = (classes, text)
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(ast["blocks"])
    return found


def test_good(tap, exe):
    r = pandoc(["good.md", "-t", "json"], exe)
    tap.result(r.returncode == 0 and r.stderr == "", "filter: good.md resolves without error or warning",
               r.stderr)
    if r.returncode != 0:
        return
    blocks = code_blocks(json.loads(r.stdout))
    expdir = os.path.join(CASES, "good.expected")
    for name in sorted(os.listdir(expdir)):
        ident = name[:-len(".txt")]
        with open(os.path.join(expdir, name)) as f:
            want = f.read()
        if want.endswith("\n"):
            want = want[:-1]
        got = blocks.get(ident)
        if got is None:
            tap.result(False, "filter: block #%s resolves to good.expected/%s" % (ident, name),
                       "no code block with that identifier")
            continue
        diag = ""
        if got[1] != want:
            import difflib
            diag = "".join(difflib.unified_diff(want.splitlines(True), got[1].splitlines(True),
                                                "expected", "got"))
        tap.result(got[1] == want, "filter: block #%s resolves to good.expected/%s" % (ident, name),
                   diag)
    # language guessing and label
    classes = {k: v[0] for k, v in blocks.items()}
    tap.result(classes.get("whole-c") == ["c"] and classes.get("fn-header") == ["diff"]
               and classes.get("marker-nested") == ["bash"],
               "filter: languages guessed (c, diff) or kept (bash)", repr(classes))


def test_bad(tap, exe):
    for name in sorted(os.listdir(CASES)):
        if not (name.startswith("bad-") and name.endswith(".md")):
            continue
        with open(os.path.join(CASES, name)) as f:
            first = f.readline()
        expect = first.split("expect:", 1)[1].rsplit("-->", 1)[0]
        wants = [w.strip() for w in expect.split("|") if w.strip()]
        r = pandoc([name, "-t", "html", "-o", os.devnull], exe)
        out = r.stderr
        missing = [w for w in wants if not w.startswith("!") and w not in out]
        present = [w[1:] for w in wants if w.startswith("!") and w[1:] in out]
        good = r.returncode != 0 and not missing and not present
        diag = "exit status %d\n" % r.returncode
        if missing:
            diag += "missing from the message: %r\n" % missing
        if present:
            diag += "should not be in the message: %r\n" % present
        tap.result(good, "filter: %s fails the build naming chapter and reference" % name,
                   diag + out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--pandoc", default=os.environ.get("PANDOC", "pandoc"))
    a = ap.parse_args()
    tap = Tap(a.start)
    test_good(tap, a.pandoc)
    test_bad(tap, a.pandoc)
    sys.exit(1 if tap.failed else 0)


if __name__ == "__main__":
    main()
