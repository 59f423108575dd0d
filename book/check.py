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
  3c. the built HTML (both editions) reads right: no label printed twice
     ("Figure Figure 7.1", "Listing Listing", "Table Table"), every
     numbered section belongs to the chapter whose number it carries
     (the epilogue is not 9.9), a listing of one function defines no
     other, and every figure the prose marks as measured
     ([4097]{.measured}) is printed in a transcript of its chapter, or
     ([4100]{.measured from="NAME"}) is in diagrams/NAME.dat; each of
     these checks fails on its broken page in book/tests/html/;
  3d. the exercises' code: every function that labs/chNN/skeleton takes
     out of patch NN (todo and revert lines) is printed in chapter NN of
     the instructor edition, and none of its added lines (three in a
     row) is in chapter NN of the student edition (HTML or EPUB); the
     same check run on the instructor edition finds them all;
  4. each kind of mistake fails the real build, naming the chapter: a
     broken include, a broken figure, an unresolved cross-reference, a
     label written before a reference that prints it, a glossary link
     without an entry, a chapter without a required section, raw HTML in
     prose, an unlinked "chapter N".

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
from html import unescape

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
    for dot in dots + sorted(glob.glob("diagrams/*.gp")):
        svg = os.path.join(out, os.path.splitext(os.path.basename(dot))[0] + ".svg")
        r = run(["sh", "book/diagram.sh", dot, svg])
        good = r.returncode == 0 and os.path.exists(svg) and "<svg" in open(svg).read()
        result(good, "diagram: %s renders to SVG" % dot, r.stdout + r.stderr)
        if not good:
            continue
        text = open(svg).read()
        # dot writes points; gnuplot pixels (3/4 of a point)
        m = re.search(r'<svg\s+width="([\d.]+)(pt)?"', text)
        width = (float(m.group(1)) * (1 if m.group(2) else 0.75)) if m else 1e9
        result(width <= MAX_FIGURE_PT and "<!DOCTYPE" not in text,
               "diagram: %s fits the text width (%.0f pt, at most %d) and can be put inline"
               % (dot, width, MAX_FIGURE_PT),
               "make it narrower: rankdir=TB, shorter labels, fewer nodes side by side")
    for ext, text, what in (
            (".dot", "digraph broken { a -> ; }\n", "a broken .dot"),
            (".gp", 'set terminal svg\nplot "no-such-numbers.dat" using 1:2\n',
             "a plot whose numbers are missing")):
        bad = os.path.join(out, "broken-on-purpose" + ext)
        svg = bad[:-len(ext)] + ".svg"
        with open(bad, "w") as f:
            f.write(text)
        r = run(["sh", "book/diagram.sh", bad, svg])
        result(r.returncode != 0 and os.path.basename(bad) in r.stderr
               and not os.path.exists(svg),
               "diagram: %s fails to render, naming the file" % what, r.stdout + r.stderr)


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
    lst = len(re.findall(r'class="listing[ "]', html))
    lst_num = len(re.findall(r"<strong>Listing [0-9A-Z]+\.\d+:</strong>", html))
    result(lst > 0 and lst == lst_num, "book: every listing is numbered (%d of %d)" % (lst_num, lst))
    listings = re.findall(r'class="listing[^"]*" data-source="([^"]+)"', html)
    result(len(listings) > 0, "book: listings come from the repository (%d: %s)" %
           (len(listings), ", ".join(sorted(set(listings)))[:150]))
    prose = html.replace("@cm-begin NAME", "").replace("@cm-end NAME", "")
    result("@cm-begin" not in prose and "@cm-end" not in prose,
           "book: no @cm- marker line leaks into a listing")
    for kind, what in HTML_CHECKS:
        probs = html_problems(html)[kind]
        result(not probs, "book: index.html: %s" % what, "\n".join(probs))
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
    for kind, what in HTML_CHECKS:
        probs = html_problems(open(os.path.join(build, "book", "instructor", "index.html"),
                                   encoding="utf-8").read())[kind]
        result(not probs, "editions: instructor/index.html: %s" % what, "\n".join(probs))
    check_exercise_code(build)


