#!/usr/bin/env python3
"""book-check: the book's checks, as TAP lines on stdout.

  1. every diagrams/*.dot renders in the house style, without a message,
     at most MAX_FIGURE_PT wide (readable at the text width), and a broken
     .dot fails to render;
  2. the include filter's own tests (book/tests/run.py);
  3. the book builds from scratch (HTML, EPUB and PDF) with no pandoc
     warning, and the result has what a reader needs: a TOC, every
     chapter, the diagrams inline and numbered, listings, no stray @cm-
     markers; epubcheck finds no error in the EPUB;
  3b. every exercise of every numbered chapter (chapters/NN-*.md) that
     has a "::: exercises" block has a difficulty, a time and a worked
     answer; the instructor edition builds with all of them, and the
     student edition (HTML and EPUB) contains none;
  4. each kind of mistake fails the real build, naming the chapter: a
     broken include, a broken figure, an unresolved cross-reference, a
     glossary link without an entry, a chapter without a required
     section, raw HTML in prose, an unlinked "chapter N".

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
# The narrowest text column is A4 print (174 mm, 493 pt): a diagram this
# wide is shown at 77 % there, which keeps its 11 pt labels above 8 pt.
MAX_FIGURE_PT = 640
EPUBCHECK_JAR = "/usr/share/java/epubcheck.jar"
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
        if not good:
            continue
        text = open(svg).read()
        m = re.search(r'<svg width="([\d.]+)pt"', text)
        width = float(m.group(1)) if m else 1e9
        result(width <= MAX_FIGURE_PT and "<!DOCTYPE" not in text,
               "diagram: %s fits the text width (%.0f pt, at most %d) and can be put inline"
               % (dot, width, MAX_FIGURE_PT),
               "make it narrower: rankdir=TB, shorter labels, fewer nodes side by side")
    bad = os.path.join(out, "broken-on-purpose.dot")
    with open(bad, "w") as f:
        f.write("digraph broken { a -> ; }\n")
    r = run(["sh", "book/diagram.sh", bad, bad[:-4] + ".svg"])
    result(r.returncode != 0 and "broken-on-purpose.dot" in r.stderr
           and not os.path.exists(bad[:-4] + ".svg"),
           "diagram: a broken .dot fails to render, naming the file", r.stdout + r.stderr)


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
    r = run(shlex.split(make) + ["BUILD=" + build, "book-html", "book-epub", "book-pdf"])
    result(r.returncode == 0, "book: builds from scratch (HTML, EPUB, PDF) with no pandoc warning",
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
    n_svg = html.count("<svg")
    figs = re.findall(r'<div id="(fig-[^"]+)" class="figure"', html)
    numbered = re.findall(r"<strong>Figure [0-9A-Z]+\.\d+:</strong>", html)
    result(n_svg >= 1 and n_svg == len(figs) == len(numbered) and "<img" not in html,
           "book: every figure is inline SVG and numbered (%d SVG, %d figures, %d .dot)"
           % (n_svg, len(figs), len(dots)))
    lst = len(re.findall(r'class="listing"', html))
    lst_num = len(re.findall(r"<strong>Listing [0-9A-Z]+\.\d+:</strong>", html))
    result(lst > 0 and lst == lst_num, "book: every listing is numbered (%d of %d)" % (lst_num, lst))
    listings = re.findall(r'class="listing" data-source="([^"]+)"', html)
    result(len(listings) > 0, "book: listings come from the repository (%d: %s)" %
           (len(listings), ", ".join(sorted(set(listings)))[:150]))
    prose = html.replace("@cm-begin NAME", "").replace("@cm-end NAME", "")
    result("@cm-begin" not in prose and "@cm-end" not in prose,
           "book: no @cm- marker line leaks into a listing")
    result("<script" not in html and 'src="http' not in html and "href=\"http" not in
           re.sub(r'<a [^>]*href="http[^"]*"', "", html),
           "book: index.html needs no JavaScript and no network")
    epub = os.path.join(build, "book", "containing-memory.epub")
    try:
        with zipfile.ZipFile(epub) as z:
            text = "".join(z.read(n).decode("utf-8", "replace") for n in z.namelist()
                           if n.endswith(".xhtml"))
            good = z.read("mimetype") == b"application/epub+zip" and text.count("<svg") == n_svg
        result(good, "book: containing-memory.epub is an EPUB with the diagrams inline")
    except Exception as e:
        result(False, "book: containing-memory.epub is an EPUB with the diagrams inline", str(e))
    if os.path.exists(EPUBCHECK_JAR):
        cmd = ["java", "-jar", EPUBCHECK_JAR, epub]
    else:
        cmd = ["epubcheck", epub]
    try:
        r = run(cmd)
        out = r.stdout + r.stderr
        m = re.search(r"Messages: (\d+) fatals? / (\d+) errors?", out)
        good = r.returncode == 0 and m and m.group(1) == "0" and m.group(2) == "0"
        result(good, "book: epubcheck finds no error in the EPUB (%s)" %
               (m.group(0) if m else "no summary"),
               "\n".join(l for l in out.splitlines() if l.startswith(("ERROR", "FATAL")))[:3000] or out)
    except OSError as e:
        result(False, "book: epubcheck finds no error in the EPUB", "epubcheck: %s (apt-get install epubcheck)" % e)
    pdf = os.path.join(build, "book", "containing-memory.pdf")
    try:
        with open(pdf, "rb") as f:
            head = f.read(5)
        size = os.path.getsize(pdf)
        result(head == b"%PDF-" and size > 100000,
               "book: containing-memory.pdf is a PDF (%d KiB)" % (size // 1024))
    except OSError as e:
        result(False, "book: containing-memory.pdf is a PDF", str(e))


def plain(html):
    text = re.sub(r"<[^>]+>", " ", html)
    return " ".join(text.replace("&amp;", "&").split())


def check_editions(build, make):
    """Every numbered chapter with a "::: exercises" block has an effort
    and an answer under each exercise; the instructor edition builds with
    every answer; the student edition (index.html, and the EPUB) has none
    of them."""
    counts = {}
    for ch in sorted(glob.glob("chapters/[0-9][0-9]-*.md")):
        text = open(ch, encoding="utf-8").read()
        # the block ends at the first ":::" in column 0; answers are indented
        m = re.search(r"^::: exercises\n(.*?)^:::$", text, re.M | re.S)
        if not m:
            continue
        body = m.group(1)
        counts[ch] = (len(re.findall(r"^\d+\. ", body, re.M)),
                      len(re.findall(r"^ +::: answer$", body, re.M)),
                      len(re.findall(r"\]\{\.effort\}", body)))
    for ch, (items, answers, efforts) in counts.items():
        result(items > 0 and items == answers == efforts,
               "editions: every exercise of %s has a difficulty, a time and a worked answer "
               "(%d exercises, %d answers, %d estimates)" % (ch, items, answers, efforts))
    r = run(shlex.split(make) + ["BUILD=" + build, "book-instructor"])
    result(r.returncode == 0, "editions: the instructor edition builds with no pandoc warning",
           r.stdout + r.stderr)
    if r.returncode != 0:
        return
    inst = open(os.path.join(build, "book", "instructor", "index.html"), encoding="utf-8").read()
    answers = re.findall(r'<div class="answer">(.*?)</div>', inst, re.S)
    want = sum(a for _, a, _ in counts.values())
    result(len(answers) == want and "A semester plan" in inst,
           "editions: the instructor edition has all %d answers and the semester plan" % want,
           "found %d answers" % len(answers))
    student = plain(open(os.path.join(build, "book", "index.html"), encoding="utf-8").read())
    epub = os.path.join(build, "book", "containing-memory.epub")
    if os.path.exists(epub):
        with zipfile.ZipFile(epub) as z:
            student += plain("".join(z.read(n).decode("utf-8", "replace")
                                     for n in z.namelist() if n.endswith(".xhtml")))
    leaked = []
    for a in answers:
        words = plain(a).replace("Answer. ", "", 1).split()
        # any run of 12 words of an answer is enough to call it leaked
        for i in range(0, max(len(words) - 11, 1), 6):
            if " ".join(words[i:i + 12]) in student:
                leaked.append(" ".join(words[i:i + 12]))
                break
    result(answers and not leaked and 'class="answer"' not in student
           and "A semester plan" not in student,
           "editions: the student edition (HTML, EPUB) contains no answer and no semester plan",
           "\n".join(leaked))


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


# Each mistake, appended to the real spine as a chapter of its own, must
# fail the build with a message naming the chapter and the mistake.
BROKEN = [
    ("a broken figure", "chapters/front-broken-figure.md",
     "# Broken {#sec-broken}\n\n![A figure with no source.](diagrams/no-such-diagram.svg)\n",
     ["chapters/front-broken-figure.md", "no diagrams/no-such-diagram.dot"]),
    ("an unresolved cross-reference", "chapters/front-broken-ref.md",
     "# Broken {#sec-broken}\n\nAs [the figure](#fig-no-such-figure) shows.\n",
     ["chapters/front-broken-ref.md", "unresolved cross-reference", "#fig-no-such-figure"]),
    ("a glossary link without an entry", "chapters/front-broken-gloss.md",
     "# Broken {#sec-broken}\n\nA [frobnicator](#gl-frobnicator) frobs.\n",
     ["chapters/front-broken-gloss.md", "glossary term without an entry", "#gl-frobnicator"]),
    ("a chapter without a required section", "chapters/98-broken-sections.md",
     "# Broken {#ch-broken}\n\n## The problem\n\nText.\n\n## The lab\n\nText.\n",
     ["chapters/98-broken-sections.md", "missing the required section", "How 6.1"]),
    ("raw HTML in prose", "chapters/front-broken-html.md",
     "# Broken {#sec-broken}\n\nRun echo -n <num_pages> > limit.\n",
     ["chapters/front-broken-html.md", "raw HTML in prose", "<num_pages>"]),
    ("a 'chapter N' that is not a link", "chapters/front-broken-chapter.md",
     "# Broken {#sec-broken}\n\nAs chapter 3 explains.\n",
     ["chapters/front-broken-chapter.md", "chapter 3", "neither a link"]),
]


def check_broken_book(build):
    src = os.path.join(build, "book", ".src", "book.md")
    if not os.path.exists(src):
        result(False, "book: the mistakes book.lua refuses fail the build", "no spine at " + src)
        return
    spine = open(src, encoding="utf-8").read()
    for what, name, text, want in BROKEN:
        broken = os.path.join(build, "broken-spine.md")
        with open(broken, "w", encoding="utf-8") as g:
            g.write(spine)
            g.write('\n\n::: {cm-source="%s"}\n\n%s\n:::\n' % (name, text))
        r = run([PANDOC, "--defaults=book/pandoc.yaml", "--fail-if-warnings",
                 "--resource-path=%s:." % os.path.join(build, "book"),
                 "-M", "cm-diagrams=" + os.path.join(build, "book", "diagrams"),
                 "-t", "html5", "-o", os.devnull, broken])
        msg = r.stderr
        good = r.returncode != 0 and all(w in msg for w in want)
        result(good, "book: %s fails the build, naming the chapter" % what, msg)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--make", default="make -f book/book.mk")
    a = ap.parse_args()
    os.makedirs(a.build, exist_ok=True)
    check_diagrams(a.build)
    check_filter()
    check_build(a.build, a.make)
    check_editions(a.build, a.make)
    check_broken_include(a.build)
    check_broken_book(a.build)
    sys.exit(1 if FAILED else 0)


if __name__ == "__main__":
    main()
