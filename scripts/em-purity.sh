#!/bin/sh
# The EM part of the study of docs/clustering.md ("EM trees"): prepares the
# labelled data sets, fits each by `run --method em` and prints the purity
# table (the linkages, the EM trees, and any MCMC runs already in DIR/runs).
#
#   scripts/em-purity.sh [DIR]       (default DIR: clustering-study)
#
# ROUNDS (default 100) and SEED (1) set the search, TIME (e.g. 4m; default
# none) bounds each run's wall time (run --time). A finished run
# directory (one with a summary.json) is kept. About 15 minutes of one core,
# most of it on ccle, and 5 more for the per-column runs (the probit one
# most), and 20 more for the noise runs (5 more for the DDT's); the runs use nice -n 10.
set -eu
ROUNDS=${ROUNDS:-100}
SEED=${SEED:-1}
TIME=${TIME:-0}
cd "$(dirname "$0")/.."
. scripts/clustering/common.sh
study_setup "${1:-clustering-study}"

# fitem NAME MODEL DATA [EXTRA FLAGS...]: one EM run into $DIR/runs/NAME.
fitem() {
	name=$1 model=$2 data=$3
	shift 3
	study_run "$name" "$model" --data "$data" --method em --iters "$ROUNDS" --seed "$SEED" --time "$TIME" "$@"
}

G=examples/gaussian.pydt
# Run names: DATA-[z-]em-MODEL, z- for --standardize.
fitem synthetic-em-gauss $G X="$DIR/synthetic.csv"
fitem synthetic-em-ddt $G X="$DIR/synthetic.csv" --set alpha=0,beta=0
fitem stretch-z-em-gauss $G X="$DIR/stretch.csv" --standardize
fitem synnoise-z-em-gauss $G X="$DIR/synnoise.csv" --standardize
fitem synth8-em-gauss $G X="$DIR/synth8.csv"
fitem animals-em-probit examples/binary.pydt Y="$DIR/animals.csv"
fitem animals-z-em-gauss $G X="$DIR/animals.csv" --standardize
fitem ccle-em-gauss $G X="$DIR/ccle.csv"
fitem ccle-z-em-gauss $G X="$DIR/ccle.csv" --standardize

# A diffusion variance per column (docs/em.md, "A diffusion variance per
# dimension"): the same sets with examples/gaussian-perdim.pydt, and the
# probit model with prec : pos[D] (examples/binary-perdim.pydt).
P=examples/gaussian-perdim.pydt
fitem synthetic-em-perdim $P X="$DIR/synthetic.csv"
fitem synthetic-em-ddt-perdim $P X="$DIR/synthetic.csv" --set alpha=0,beta=0
fitem stretch-em-perdim $P X="$DIR/stretch.csv"
fitem stretch-z-em-perdim $P X="$DIR/stretch.csv" --standardize
fitem synnoise-z-em-perdim $P X="$DIR/synnoise.csv" --standardize
fitem synth8-em-perdim $P X="$DIR/synth8.csv"
fitem animals-em-probit-perdim examples/binary-perdim.pydt Y="$DIR/animals.csv"
fitem animals-z-em-perdim $P X="$DIR/animals.csv" --standardize

# A latent observation noise (docs/em.md, "A latent observation noise"):
# shared (examples/gaussian-noise.pydt) or one per column
# (examples/gaussian-colnoise.pydt), with one diffusion variance or one per
# column (gaussian-perdim-noise.pydt; with a shared noise written to DIR).
sed -e '/^param noise : pos\[D\]$/d' -e 's/noise\[d\]/noise/' examples/gaussian-perdim-noise.pydt >"$DIR/perdim-sharednoise.pydt"
for set in synnoise-z synth8 animals-z synthetic ccle-z; do
	data=${set%-z}
	z=
	[ "$data" = "$set" ] || z=--standardize
	fitem "$set-em-noise" examples/gaussian-noise.pydt X="$DIR/$data.csv" $z
	fitem "$set-em-colnoise" examples/gaussian-colnoise.pydt X="$DIR/$data.csv" $z
	fitem "$set-em-perdim-noise" "$DIR/perdim-sharednoise.pydt" X="$DIR/$data.csv" $z
	fitem "$set-em-perdim-colnoise" examples/gaussian-perdim-noise.pydt X="$DIR/$data.csv" $z
done

# The DDT (alpha = beta = 0) with a latent noise, shared or per column
# (docs/clustering.md, "EM trees": the DDT's row).
for m in noise colnoise; do
	fitem "synthetic-em-ddt-$m" "examples/gaussian-$m.pydt" X="$DIR/synthetic.csv" --set alpha=0,beta=0
done

go run ./internal/clusterstudy table "$DIR"
