#!/bin/sh
# Reproduces the study of docs/clustering.md: prepares the labelled data
# sets, fits the PYDT to each with and without a Normal noise model, and
# prints the dendrogram purity table (posterior mean, summary tree, MAP
# tree) next to average, complete and Ward linkage.
#
#   scripts/clustering.sh [DIR]       (default DIR: clustering-study)
#
# ITERS (default 4000), CHAINS (2), THIN (10) and SEED (1) set the runs'
# length. The runs take about an hour of one core at the defaults, most of
# it on ccle (N = 504); they run under nice -n 10. A finished run directory
# (one with a summary.json; delete it to fit it again) is kept, so the
# script can be re-run to finish or re-tabulate a study.
set -eu
ITERS=${ITERS:-4000}
CHAINS=${CHAINS:-2}
THIN=${THIN:-10}
SEED=${SEED:-1}
cd "$(dirname "$0")/.."
. scripts/clustering/common.sh
study_setup "${1:-clustering-study}"

# fit NAME MODEL DATA [EXTRA FLAGS...]: one run into $DIR/runs/NAME.
fit() {
	name=$1 model=$2 data=$3
	shift 3
	study_run "$name" "$model" --data "$data" --iters "$ITERS" --chains "$CHAINS" --thin "$THIN" --seed "$SEED" "$@"
}

G=examples/gaussian.pydt
N=examples/gaussian-noise.pydt
T=scripts/clustering/gaussian-noise-tight.pydt
# The fast data sets first. Run names: DATA-[z-]MODEL, z- for --standardize.
fit synthetic-gauss $G X="$DIR/synthetic.csv"
fit synthetic-noise $N X="$DIR/synthetic.csv"
fit synthetic-tight $T X="$DIR/synthetic.csv"
fit synthetic-ddt $G X="$DIR/synthetic.csv" --set alpha=0,beta=0
fit stretch-gauss $G X="$DIR/stretch.csv"
fit stretch-z-gauss $G X="$DIR/stretch.csv" --standardize
fit synnoise1-z-gauss $G X="$DIR/synnoise1.csv" --standardize
fit synnoise2-z-gauss $G X="$DIR/synnoise2.csv" --standardize
fit synnoise-z-gauss $G X="$DIR/synnoise.csv" --standardize
fit synnoise-z-tight $T X="$DIR/synnoise.csv" --standardize
fit animals-probit examples/binary.pydt Y="$DIR/animals.csv"
fit animals-gauss $G X="$DIR/animals.csv"
fit animals-z-gauss $G X="$DIR/animals.csv" --standardize
fit animals-z-noise $N X="$DIR/animals.csv" --standardize
fit animals-z-tight $T X="$DIR/animals.csv" --standardize
# Mixing: the same model, 4 chains of 20,000 sweeps (kept every 50th).
(ITERS=20000 CHAINS=4 THIN=50 SEED=2; fit synthetic-long-gauss $G X="$DIR/synthetic.csv")
fit ccle-gauss $G X="$DIR/ccle.csv"
fit ccle-z-gauss $G X="$DIR/ccle.csv" --standardize
fit ccle-z-tight $T X="$DIR/ccle.csv" --standardize

go run ./internal/clusterstudy table "$DIR"
