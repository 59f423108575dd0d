#!/bin/sh
# diagram.sh IN.dot OUT.svg - render one diagram in the house style.
#
# The .dot goes through book/diagram-style.gvpr (fonts, colours, record
# shapes for kernel structs) and then dot. Any message from gvpr or dot -
# an error or a warning - fails the render, and no partial SVG is left.
set -u
in=$1 out=$2
here=$(dirname "$0")
GVPR=${GVPR:-gvpr}
DOT=${DOT:-dot}
err=$(mktemp) tmp="$out.tmp.$$"
trap 'rm -f "$err" "$tmp" "$tmp.gv"' EXIT
if ! "$GVPR" -c -f "$here/diagram-style.gvpr" "$in" >"$tmp.gv" 2>"$err" || [ -s "$err" ]; then
	echo "$in: graphviz (gvpr) failed:" >&2; sed 's/^/  /' "$err" >&2; exit 1
fi
if ! "$DOT" -Tsvg -o "$tmp" "$tmp.gv" 2>"$err" || [ -s "$err" ]; then
	echo "$in: graphviz (dot) failed:" >&2; sed "s|$tmp.gv|$in|; s/^/  /" "$err" >&2; exit 1
fi
mv "$tmp" "$out"