# ---------------------------------------------------------------------------
# Checks of the built HTML.  Each returns a list of problems; book/tests/html/
# holds a broken page for each, which it must find.

def html_text(html):
    """The HTML as a reader sees it: no SVG, no tags, one space between words."""
    html = re.sub(r"<svg.*?</svg>", " ", html, flags=re.S)
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def doubled_labels(html):
    """'Figure Figure 7.1': a label written before a reference that prints it."""
    text = html_text(html)
    return ["printed twice: ...%s..." % text[max(0, m.start() - 40):m.end() + 20]
            for m in re.finditer(r"(?i)\b(figure|listing|table)s?\s+\1\b", text)]


def misnumbered_sections(html):
    """A numbered section must carry the number of the chapter it is in: its
    number starts with the number of the level-1 heading above it, and
    there is no numbered section under an unnumbered one (front matter,
    epilogue, appendix).  Headings and the table of contents both."""
    probs = []
    body = html
    m = re.search(r'<nav id="TOC".*?</nav>', html, re.S)
    if m:
        body = html[:m.start()] + html[m.end():]
        depth, chapter = 0, None
        for t in re.finditer(r'(?P<open><ul\b)|(?P<close></ul>)|<li><a href="#(?P<id>[^"]*)"[^>]*>'
                             r'(?:<span class="toc-section-number">(?P<num>[^<]*)</span>)?', m.group(0)):
            if t.group("open"):
                depth += 1
            elif t.group("close"):
                depth -= 1
            elif depth == 1:
                chapter = t.group("num")
            elif t.group("num") and (chapter is None or not t.group("num").startswith(chapter + ".")):
                probs.append("table of contents: section %s (#%s) is under %s" %
                             (t.group("num"), t.group("id"),
                              "chapter " + chapter if chapter else "an unnumbered part"))
    chapter, title = None, None
    for h in re.finditer(r"<h([1-6])\b[^>]*>(.*?)</h\1>", body, re.S):
        level, inner = int(h.group(1)), h.group(2)
        n = re.search(r'<span class="header-section-number">([^<]*)</span>', inner)
        num = n.group(1) if n else None
        words = " ".join(re.sub(r"<[^>]+>", " ", inner).split())
        if level == 1:
            chapter, title = num, words
        elif num and (chapter is None or not num.startswith(chapter + ".")):
            probs.append("section \"%s\" is numbered %s under \"%s\"" % (words, num, title))
    return probs


def strip_c(line):
    """A line of C without its strings and comments (and an unclosed one)."""
    return re.sub(r'"(\\.|[^"\\])*"|/\*.*?(\*/|$)|//.*$', "", line)


def definition_at(lines, i):
    """The function whose definition starts at LINES[i] (C code), or None:
    a line at column 0 naming "NAME(" that reaches "{" before ";" (as
    book/include.lua reads them).  None entries (removed lines) are skipped."""
    line = lines[i]
    if line is None or not re.match(r"[A-Za-z_]", line) or re.match(r"[A-Za-z_]\w*:\s*$", line):
        return None
    m = re.search(r"([A-Za-z_]\w*)\s*\(", strip_c(line))
    if not m:
        return None
    for t in lines[i:]:
        if t is None:
            continue
        t = strip_c(t)
        b, sc = t.find("{"), t.find(";")
        if b >= 0 and (sc < 0 or b < sc):
            return m.group(1)
        if sc >= 0:
            return None
    return None


def c_definitions(lines):
    """The functions LINES (C code) define."""
    return [n for n in (definition_at(lines, i) for i in range(len(lines))) if n]


def listing_divs(html):
    """The HTML of every listing (its <div class="listing ...">, to the
    </div> that closes it)."""
    out = []
    for m in re.finditer(r'<div[^>]*class="listing[ "]', html):
        depth, pos = 0, m.start()
        for t in re.finditer(r"<div\b|</div>", html[m.start():]):
            depth += 1 if t.group(0) == "<div" else -1
            if depth == 0:
                pos = m.start() + t.end()
                break
        out.append(html[m.start():pos])
    return out


