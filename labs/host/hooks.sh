#!/bin/sh
# hooks.sh - compile every C file the series changes, in a kernel that also
# has the options the lab kernels leave out (labs/config/hooks.config:
# migration, memory failure, KSM, userfaultfd, device memory).  Hooks that
# no lab can run are then at least compiled, with -Werror.  When sparse is
# installed, the files the series adds go through it too (C=2), and any
# sparse warning fails.  Prints one TAP line per check.
set -eu
. labs/host/common.sh

last=$(nr_patches)
if [ "$last" -eq 0 ]; then
	echo "ok - hooks: the series is empty, nothing to compile"
	exit 0
fi
nn=$(printf '%02d' "$last")
obj=$BUILD/obj/hooks
log=$LOGS/hooks.log

# CM_KSRC=DIR: compile in DIR, a checkout of its own at chNN, as
# kernel.sh does (make check runs this in the background there).
if [ -n "${CM_KSRC-}" ]; then
	[ "$(git -C "$CM_KSRC" rev-parse HEAD 2>/dev/null)" = \
		"$(git -C "$TREE" rev-parse "ch$nn^{commit}")" ] ||
		die "CM_KSRC=$CM_KSRC is not a checkout of ch$nn"
	TREE=$CM_KSRC obj=$BUILD/obj/$(basename "$CM_KSRC")-hooks
else
	lock_tree hooks
	sh labs/host/tree.sh
	checkout_chapter "$nn"
fi

# shellcheck disable=SC2046
configure_kernel "hooks (ch$nn)" "$obj" "$log.config" \
	$(chapter_frags "$nn") labs/config/hooks.config
abs_obj=$(cd "$obj" && pwd)

changed=$(git -C "$TREE" diff --name-only ch00 "ch$nn" -- '*.c' | sed 's/\.c$/.o/')
added=$(git -C "$TREE" diff --name-only --diff-filter=A ch00 "ch$nn" -- '*.c' |
	sed 's/\.c$/.o/')

cc=$(kernel_cc)
# shellcheck disable=SC2086
if run_logged "hooks (ch$nn)" "$log" make -C "$TREE" O="$abs_obj" \
	CC="$cc" KCFLAGS=-Werror -j"$(nproc)" $changed; then
	echo "ok - hooks: $(echo "$changed" | grep -c .) changed files compile with every hook enabled"
else
	echo "not ok - hooks: changed files compile with every hook enabled (log: $log)"
	exit 1
fi

if ! command -v sparse >/dev/null; then
	echo "not ok - sparse: not installed (apt-get install sparse)"
	exit 1
fi
# C=2 checks the named files whether or not they were rebuilt.
# shellcheck disable=SC2086
make -C "$TREE" O="$abs_obj" CC="$cc" C=2 $added >"$log.sparse" 2>&1 || {
	tail -n 20 "$log.sparse" | sed 's/^/    # /'
	echo "not ok - sparse: the make run failed (log: $log.sparse)"
	exit 1
}
warnings=$(grep -E ': (warning|error):' "$log.sparse" || true)
if [ -z "$warnings" ]; then
	echo "ok - sparse: $(echo "$added" | grep -c .) new files are sparse-clean"
else
	echo "$warnings" | sed 's/^/    # /'
	echo "not ok - sparse: warnings in the new files (log: $log.sparse)"
	exit 1
fi
