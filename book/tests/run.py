#!/usr/bin/env python3
"""Tests for book/include.lua, printed as TAP lines ("ok N - ..." / "not ok N - ...").

good.md: every block must resolve, and the text of each block with an
identifier must equal good.expected/<identifier>.txt.

exercise.md: run as chapter 3 of a book through include.lua and
edition.lua, in the student and the instructor edition: the listings
that are answers to fixture/labs/ch03/skeleton's TODOs become boxes in
the student edition (or lose those functions), and stay whole in the
instructor edition.

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
EDITION = os.path.join(BOOK, "edition.lua")
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


def nodes(x):
    """Every element (a dict) of a pandoc JSON tree, in document order,
    each before the elements inside it."""
    if isinstance(x, dict):
        yield x
        for v in x.values():
            yield from nodes(v)
    elif isinstance(x, list):
        for v in x:
            yield from nodes(v)


def code_blocks(ast):
    found = {}
    for x in nodes(ast["blocks"]):
        if x.get("t") == "CodeBlock":
            (ident, classes, kv), text = x["c"]
            found[ident] = (classes, text)
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


def listing_divs(ast):
    """{identifier: (classes, [code block texts], plain text)} of every Div
    of class listing; the identifier is the Div's or its code block's."""
    found = {}

    def text_of(x):
        out = []
        for y in nodes(x):
            if y.get("t") == "Str":
                out.append(y["c"])
            elif y.get("t") in ("Space", "SoftBreak"):
                out.append(" ")
            elif y.get("t") == "Code":
                out.append(y["c"][1])
        return "".join(out)

    for x in nodes(ast["blocks"]):
        if x.get("t") == "Div" and "listing" in x["c"][0][1]:
            (ident, classes, kv), blocks = x["c"]
            codes = [b["c"] for b in blocks if b.get("t") == "CodeBlock"]
            ident = ident or next((c[0][0] for c in codes if c[0][0]), "")
            found[ident] = (classes, [c[1] for c in codes], text_of(blocks), kv)
    return found


def test_editions(tap, exe):
    """cases/exercise.md, as chapter 3 of a book (fixture/labs/ch03/skeleton
    takes res_counter_reset() and res_counter_uncharge() out of patch 0003),
    through include.lua and edition.lua in each edition."""
    with open(os.path.join(CASES, "exercise.md")) as f:
        spine = '::: {cm-source="chapters/03-exercise.md"}\n\n' + f.read() + "\n:::\n"
    got = {}
    for edition in ("student", "instructor"):
        r = subprocess.run([exe, "--lua-filter", FILTER, "--lua-filter", EDITION,
                            "-M", "cm-root=" + FIXTURE, "-M", "cm-edition=" + edition,
                            "-f", "markdown", "-t", "json"],
                           input=spine, cwd=CASES, capture_output=True, text=True)
        tap.result(r.returncode == 0 and r.stderr == "",
                   "editions: exercise.md builds as chapter 3 (%s edition)" % edition, r.stderr)
        if r.returncode != 0:
            return
        got[edition] = listing_divs(json.loads(r.stdout))
    answer1, answer2 = "cnt->usage = 0;", "/* never below zero */"
    st, ins = got["student"], got["instructor"]

    def check(what, good, ident, edition):
        tap.result(good, "editions: %s" % what, "%s edition, #%s: %r" % (edition, ident,
                   (got[edition].get(ident),)))

    for ident, todo in (("ex-reset", "TODO 1 of this chapter's exercise."),
                        ("ex-uncharge", "TODO 2 of this chapter's exercise."),
                        ("ex-both", "TODOs 1 and 2 of this chapter's exercise.")):
        cl, codes, text, kv = st.get(ident, ([], ["?"], "", []))
        check("student edition: #%s, all answer, is a listing box with no code that says %r"
              % (ident, todo), "exercise-only" in cl and "listing" in cl and not codes
              and todo in text and "make exercise CH=3" in text and "make book-instructor" in text
              and "patches/0003-" in text, ident, "student")
    cl, codes, text, kv = st.get("ex-mixed", ([], [], "", []))
    check("student edition: #ex-mixed keeps the code that is not an answer, and says which TODOs it leaves out",
          codes and "exercise-only" not in cl and "TODOs 1 and 2" in text
          and not any(answer1 in c or answer2 in c for c in codes)
          and any("res_counter_full" in c for c in codes) and any("test_reset" in c for c in codes),
          "ex-mixed", "student")
    for ident in ("ex-reset", "ex-uncharge", "ex-both", "ex-mixed"):
        cl, codes, text, kv = ins.get(ident, ([], [], "", []))
        want = answer2 if ident == "ex-uncharge" else answer1
        check("instructor edition: #%s is the listing, whole, with no box" % ident,
              len(codes) == 1 and want in codes[0] and "TODO" not in text, ident, "instructor")
    cl, codes, text, kv = st.get("ex-other", ([], [], "", []))
    check("student edition: a listing of another patch (#ex-other) is left alone",
          len(codes) == 1 and "WARN_ON" in codes[0] and "TODO" not in text, "ex-other", "student")
    attrs = [k for ed in got.values() for (_, _, _, kv) in ed.values() for k, _ in kv]
    tap.result(not any(k.startswith("cm-") for k in attrs),
               "editions: no cm- attribute is left for the HTML", repr(attrs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--pandoc", default=os.environ.get("PANDOC", "pandoc"))
    a = ap.parse_args()
    tap = Tap(a.start)
    test_good(tap, a.pandoc)
    test_bad(tap, a.pandoc)
    test_editions(tap, a.pandoc)
    sys.exit(1 if tap.failed else 0)


if __name__ == "__main__":
    main()
