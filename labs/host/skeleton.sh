#!/bin/sh
# skeleton.sh NN DIR - hollow out, in the kernel tree DIR (at chapter NN),
# the functions labs/chNN/skeleton names: each body becomes a numbered
# TODO comment with the hint, followed by the stub.  The file says:
#
#   todo FILE FUNCTION    a function patch NN adds to FILE (path in the tree)
#   revert FILE FUNCTION  a function patch NN changes: its body goes back to
#                         what it was at chapter NN-1, under the TODO
#   hint TEXT             what to write (several lines join into one)
#   stub C                the hollow body's code, e.g. "return 0;" (optional,
#                         todo only): one line each, indented by a tab;
#                         a tab after "stub " indents one more, a bare
#                         "stub" is an empty line
#
# Only the reference patch holds the code: the skeleton is made from it.
set -eu
. labs/host/common.sh

nn=$1 dir=$2
decl=labs/ch$nn/skeleton
[ -f "$decl" ] || die "chapter $(expr "$nn" + 0) has no exercise: $decl missing"
prev=ch$(printf '%02d' $(($(expr "$nn" + 0) - 1)))
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# body_of FUNC: from a C file on stdin, the lines inside the braces of
# FUNC's one definition (FUNC( at column 0 or after the return type, not
# a prototype; the body from a "{" line to a "}" line).
body_of() {
	awk -v f="$1" '
		state == 0 && $0 ~ "^([^ \t#/].*[ *])?" f "\\(" && $0 !~ /;[ \t]*$/ {
			state = 1; found++
		}
		state == 1 && $0 == "{" { state = 2; next }
		state == 2 { if ($0 == "}") state = 0; else print }
		END { if (found != 1) exit 1 }'
}

# One record per "todo": work/N.where (FILE FUNCTION), .hint, .stub.
awk -v w="$work" '
	/^[ \t]*(#|$)/ { next }
	($1 == "todo" || $1 == "revert") && NF == 3 {
		n++; print $2, $3, $1 > (w "/" n ".where"); next }
	n && $1 == "hint" { sub(/^hint[ \t]+/, ""); print > (w "/" n ".hint"); next }
	n && $0 ~ /^stub([ \t]|$)/ { sub(/^stub[ \t]?/, ""); print > (w "/" n ".stub"); next }
	{ printf "%s:%d: not a todo/revert/hint/stub line\n", FILENAME, NR; bad = 1 }
	END { exit bad }' "$decl" >&2 || die "$decl: fix the lines above"

n=1
while [ -f "$work/$n.where" ]; do
	read -r file func kind <"$work/$n.where"
	[ -s "$work/$n.hint" ] || die "$decl: TODO $n ($func) has no hint"
	if [ "$kind" = todo ]; then
		# The function must be one the chapter's patch adds.
		git -C "$TREE" diff "$prev" "ch$nn" -- "$file" |
			grep -qE "^\+([^ 	#].*[ *])?$func\(" ||
			die "$decl: TODO $n: patch $nn does not add $func() to $file"
	else
		# Its body as it was one chapter before, which must differ.
		git -C "$TREE" show "$prev:$file" | body_of "$func" >"$work/old" ||
			die "$decl: TODO $n: no single definition of $func() in $file at $prev"
		git -C "$TREE" show "ch$nn:$file" | body_of "$func" | cmp -s - "$work/old" &&
			die "$decl: TODO $n: patch $nn does not change $func() in $file"
		[ -f "$work/$n.stub" ] && die "$decl: TODO $n: a revert has no stub"
	fi
	{
		printf '\t/*\n'
		{ printf 'TODO %d (chapter %d): ' "$n" "$(expr "$nn" + 0)"
		  tr '\n' ' ' <"$work/$n.hint"; echo; } | fmt -w 66 |
			sed 's/^/\t * /; s/ *$//'
		printf '\t */\n'
		[ -f "$work/$n.stub" ] && sed 's/^/\t/' "$work/$n.stub"
		[ "$kind" = revert ] && cat "$work/old"
	} >"$work/body"
	# The definition: FUNC( at column 0 or after the return type, not a
	# prototype; then the body, from a "{" line to a "}" line.
	awk -v f="$func" -v body="$work/body" '
		state == 0 && $0 ~ "^([^ \t#/].*[ *])?" f "\\(" && $0 !~ /;[ \t]*$/ {
			state = 1; found++
		}
		state == 1 && $0 == "{" { print; while ((getline l < body) > 0) print l
			state = 2; next }
		state == 2 { if ($0 == "}") { state = 0; print } ; next }
		{ print }
		END { if (found != 1) exit 1 }' "$dir/$file" >"$work/out" ||
		die "$decl: TODO $n: no single definition of $func() in $file"
	cat "$work/out" >"$dir/$file"
	n=$((n + 1))
done
[ "$n" -gt 1 ] || die "$decl: no todo line"
echo "skeleton: chapter $(expr "$nn" + 0): $((n - 1)) function(s) hollowed out"
