#!/bin/sh
# grade.sh NN - grade build/tree on chapter NN: build its kernel (edits
# not yet committed included), run lab NN and every earlier lab on it
# (they must still pass), and add up the points the labs declare.
# Prints "Score: a/b"; writes build/grade/chNN.json.  Exit 0 on full marks.
#
#   GRADE_KERNEL=NN   grade the reference kernel build/chNN instead
#   GRADE_LABS="NN"   run only these labs (make check uses both)
set -u
. labs/host/common.sh

nn=$1
n=$(expr "$nn" + 0)
out=${GRADE_JSON:-$BUILD/grade/ch$nn.json}
if [ -n "${GRADE_KERNEL-}" ]; then
	knn=$GRADE_KERNEL what="the reference kernel build/ch$GRADE_KERNEL"
else
	have=$(wt_chapter) || exit 1
	[ "$(expr "$have" + 0)" -ge "$n" ] ||
		die "$WT is at chapter $(expr "$have" + 0), not $n: make exercise CH=$n (or make tree CH=$n) first"
	sh labs/host/treekernel.sh || {
		mkdir -p "$(dirname "$out")"
		printf '{"chapter": %d, "graded": "%s", "score": 0, "error": "the kernel does not build"}\n' \
			"$n" "$WT" >"$out"
		echo "Score: 0 (the kernel of $WT does not build; see above)"
		echo "grade: $out"
		exit 1
	}
	knn=tree what="$WT ($(git -C "$WT" log -1 --format='%h %s')$(
		[ -n "$(git -C "$WT" status --porcelain)" ] && echo ', with edits not committed'))"
fi

labs=${GRADE_LABS:-$(i=0; while [ $i -le "$n" ]; do printf '%02d ' $i; i=$((i + 1)); done)}
dirs=
for l in $labs; do
	if [ "$knn" = tree ]; then kname=$(basename "$WT"); else kname=ch$knn; fi
	dir=$LOGS/lab$l-$kname
	echo "grade: running lab $l ..."
	sh labs/host/run.sh "$knn" "$l" >"$LOGS/grade.run" 2>&1
	mkdir -p "$dir"
	mv "$LOGS/grade.run" "$dir/run.out"
	grep -E '^(not )?ok - |^run.sh: ' "$dir/run.out" | sed 's/^/  /'
	dirs="$dirs $dir"
done
# shellcheck disable=SC2086
CM_SRC=$([ "$knn" = tree ] && echo "$WT") \
	python3 labs/host/score.py "$nn" "$out" "$what" $dirs
