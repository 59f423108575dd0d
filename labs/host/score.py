#!/usr/bin/env python3
"""score.py - the score of a make grade run.

    score.py CHAPTER JSON WHAT LOGDIR...

Each LOGDIR is a build/logs/labNN-KERNEL/ that labs/host/run.sh filled
(verdict, tap.log, console.log; and run.out, run.sh's whole output, when
grade.sh kept it).  The last LOGDIR is the chapter's own lab: it is the
score.  A test point is worth the points its line declares ("ok 3 - what
[2 points]", from points() in labs/guest/tap.sh), else 1; a point the
lab never reached scores 0 and counts 1.  A run that fails for a reason
that is not a test point (a kernel splat, a timeout, no TAP at all)
scores 0: the labs pass only on a clean console.

The other LOGDIRs are the earlier labs, run again on the same kernel as
a regression check.  They are not points: each passes or fails, and any
failure is shown with its transcript.

Prints the chapter lab's points, the regression check, a transcript of
each failure (what the lab printed around the point, the kernel's lines
just before it), "Score: a/b" last, and writes JSON.  Exit status 0 only
on full marks with every earlier lab passing.
"""
import json
import os
import re
import sys

POINT = re.compile(r'^(not )?ok (\d+) - (.*?)(?: \[(\d+) points?\])?$')
STAMP = re.compile(r'^\[ *\d+\.\d+\] ')


def shorten(text, width):
    """text in at most width characters, cut between words (a number cut
    in two reads as another number: '4102 of 4108' as '4102 of 410')."""
    if len(text) <= width:
        return text
    cut = text[:width - 3].rsplit(' ', 1)[0]
    return cut + '...'


def read(path):
    try:
        with open(path, errors='replace') as f:
            return f.read().replace('\r', '').splitlines()
    except OSError:
        return []


def lab(logdir):
    name = os.path.basename(logdir.rstrip('/'))
    tap = read(os.path.join(logdir, 'tap.log'))
    console = read(os.path.join(logdir, 'console.log'))
    run = read(os.path.join(logdir, 'run.out'))
    verdict = (read(os.path.join(logdir, 'verdict')) or
               [l for l in run if l.startswith(('ok - ', 'not ok - '))] or
               ['not ok - no verdict: the lab never ran'])[0]
    plan = next((int(m.group(1)) for m in
                 (re.match(r'^1\.\.(\d+)', l) for l in tap) if m), None)
    points = []
    # Lines between two test points that are not "#" diagnostics are
    # what the lab's commands printed on their way to the next point
    # ("md5sum: can't read '-': Cannot allocate memory"): keep them.
    printed = []
    for i, line in enumerate(tap):
        m = POINT.match(line)
        if not m:
            if not line.startswith(('#', '1..')) and line.strip():
                printed.append(line)
            continue
        diag = []
        for d in tap[i + 1:]:
            if not d.startswith('#') or d.startswith('# cm-lab-exit'):
                break
            diag.append(d)
        points.append({'n': int(m.group(2)), 'what': m.group(3),
                       'ok': not m.group(1), 'weight': int(m.group(4) or 1),
                       'printed': printed[-10:], 'diag': diag})
        printed = []
    missing = max((plan or 1) - len(points), 0)
    # Only failing test points may be the reason a run failed.
    why = verdict.split(': ', 1)[1] if ': ' in verdict else verdict
    why = re.sub(r' \(\d+ s\)$', '', why)
    # A warning the lab asks for that did not come (labs/chNN/splats) is
    # a test of the lab's too: it does not zero the lab.
    clean = verdict.startswith('ok - ') or all(
        re.fullmatch(r'FAIL(: \d+ of \d+ test points failed)?'
                     r'|expected \d+ console lines matching .*', part)
        for part in why.split('; '))
    got = sum(p['weight'] for p in points if p['ok']) if clean else 0
    total = sum(p['weight'] for p in points) + missing
    return {'lab': name[3:5], 'log': logdir, 'verdict': verdict,
            'passed': verdict.startswith('ok - '), 'clean': clean,
            'plan': plan, 'missing': missing, 'score': got, 'max': total,
            'points': points, 'console': console, 'run': run, 'why': why,
            'tail': printed[-10:]}


def near(console, point):
    """Kernel lines printed while the lab worked towards this point."""
    mark = '%s %d - ' % ('not ok' if not point['ok'] else 'ok', point['n'])
    end = next((i for i, l in enumerate(console) if l.startswith(mark)), None)
    if end is None:
        return []
    start = end
    while start > 0 and not POINT.match(console[start - 1]) and \
            not console[start - 1].startswith('cm: running'):
        start -= 1
    lines = [l for l in console[start:end] if STAMP.match(l)]
    return lines[-8:]


FAILED_AT = re.compile(r'^#?\s*# \S+: (EXPECTATION|ASSERTION) FAILED at ')
FAILED_LINE = re.compile(r'FAILED at (\S+):(\d+)')