def listings(html):
    """(label, is_diff, code lines) of every code block of every listing."""
    out = []
    for part in listing_divs(html):
        cap = re.search(r"<p>(.*?)</p>", part, re.S)
        label = " ".join(unescape(re.sub(r"<[^>]+>", " ", cap.group(1))).split()) if cap else ""
        for pre in re.finditer(r"<pre\b([^>]*)>(.*?)</pre>", part, re.S):
            text = unescape(re.sub(r"<[^>]+>", "", pre.group(2)))
            out.append((label, "diff" in pre.group(1), text.split("\n")))
    return out


def second_functions(html):
    """A listing of one function (its label ends "NAME() (...)") that also
    defines another function."""
    probs = []
    for label, is_diff, lines in listings(html):
        m = re.search(r": (\w+)\(\) \(", label)
        if not m:
            continue
        if is_diff:
            lines = [None if l[:1] not in ("+", " ") or l.startswith("+++") else l[1:]
                     for l in lines]
        others = sorted(set(n for n in c_definitions(lines) if n != m.group(1)))
        if others:
            probs.append("%s also defines %s" % (label, ", ".join(n + "()" for n in others)))
    return probs


def unmeasured_figures(html):
    """A figure the prose marks as measured, [4097]{.measured}, must be
    printed in a transcript (a <pre> block) of the same chapter; one
    marked [4100]{.measured from="ch13-cost"} must be in
    diagrams/ch13-cost.dat, the numbers a plot draws.  So a paragraph
    cannot quote one run while the chapter prints another."""
    probs = []
    body = re.sub(r'<nav id="TOC".*?</nav>', "", html, flags=re.S)
    for part in re.split(r"(?=<h1\b)", body):
        h = re.search(r"<h1\b[^>]*>(.*?)</h1>", part, re.S)
        title = " ".join(re.sub(r"<[^>]+>", " ", h.group(1)).split()) if h else "(before the first chapter)"
        pres = " ".join(unescape(re.sub(r"<[^>]+>", "", p))
                        for p in re.findall(r"<pre\b[^>]*>(.*?)</pre>", part, re.S))
        for m in re.finditer(r'<span class="measured"([^>]*)>(.*?)</span>', part, re.S):
            fig = unescape(re.sub(r"<[^>]+>", "", m.group(2))).strip().replace(",", "")
            src = re.search(r'data-from="([^"]+)"', m.group(1))
            if src:
                try:
                    where = open(os.path.join("diagrams", src.group(1) + ".dat"), encoding="utf-8").read()
                except OSError:
                    probs.append("%s: %s is marked as from diagrams/%s.dat, which does not exist"
                                 % (title, fig, src.group(1)))
                    continue
                where = "\n".join(l for l in where.splitlines() if not l.startswith("#"))
                what = "diagrams/%s.dat" % src.group(1)
            else:
                where, what = pres, "any transcript of the chapter"
            if not re.search(r"(?<![\d.])%s(?![\d.])" % re.escape(fig), where):
                probs.append("%s: the measured figure %s is not in %s" % (title, fig, what))
    return probs


HTML_CHECKS = [
    ("doubled", "no label printed twice (\"Figure Figure\", \"Listing Listing\", \"Table Table\")"),
    ("numbering", "every numbered section carries the number of its own chapter"),
    ("second-function", "a listing of one function shows no other function's definition"),
    ("measured", "every figure marked as measured is in its chapter's transcripts (or plot data)"),
]


def html_problems(html):
    return {"doubled": doubled_labels(html), "numbering": misnumbered_sections(html),
            "second-function": second_functions(html), "measured": unmeasured_figures(html)}


