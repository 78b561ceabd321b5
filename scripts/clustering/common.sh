# Shared by scripts/clustering.sh (MCMC) and scripts/em-purity.sh (EM), the
# two halves of the study of docs/clustering.md. Source it from the
# repository's root.

# study_setup DIR: builds DIR/pydtlang, writes the labelled data sets to DIR
# (internal/clusterstudy data) and makes DIR/runs; sets DIR.
study_setup() {
	DIR=$1
	go build -o "$DIR/pydtlang" ./cmd/pydtlang
	go run ./internal/clusterstudy data "$DIR"
	mkdir -p "$DIR/runs"
}

# study_run NAME MODEL [RUN FLAGS...]: "pydtlang run MODEL FLAGS --out
# DIR/runs/NAME --force" under nice -n 10, its output in DIR/runs/NAME.log,
# unless DIR/runs/NAME already holds a finished run (a summary.json; delete
# it to fit it again). A failed run is reported and the study goes on.
study_run() {
	name=$1
	shift
	if [ -f "$DIR/runs/$name/summary.json" ]; then
		return
	fi
	echo "== $name" >&2
	nice -n 10 "$DIR/pydtlang" run "$@" --out "$DIR/runs/$name" --force >"$DIR/runs/$name.log" 2>&1 ||
		echo "   $name failed: see $DIR/runs/$name.log" >&2
}
