#!/bin/sh
# scoretest.sh - make grade's transcript of a failing KUnit case, tested
# on the host with a made-up run: it must show the failing line of the
# test, from the tree in CM_SRC, under the comment nearest above it.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src/kernel" "$tmp/lab01"
cat >"$tmp/src/kernel/t_kunit.c" <<'C'
/* over the case */
static void t_case(struct kunit *test)
{
	/* in the case */
	KUNIT_EXPECT_EQ(test, a, 1);
	KUNIT_EXPECT_EQ(test, b, 2);
}

/* the second case's comment */
static void t_other(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, c, 3);
}
C
cat >"$tmp/lab01/tap.log" <<'T'
1..2
#     # t_case: EXPECTATION FAILED at kernel/t_kunit.c:6
#     Expected b == 2, but
not ok 1 - kunit t: t_case
#   # t_case: EXPECTATION FAILED at kernel/t_kunit.c:6
#     # t_other: EXPECTATION FAILED at kernel/t_kunit.c:12
not ok 2 - kunit t: t_other
#   # t_other: EXPECTATION FAILED at kernel/t_kunit.c:12
T
echo 'not ok - lab 01: FAIL: 2 of 2 test points failed' >"$tmp/lab01/verdict"
out=$(CM_SRC=$tmp/src python3 labs/host/score.py 1 "$tmp/out.json" test "$tmp/lab01" 2>&1)
n=0 bad=0
want() {
	n=$((n + 1))
	if printf '%s\n' "$out" | grep -qF -- "$2"; then
		echo "ok $n - score.py: $1"
	else
		echo "not ok $n - score.py: $1"
		printf '%s\n' "$out" | sed 's/^/    # /'
		bad=$((bad + 1))
	fi
}
want "a KUnit failure shows its line" "kernel/t_kunit.c:6: KUNIT_EXPECT_EQ(test, b, 2);"
want "... under the comment above it in the case" "#     /* in the case */"
want "... else under the comment over the case" "#     /* the second case's comment */"
want "... and still the expected values" "#       Expected b == 2, but"
[ "$bad" -eq 0 ]