def check_html_fixtures():
    """Each book/tests/html/bad-*.html must make its check fail; its first
    line says which check and what the message must hold (or, after a
    "!", must not):
        <!-- expect: KIND | SUBSTRING ... | !SUBSTRING -->"""
    for path in sorted(glob.glob("book/tests/html/bad-*.html")):
        html = open(path, encoding="utf-8").read()
        first = html.split("\n", 1)[0]
        want = [w.strip() for w in first.split("expect:", 1)[1].rsplit("-->", 1)[0].split("|")]
        kind, subs = want[0], [w for w in want[1:] if w]
        probs = html_problems(html).get(kind, [])
        msg = "\n".join(probs)
        # "!TEXT": TEXT must not be in the message (a case that must pass)
        result(probs and all((w[1:] not in msg) if w.startswith("!") else (w in msg) for w in subs),
               "html check: %s is refused (%s)" % (path, kind),
               "found: %r\nwanted: %r" % (probs, subs))


# ---------------------------------------------------------------------------
# The exercises' code

def skeleton_todos(nn):
    """labs/chNN/skeleton's todo and revert lines: (kind, file, function)."""
    path = "labs/ch%02d/skeleton" % nn
    if not os.path.exists(path):
        return []
    out = []
    for line in open(path, encoding="utf-8"):
        m = re.match(r"\s*(todo|revert)\s+(\S+)\s+(\w+)\s*$", line)
        if m:
            out.append(m.groups())
    return out


def in_body(line):
    """Can LINE (C) be inside a function's body?  Not a comment or code at
    column 0 (book/include.lua's rule)."""
    return bool(re.match(r"\t|[{}]|#|[A-Za-z_]\w*:\s*$|\s*$", line))


def patch_functions(nn):
    """The new side of patch NN's hunks, line by line, each with the
    function it belongs to: [(file, function or None, added?, text)], one
    list per hunk."""
    patches = glob.glob("patches/%04d-*.patch" % nn)
    if len(patches) != 1:
        return []
    text = open(patches[0], encoding="utf-8").read()
    out = []
    for f in re.finditer(r"^diff --git a/\S+ b/(\S+)\n(.*?)(?=^diff --git |\Z)", text, re.S | re.M):
        path = f.group(1)
        for hunk in re.split(r"^(?=@@ )", f.group(2), flags=re.M)[1:]:
            head, _, body = hunk.partition("\n")
            lines = [l for l in body.split("\n") if l[:1] in ("+", "-", " ")]
            code = [None if l.startswith("-") else l[1:] for l in lines]
            cur = re.search(r"([A-Za-z_]\w*)\s*\(", re.search(r"@@.*@@ ?(.*)", head).group(1))
            cur = cur.group(1) if cur else None
            rows = []
            for i, l in enumerate(lines):
                if l.startswith("-"):
                    continue
                d = definition_at(code, i)
                if d:
                    cur = d
                elif not in_body(l[1:]):
                    cur = None
                rows.append((path, cur, l.startswith("+"), l[1:].strip()))
                if l[1:].startswith("}"):
                    cur = None
            out.append(rows)
    return out


def runs(lines, k):
    return set(tuple(lines[i:i + k]) for i in range(len(lines) - k + 1))


def answer_runs(nn, path, func, k=3):
    """The lines patch NN adds to FUNC in PATH (the code the exercise leaves
    to write), without indentation or short lines; and the runs of K of
    them in a row that appear nowhere else in the patch's new side (so
    that finding one in a listing means the listing shows FUNC)."""
    hunks = patch_functions(nn)
    answer, elsewhere = [], set()
    for rows in hunks:
        others = []
        for p, f, added, t in rows:
            if len(t) < 4:
                continue
            if p == path and f == func:
                if added:
                    answer.append(t)
            else:
                others.append(t)
        elsewhere |= runs(others, k)
    k = min(k, len(answer))
    mine = runs(answer, k) if k else set()
    return answer, (mine - elsewhere) or mine, k


def chapter_html(html, nn):
    """The part of HTML that is chapter NN: from its level-1 heading to the next."""
    m = re.search(r'<h1[^>]*><span class="header-section-number">%d</span>.*?(?=<h1\b|\Z)' % nn, html, re.S)
    return m.group(0) if m else ""


