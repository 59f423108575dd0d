#!/bin/sh
# deps.sh - make sure the Debian packages the kit needs are installed.
#
# As root: apt-get install whatever is missing.  As anyone else: print the
# one command to run and fail.  Nothing is fetched from anywhere but the
# Debian archive the machine is configured for.
set -eu

PKGS="linux-source-6.1 build-essential flex bison bc libelf-dev libssl-dev
cpio xz-utils rsync kmod git ccache qemu-system-x86 busybox-static
pandoc graphviz python3 perl python3-ply python3-git sparse procps"

missing=
for p in $PKGS; do
	s=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case $s in
	*" installed") ;;
	*) missing="$missing $p" ;;
	esac
done

if [ -z "$missing" ]; then
	echo "deps: all Debian packages present"
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages:$missing" >&2
	echo "deps: run as root:  apt-get install -y$missing" >&2
	exit 1
fi

echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
