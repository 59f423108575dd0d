#!/bin/sh
# diagram.sh IN.dot|IN.gp OUT.svg - render one diagram in the house style.
#
# A .dot goes through book/diagram-style.gvpr (fonts, colours, record
# shapes for kernel structs) and then dot. A .gp is a gnuplot script (a
# plot of a lab's own numbers, read from the diagrams/ file it names),
# run from the top of the repository with OUT as its output. Any message
# from gvpr, dot or gnuplot - an error or a warning - fails the render,
# and no partial SVG is left.
set -u
in=$1 out=$2
here=$(dirname "$0")
GVPR=${GVPR:-gvpr}
DOT=${DOT:-dot}
GNUPLOT=${GNUPLOT:-gnuplot}
err=$(mktemp) tmp="$out.tmp.$$"
trap 'rm -f "$err" "$tmp" "$tmp.gv" "$tmp.clean"' EXIT
case $in in
*.gp)
	if ! "$GNUPLOT" -e "set output '$tmp'" "$in" 2>"$err" || [ -s "$err" ]; then
		echo "$in: gnuplot failed:" >&2; sed 's/^/  /' "$err" >&2; exit 1
	fi ;;
*)
	if ! "$GVPR" -c -f "$here/diagram-style.gvpr" "$in" >"$tmp.gv" 2>"$err" || [ -s "$err" ]; then
		echo "$in: graphviz (gvpr) failed:" >&2; sed 's/^/  /' "$err" >&2; exit 1
	fi
	if ! "$DOT" -Tsvg -o "$tmp" "$tmp.gv" 2>"$err" || [ -s "$err" ]; then
		echo "$in: graphviz (dot) failed:" >&2; sed "s|$tmp.gv|$in|; s/^/  /" "$err" >&2; exit 1
	fi ;;
esac
# Made to be put inline in HTML and EPUB (XHTML): no XML declaration, no
# DOCTYPE (its external DTD is an error in an EPUB), no comments, and ids
# prefixed with the diagram's name, so that two figures never share one.
name=$(basename "${in%.*}")
sed -e '/^<?xml /d' -e '/^<!DOCTYPE.*>$/d' -e '/^<!DOCTYPE/,/>$/d' \
    -e '/^<!--.*-->$/d' -e '/^<!--/,/-->$/d' \
    -e "s/ id=\"/ id=\"$name-/g" -e "s/xlink:href=\"#/xlink:href=\"#$name-/g" \
    -e "s/ id='/ id='$name-/g" -e "s/xlink:href='#/xlink:href='#$name-/g" \
    -e "s/url(#/url(#$name-/g" "$tmp" >"$tmp.clean" && mv "$tmp.clean" "$tmp" || exit 1
mv "$tmp" "$out"