def listing_lines(html):
    """Every line of every listing in HTML, without indentation (and without
    the +/- of a diff), one list per listing."""
    out = []
    for _, is_diff, lines in listings(html):
        if is_diff:
            lines = [l[1:] for l in lines if l[:1] in ("+", "-", " ")]
        out.append([l.strip() for l in lines if len(l.strip()) >= 4])
    return out


def leaked(want, k, blocks):
    """Is one of the runs WANT (of K lines) in one of BLOCKS?"""
    return k > 0 and any(tuple(b[i:i + k]) in want for b in blocks for i in range(len(b) - k + 1))


def exercise_answers():
    """(chapter, kind, file, function, answer lines, runs, k) for every
    function of every chapter's skeleton."""
    out = []
    for ch in sorted(glob.glob("chapters/[0-9][0-9]-*.md")):
        nn = int(os.path.basename(ch)[:2])
        for kind, path, func in skeleton_todos(nn):
            out.append((nn, kind, path, func) + answer_runs(nn, path, func))
    return out


def answers_in(html, answers):
    """The answers whose code chapter NN of HTML prints."""
    return [a for a in answers if leaked(a[5], a[6], listing_lines(chapter_html(html, a[0])))]


def check_exercise_code(build):
    answers = exercise_answers()
    empty = ["chapter %d: %s %s()" % (nn, path, func) for nn, _, path, func, lines, _, _ in answers
             if not lines]
    result(answers and not empty,
           "exercises: every function a skeleton names has lines its patch adds (%d)" % len(answers),
           "no added lines found for: " + ", ".join(empty))
    inst = open(os.path.join(build, "book", "instructor", "index.html"), encoding="utf-8").read()
    student = open(os.path.join(build, "book", "index.html"), encoding="utf-8").read()
    missing = []
    for a in answers:
        flat = set(l for b in listing_lines(chapter_html(inst, a[0])) for l in b)
        gone = [l for l in a[4] if l not in flat]
        if gone:
            missing.append("chapter %d: %s(): %s" % (a[0], a[3], gone[0]))
    result(not missing, "exercises: the instructor edition prints the code of every TODO "
           "in its chapter (%d)" % len(answers), "not printed whole: " + "\n".join(missing))
    # the check that the student edition is clean must be able to fail: on
    # the instructor edition it finds every answer
    found = answers_in(inst, answers)
    result(len(found) == len(answers),
           "exercises: the leak check finds every answer in the instructor edition (%d of %d)"
           % (len(found), len(answers)),
           "not found: " + ", ".join(a[3] for a in answers if a not in found))
    leaks = ["chapter %d: %s() (%s)" % (a[0], a[3], a[1]) for a in answers_in(student, answers)]
    epub = os.path.join(build, "book", "containing-memory.epub")
    if os.path.exists(epub):
        with zipfile.ZipFile(epub) as z:
            for n in sorted(z.namelist()):
                if n.endswith(".xhtml"):
                    page = z.read(n).decode("utf-8", "replace")
                    for a in answers_in(page, answers):
                        leaks.append("EPUB %s: chapter %d: %s()" % (n, a[0], a[3]))
    result(not leaks, "exercises: the student edition (HTML, EPUB) prints none of the code "
           "the exercises leave to write", "\n".join(leaks))


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
    ("a label written before a reference that prints it", "chapters/front-broken-label.md",
     "# Broken {#sec-broken}\n\n![A figure.](diagrams/pipeline.svg){#fig-broken-label}\n\n"
     "Figure [](#fig-broken-label) shows it.\n",
     ["chapters/front-broken-label.md", "Figure [](#fig-broken-label)", "prints 'Figure Figure 1'"]),
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
    check_html_fixtures()
    check_build(a.build, a.make)
    check_editions(a.build, a.make)
    check_broken_include(a.build)
    check_broken_book(a.build)
    sys.exit(1 if FAILED else 0)


if __name__ == "__main__":
    main()