def source(where):
    """The failing line of a KUnit case in the tree the kernel was built
    from (CM_SRC, set by grade.sh), with the comment nearest above it in
    the same case (else the comment over the case): the case's author
    says there what the line checks.  Nothing without CM_SRC."""
    m = FAILED_LINE.search(where)
    src = os.environ.get('CM_SRC')
    if not m or not src:
        return []
    lines = read(os.path.join(src, m.group(1)))
    at = int(m.group(2)) - 1
    if not 0 <= at < len(lines):
        return []
    def block_ending(end):
        """The /* ... */ comment whose last line is lines[end]."""
        start = end
        while start > 0 and '/*' not in lines[start]:
            start -= 1
        return lines[start:end + 1]

    comment = []
    i = at - 1
    while i >= 0 and not lines[i].startswith(('static ', '}')):
        if lines[i].strip().endswith('*/'):
            comment = block_ending(i)
            break
        i -= 1
    if not comment and i > 0 and lines[i].startswith('static ') and \
            lines[i - 1].strip().endswith('*/'):
        comment = block_ending(i - 1)
    out = ['#     ' + l.strip() for l in comment]
    out.append('#     %s:%d: %s' % (m.group(1), at + 1, lines[at].strip()))
    return out


def explain(tap, point):
    """What the lab printed on the way to the point, then its "#" lines.
    A KUnit failure line stands for the lines under it in the KTAP the
    lab printed first ("Expected x == 7, but / x == 0"): fetch them."""
    out = ['| ' + l for l in point['printed']]
    for d in point['diag']:
        out.append(d)
        text = d.lstrip('# ').strip()
        if not FAILED_AT.match(d):
            continue
        at = next((i for i, l in enumerate(tap)
                   if l.lstrip('# ').strip() == text and l != d), None)
        if at is not None:
            for l in tap[at + 1:at + 7]:
                body = l.lstrip('# ').strip()
                if FAILED_AT.match(l) or re.match(r'(not )?ok \d', body) or \
                        not l.startswith('#'):
                    break
                out.append('#       ' + body)
        out.extend(source(d))
    return out


def unclean(r):
    """A run that did not end at its test points: why, and what showed."""
    print('\n  lab %s: %s' % (r['lab'], r['verdict']))
    if r['tail']:
        print('    the lab printed, after its last test point:')
        for l in r['tail']:
            print('      | ' + l[:106])
    # run.sh's own account: the splat with the console around it (a
    # hung guest's backtraces among it), or the last console lines.
    at = next((i for i, l in enumerate(r['run'])
               if l.startswith(('  splat, ', '  last console lines'))), None)
    if at is not None:
        for l in r['run'][at:at + 40]:
            print('  ' + l[:110])
    else:
        for l in [l for l in r['console'] if STAMP.match(l)][-15:]:
            print('    | ' + l[:106])


def main():
    chapter, out, what = sys.argv[1], sys.argv[2], sys.argv[3]
    labs = [lab(d) for d in sys.argv[4:]]
    if not labs:
        print('score.py: no lab runs to score', file=sys.stderr)
        return 2
    own, earlier = labs[-1], labs[:-1]
    print('grade: chapter %d, %s' % (int(chapter), what))

    print('\nlab %s, the chapter\'s own: %d/%d points' %
          (own['lab'], own['score'], own['max']))
    for p in own['points']:
        print('  %-6s %2d - %-56s %d/%d' % (
            'ok' if p['ok'] else 'not ok', p['n'], shorten(p['what'], 56),
            p['weight'] if p['ok'] and own['clean'] else 0, p['weight']))
    if own['missing']:
        print('  %d test point(s) never ran: 0/%d' % (own['missing'], own['missing']))
    if not own['clean']:
        print('  the whole lab scores 0: %s' % own['why'])

    if earlier:
        bad = [r for r in earlier if not r['passed']]
        print('\nearlier labs on the same kernel (a regression check, no points): '
              '%d of %d pass' % (len(earlier) - len(bad), len(earlier)))
        for r in earlier:
            print('  %-6s lab %s%s' % ('ok' if r['passed'] else 'not ok', r['lab'],
                                      '' if r['passed'] else ': ' + r['why']))

    failing = [(r, p) for r in labs for p in r['points'] if not p['ok']]
    if failing or not all(r['clean'] for r in labs):
        print('\ntranscript of what failed:')
    for r, p in failing:
        print('\n  lab %s, not ok %d - %s' % (r['lab'], p['n'], p['what']))
        tap = read(os.path.join(r['log'], 'tap.log'))
        for d in explain(tap, p) or ['# (the lab printed no diagnostic)']:
            print('    ' + d[:110])
        kern = near(r['console'], p)
        if kern:
            print('    console, just before it:')
            for l in kern:
                print('      ' + l[:110])
    for r in labs:
        if not r['clean']:
            unclean(r)
    for r in labs:
        if not r['passed']:
            print('\n  logs of lab %s: %s/ (console.log, tap.log)' % (r['lab'], r['log']))

    print('\nScore: %d/%d' % (own['score'], own['max']))
    result = {'chapter': int(chapter), 'graded': what, 'score': own['score'],
              'max': own['max'],
              'regression': [{'lab': r['lab'], 'passed': r['passed'],
                              'verdict': r['verdict']} for r in earlier],
              'labs': [{k: v for k, v in r.items()
                        if k not in ('console', 'run')} for r in labs]}
    os.makedirs(os.path.dirname(out) or '.', exist_ok=True)
    with open(out, 'w') as f:
        json.dump(result, f, indent=1)
        f.write('\n')
    print('grade: %s' % out)
    full = own['score'] == own['max'] and all(r['passed'] for r in earlier)
    return 0 if full else 1


if __name__ == '__main__':
    sys.exit(main())
