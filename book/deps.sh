#!/bin/sh
# book/deps.sh - the Debian packages the book's build and checks need.
#
# Like labs/host/deps.sh: as root, apt-get install whatever is missing;
# as anyone else, print the one command to run and fail.  Only the Debian
# archive the machine is configured for is used.
#   pandoc graphviz python3   the HTML and EPUB, and the diagrams
#   gnuplot-nox               the plots of lab numbers (diagrams/*.gp)
#   weasyprint                the PDF, printed from the HTML
#   fonts-dejavu-core         the fonts the stylesheet and the diagrams name
#   epubcheck                 make book-check validates the EPUB with it
set -eu

PKGS="pandoc graphviz gnuplot-nox python3 weasyprint fonts-dejavu-core epubcheck"

missing=
for p in $PKGS; do
	s=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case $s in
	*" installed") ;;
	*) missing="$missing $p" ;;
	esac
done

[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "book: missing packages:$missing" >&2
	echo "book: run as root:  apt-get install -y --no-install-recommends$missing" >&2
	exit 1
fi

echo "book: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
