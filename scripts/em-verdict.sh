#!/bin/sh
# Search failure or model preference (docs/clustering.md, section of that
# name): for
# each set where the EM tree is less pure than average linkage, fits the EM
# run's tree (map.nwk), the average-linkage tree and the tree of the classes
# by EM at the run's held hyperparameters (run --method em --init-tree, the
# same seed, so the same subsample estimate of alpha, beta and, for probit,
# sigma^2) and prints each tree's value and purity. Run
# scripts/em-purity.sh DIR first: it writes the data and the EM runs.
#
#   scripts/em-verdict.sh [DIR]       (default DIR: clustering-study)
#
# EMITERS, when set, bounds every fit's EM iterations; by default 500, and
# 300 for synth8 and the probit fits, as docs/clustering.md's table was made.
# About 8 minutes of one core, most of it on synth8 and the probit fits;
# nice -n 10. NOISE=0 leaves out the noise runs.
set -eu
SEED=${SEED:-1}
cd "$(dirname "$0")/.."
DIR=${1:-clustering-study}
go build -o "$DIR/clusterstudy" ./internal/clusterstudy
mkdir -p "$DIR/verdict"

# verdict RUN DATA Z MODEL DATAVAR TREES ITERS [FLAGS...]: RUN is the EM
# run under DIR/runs, DATA the data set's name, Z "-z" for standardized
# columns, TREES the trees to fit ("em linkage class"; the class tree
# multifurcates, which the DDT cannot fit), ITERS the EM iterations of
# each fit (unless EMITERS is set).
verdict() {
	run=$1 data=$2 z=$3 model=$4 var=$5 trees=$6 iters=${EMITERS:-$7}
	shift 7
	std=
	[ "$z" = -z ] && std=--standardize
	"$DIR/clusterstudy" linkage $z "$DIR/$data.csv" average "$DIR/verdict/$run-linkage.nwk"
	"$DIR/clusterstudy" classtree "$DIR/$data.csv" "$DIR/verdict/$run-class.nwk"
	cp "$DIR/runs/$run/map.nwk" "$DIR/verdict/$run-em.nwk"
	for t in $trees; do
		out="$DIR/verdict/$run-$t"
		nice -n 10 "$DIR/pydtlang" run "$model" --data "$var=$DIR/$data.csv" $std "$@" --method em \
			--init-tree "$out.nwk" --iters 1 --em-iters "$iters" --seed "$SEED" --out "$out" --force >"$out.log" 2>&1 ||
			{ echo "$run $t: failed, see $out.log" >&2; continue; }
		value=$(sed -n 's/.*initial tree (given) fitted: //p' "$out.log")
		purity=$("$DIR/clusterstudy" purity "$DIR/$data.csv" "$out.nwk" | sed 's/.*dendrogram purity \([0-9.]*\).*/\1/')
		echo "$run | $t tree | purity $purity | $value"
	done
}

G=examples/gaussian.pydt
P=examples/gaussian-perdim.pydt
ALL="em linkage class"
verdict synnoise-z-em-gauss synnoise -z $G X "$ALL" 500
verdict synnoise-z-em-perdim synnoise -z $P X "$ALL" 500
verdict synth8-em-gauss synth8 "" $G X "$ALL" 300
verdict animals-em-probit animals "" examples/binary.pydt Y "$ALL" 300
verdict animals-em-probit-perdim animals "" examples/binary-perdim.pydt Y "$ALL" 300
verdict animals-z-em-gauss animals -z $G X "$ALL" 500
verdict synthetic-em-ddt synthetic "" $G X "em linkage" 500 --set alpha=0,beta=0

# A latent observation noise (docs/em.md, "A latent observation noise"):
# the noise runs of scripts/em-purity.sh where the EM tree is less pure
# than average linkage.
if [ "${NOISE:-1}" != 0 ]; then
	verdict synnoise-z-em-colnoise synnoise -z examples/gaussian-colnoise.pydt X "$ALL" 500
	verdict synth8-em-perdim-colnoise synth8 "" examples/gaussian-perdim-noise.pydt X "$ALL" 300
	verdict animals-z-em-colnoise animals -z examples/gaussian-colnoise.pydt X "$ALL" 300
	# Session 24: synth8 with a shared noise, the DDT with a latent noise.
	verdict synth8-em-noise synth8 "" examples/gaussian-noise.pydt X "$ALL" 300
	verdict synthetic-em-ddt-noise synthetic "" examples/gaussian-noise.pydt X "em linkage" 500 --set alpha=0,beta=0
	verdict synthetic-em-ddt-colnoise synthetic "" examples/gaussian-colnoise.pydt X "em linkage" 500 --set alpha=0,beta=0
fi
# Session 24: synth8 with a variance per column.
verdict synth8-em-perdim synth8 "" $P X "$ALL" 300
