#!/usr/bin/env python3
"""book-check: the book's checks, as TAP lines on stdout.

  1. every diagrams/*.dot renders in the house style, without a message;
  2. the include filter's own tests (book/tests/run.py);
  3. the book builds from scratch (HTML and EPUB) with no pandoc warning,
     and the result has what a reader needs: a TOC, every chapter, the
     diagrams embedded, listings, no stray @cm- markers, a valid EPUB;
  4. a broken include in a chapter fails the real build naming the chapter.

Run from the repository root (book/book.mk does):
  check.py --build DIR --make "make -f book/book.mk"
Exit status 1 if any check failed.
"""
import argparse
import glob
import os
import re
import shlex
import subprocess
import sys
import zipfile

N = 0
FAILED = 0
PANDOC = os.environ.get("PANDOC") or "pandoc"


def result(good, what, diag=""):
    global N, FAILED
    N += 1
    print(("ok" if good else "not ok") + " %d - %s" % (N, what))
    if not good:
        FAILED += 1
        for line in diag.rstrip("\n").splitlines()[-25:]:
            print("#   " + line)
    sys.stdout.flush()


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def check_diagrams(build):
    out = os.path.join(build, "diagrams")
    os.makedirs(out, exist_ok=True)
    dots = sorted(glob.glob("diagrams/*.dot"))
    if not dots:
        result(False, "diagrams: there is at least one diagrams/*.dot")
    for dot in dots:
        svg = os.path.join(out, os.path.basename(dot)[:-4] + ".svg")
        r = run(["sh", "book/diagram.sh", dot, svg])
        good = r.returncode == 0 and os.path.exists(svg) and "<svg" in open(svg).read()
        result(good, "diagram: %s renders to SVG" % dot, r.stdout + r.stderr)


def check_filter():
    global N, FAILED
    r = run([sys.executable, "book/tests/run.py", "--start", str(N)])
    sys.stdout.write(r.stdout)
    n = len(re.findall(r"^(?:not )?ok ", r.stdout, re.M))
    bad = len(re.findall(r"^not ok ", r.stdout, re.M))
    N += n
    FAILED += bad
    if r.returncode != 0 and bad == 0:
        result(False, "filter: the test runner ran", r.stderr)


def check_build(build, make):
    r = run(shlex.split(make) + ["BUILD=" + build, "book-html", "book-epub"])
    result(r.returncode == 0, "book: builds from scratch (HTML, EPUB) with no pandoc warning",
           r.stdout + r.stderr)
    if r.returncode != 0:
        return
    html_path = os.path.join(build, "book", "index.html")
    html = open(html_path, encoding="utf-8").read()
    result('<nav id="TOC"' in html, "book: index.html has a table of contents")
    chapters = sorted(glob.glob("chapters/[0-9][0-9]-*.md"))
    missing = []
    for ch in chapters:
        with open(ch, encoding="utf-8") as f:
            heads = [l for l in f if l.startswith("# ")]
        if not heads:
            missing.append(ch + " (no level-1 heading)")
            continue
        title = re.sub(r"\s*\{.*\}\s*$", "", heads[0][2:]).strip()
        title = title.replace("`", "").replace("*", "")
        words = title.split()[:3]
        if not all(w.replace("&", "&amp;") in html for w in words):
            missing.append(ch)
    result(chapters and not missing, "book: every chapters/NN-*.md is in index.html (%d)" % len(chapters),
           "missing: %r" % missing)
    dots = glob.glob("diagrams/*.dot")
    n_svg = html.count("data:image/svg+xml") + html.count("<svg")
    result(n_svg >= 1 and 'src="diagrams/' not in html,
           "book: diagrams are embedded in index.html (%d SVG, %d .dot)" % (n_svg, len(dots)))
    listings = re.findall(r'class="listing" data-source="([^"]+)"', html)
    result(len(listings) > 0, "book: listings come from the repository (%d: %s)" %
           (len(listings), ", ".join(sorted(set(listings)))[:150]))
    result("@cm-begin" not in html and "@cm-end" not in html.replace("@cm-end NAME", ""),
           "book: no @cm- marker line leaks into a listing")
    result("<script" not in html and 'src="http' not in html and "href=\"http" not in
           re.sub(r'<a [^>]*href="http[^"]*"', "", html),
           "book: index.html needs no JavaScript and no network")
    epub = os.path.join(build, "book", "containing-memory.epub")
    try:
        with zipfile.ZipFile(epub) as z:
            good = z.read("mimetype") == b"application/epub+zip" and any(
                n.endswith(".svg") for n in z.namelist())
        result(good, "book: containing-memory.epub is an EPUB with the diagrams")
    except Exception as e:
        result(False, "book: containing-memory.epub is an EPUB with the diagrams", str(e))


def check_broken_include(build):
    """Append a chapter with a broken include to the real spine and build it."""
    src = os.path.join(build, "book", ".src", "book.md")
    if not os.path.exists(src):
        result(False, "book: a broken include fails the real build naming the chapter",
               "no spine at " + src)
        return
    broken = os.path.join(build, "broken-spine.md")
    with open(src, encoding="utf-8") as f, open(broken, "w", encoding="utf-8") as g:
        g.write(f.read())
        g.write('\n\n::: {cm-source="chapters/99-broken-on-purpose.md"}\n\n# Broken\n\n'
                '```{include="labs/guest/tap.sh" marker="no-such-region"}\n```\n\n:::\n')
    r = run([PANDOC, "--defaults=book/pandoc.yaml", "--fail-if-warnings",
             "--resource-path=%s:." % os.path.join(build, "book"), "-t", "html5",
             "-o", os.devnull, broken])
    msg = r.stderr
    good = (r.returncode != 0 and "chapters/99-broken-on-purpose.md" in msg
            and 'marker="no-such-region"' in msg and "labs/guest/tap.sh" in msg)
    result(good, "book: a broken include fails the real build naming the chapter and reference", msg)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--make", default="make -f book/book.mk")
    a = ap.parse_args()
    os.makedirs(a.build, exist_ok=True)
    check_diagrams(a.build)
    check_filter()
    check_build(a.build, a.make)
    check_broken_include(a.build)
    sys.exit(1 if FAILED else 0)


if __name__ == "__main__":
    main()
