#!/bin/sh
# worktree.sh NN - build/tree: a git worktree of the kernel at chapter NN,
# on branch "work", to read and edit.  `make patches` turns its commits
# (everything after ch00) back into patches/.
set -eu
. labs/host/common.sh

nn=$1
wt=$BUILD/tree
lock_tree tree
sh labs/host/tree.sh

if [ -d "$wt" ]; then
	if [ -n "$(git -C "$wt" status --porcelain)" ]; then
		die "$wt has uncommitted changes: commit them (then make patches) or remove $wt"
	fi
	# Commits on "work" whose change is not in the series (compared by
	# patch id, as the tags are re-made whenever patches/ changes) have
	# not been exported.
	newest=ch$(printf '%02d' "$(nr_patches)")
	extra=$(git -C "$TREE" cherry "$newest" work | grep -c '^+' || true)
	if [ "$extra" -gt 0 ]; then
		die "$wt has $extra commit(s) not in patches/: run make patches, or remove $wt"
	fi
	git -C "$TREE" worktree remove --force "$PWD/$wt"
fi
git -C "$TREE" worktree prune
git -C "$TREE" worktree add -q -B work "$PWD/$wt" "ch$nn"
cat <<MSG
tree: $wt is at chapter $(expr "$nn" + 0) (branch work, $(git -C "$wt" log -1 --format='%h %s'))
  Read:    git -C $wt log -p ch00..
  Edit:    commit in $wt; new files need "git add -f" (Debian's
           .gitignore ignores every top-level entry).  To change patch K,
           git rebase -i ch00 there.
  Export:  make patches   (writes every commit after ch00 to patches/)
MSG
