#!/bin/sh
# fbm-compare.sh: Neal's fbm (dft-mc) and pydtlang side by side on the
# paper's four-cluster data (issue 8): effective samples per CPU second of
# the log likelihood log p(X | tree, σ²), of c and of the root time, both
# chains measured by the same code (mixbench -compare: Geyer's ESS,
# diagnostics.ESSMean, per CPU second of the recorded iterations).
#
# Usage (from the repository's root):
#
#   scripts/fbm-compare.sh [options] FBM_BIN      (or FBM_BIN=... in the environment)
#
#   -n N          points (default 1000)
#   -d D          dimensions (default 2)
#   -burn B       iterations (sweeps) before recording (default 2000)
#   -iters K      recorded iterations (sweeps) (default 20000)
#   -seeds S,S    seeds (default 1,2,3): seed s draws the data (mixbench's
#                 four-cluster data of seed s) and seeds both chains
#   -minutes M    instead of K iterations, record for M CPU minutes (fbm:
#                 dft-mc in chunks of 50 iterations until they have used M
#                 minutes; pydtlang: mixbench -cpu-limit Mm, at most K
#                 sweeps): equal CPU budgets, for large N
#   -only WHICH   fbm, pydt or both (default both)
#   -out DIR      where the data, traces and tables go (default fbm-compare-out)
#   -keep         keep fbm's log files (about 16·N bytes per iteration)
#
# FBM_BIN is the directory of fbm's programs (dft-spec, data-spec, mc-spec,
# rand-seed, dft-mc; built from http://www.cs.utoronto.ca/~radford/fbm.software.html).
# Every chain runs under nice -n 19, one at a time.
#
# What runs, per seed s:
#
#  1. mixbench -write-data: the four-cluster data of seed s (N points,
#     cluster i mod 4, centres (±1, ±1), variance 1/8 per dimension), the
#     data mixbench's chain of seed s sees, as a whitespace file.
#  2. fbm, with priors as close to examples/gaussian.pydt (alpha = beta = 0:
#     Neal's Dirichlet diffusion tree) as fbm's prior family allows:
#       dft-spec LOG 0 D / 1:2 - 0.26:0.85
#     * the diffusion: "1:2" is one standard deviation σ common to all
#       dimensions (no per-dimension level), whose precision 1/σ² has fbm's
#       Gamma of mean 1/width² = 1 and shape alpha/2 = 1, i.e. rate 1:
#       exactly pydtlang's prec ~ Gamma(1, 1) on 1/σ², shared by the dimensions.
#     * the divergence function a(t) = c0 + c1/(1-t) + c2/(1-t)²: c0 and c2
#       absent ("-" and omitted), so a(t) = c1/(1-t), pydtlang's c. fbm puts
#       its Gamma on c1^-2 (mean 1/width², shape alpha/2), not on c1, so
#       pydtlang's c ~ Gamma(1, 1) (Exp(1)) cannot be matched exactly; with
#       width 0.26 and alpha 0.85, log c1 has the mean (-0.577) and the
#       variance (π²/6) of log c for c ~ Exp(1). At N = 1000 the posterior
#       of c (relative sd about 10%) is dominated by the likelihood.
#     * no model-spec: no noise, the data are the leaves' locations.
#       data-spec LOG 0 D / DATA .      (targets only)
#       mc-spec LOG slice-positions met-terminals gibbs-sigmas slice-div
#     one iteration (one pass of the four operations) is one sweep;
#     locations integrated out (none stored). rand-seed LOG s.
#     dft-mc runs to B, then to B + K (or for M more CPU minutes).
#  3. fbmscore reads fbm's log and writes the trace: per iteration
#     log p(X | tree, σ²) computed by pydtlang's belief propagation on fbm's
#     tree (fbm records no such quantity), c1, the root time, 1/σ², and
#     dft-mc's cumulative CPU time (clock(): user + system).
#  4. mixbench with its default schedule on the same data, B burn-in and K
#     recorded sweeps, trace to pydt-s.csv.
#  5. mixbench -compare on each side's traces: ESS, ESS/s (CPU), halves
#     and R-hat; the tables go to DIR/fbm.md and DIR/pydt.md.
set -eu

n=1000 d=2 burn=2000 iters=20000 seeds=1,2,3 only=both out=fbm-compare-out keep=0 minutes=
usage() {
	sed -n '8,26p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}
while [ $# -gt 0 ]; do
	case $1 in
	-n) n=$2; shift 2 ;;
	-d) d=$2; shift 2 ;;
	-burn) burn=$2; shift 2 ;;
	-iters) iters=$2; shift 2 ;;
	-seeds) seeds=$2; shift 2 ;;
	-only) only=$2; shift 2 ;;
	-minutes) minutes=$2; shift 2 ;;
	-out) out=$2; shift 2 ;;
	-keep) keep=1; shift ;;
	-h | -help | --help) usage ;;
	-*) echo "fbm-compare.sh: unknown option $1" >&2; usage ;;
	*) FBM_BIN=$1; shift ;;
	esac
done
case $only in fbm | pydt | both) ;; *) echo "fbm-compare.sh: -only wants fbm, pydt or both, got $only" >&2; exit 2 ;; esac
for v in "$n" "$d" "$burn" "$iters"; do
	case $v in '' | *[!0-9]*) echo "fbm-compare.sh: -n, -d, -burn, -iters want non-negative integers, got '$v'" >&2; exit 2 ;; esac
done
case $minutes in '' | [0-9]* ) ;; *) echo "fbm-compare.sh: -minutes wants a number, got $minutes" >&2; exit 2 ;; esac
if [ -n "$minutes" ] && ! awk -v m="$minutes" 'BEGIN { exit !(m + 0 > 0) }'; then
	echo "fbm-compare.sh: -minutes wants a positive number, got $minutes" >&2
	exit 2
fi
if [ "$iters" -lt 8 ]; then
	echo "fbm-compare.sh: -iters must be at least 8" >&2
	exit 2
fi
if [ ! -f go.mod ] || [ ! -d internal/mixbench ]; then
	echo "fbm-compare.sh: run from the repository's root" >&2
	exit 2
fi
if [ "$only" != pydt ]; then
	if [ -z "${FBM_BIN:-}" ]; then
		echo "fbm-compare.sh: give fbm's bin directory (argument or FBM_BIN); fbm is not part of this repository" >&2
		exit 2
	fi
	for p in dft-spec data-spec mc-spec rand-seed dft-mc; do
		if [ ! -x "$FBM_BIN/$p" ]; then
			echo "fbm-compare.sh: $FBM_BIN/$p: no such program (is $FBM_BIN fbm's bin directory, e.g. fbm/bin-fbm?)" >&2
			exit 2
		fi
	done
fi
if [ ! -x /usr/bin/time ]; then
	echo "fbm-compare.sh: needs /usr/bin/time (GNU time) to measure dft-mc's CPU" >&2
	exit 2
fi

mkdir -p "$out"
go build -o "$out/mixbench" ./internal/mixbench
go build -o "$out/fbmscore" ./internal/fbmscore
total=$((burn + iters))
fbmtraces= pydttraces=
for s in $(echo "$seeds" | tr ',' ' '); do
	"$out/mixbench" -write-data "$out/four" -n "$n" -d "$d" -seeds "$s"
	data=$out/four-$s.txt
	if [ "$only" != pydt ]; then
		log=$out/fbm-$s.log
		rm -f "$log"
		"$FBM_BIN/dft-spec" "$log" 0 "$d" / 1:2 - 0.26:0.85
		"$FBM_BIN/data-spec" "$log" 0 "$d" / "$data" .
		"$FBM_BIN/mc-spec" "$log" slice-positions met-terminals gibbs-sigmas slice-div
		"$FBM_BIN/rand-seed" "$log" "$s"
		# Two runs, so that the burn-in's CPU is measured apart; fbm's own
		# clock (cpu_s in the trace) is what the ESS/s uses.
		if [ "$burn" -gt 0 ]; then
			/usr/bin/time -f "%U %S" -o "$out/fbm-$s.burn.time" nice -n 19 "$FBM_BIN/dft-mc" "$log" "$burn"
		fi
		if [ -z "$minutes" ]; then
			/usr/bin/time -f "%U %S" -o "$out/fbm-$s.time" nice -n 19 "$FBM_BIN/dft-mc" "$log" "$total"
		else
			# dft-mc's own "@MINUTES" takes whole minutes of the whole run:
			# run it in chunks of 50 iterations until M CPU minutes are used.
			at=$burn used=0
			while awk -v u="$used" -v m="$minutes" 'BEGIN { exit !(u < 60 * m) }'; do
				at=$((at + 50))
				/usr/bin/time -f "%U %S" -o "$out/fbm-$s.chunk.time" nice -n 19 "$FBM_BIN/dft-mc" "$log" "$at"
				read -r cu cs <"$out/fbm-$s.chunk.time"
				used=$(awk -v a="$used" -v u="$cu" -v s="$cs" 'BEGIN { printf "%.2f", a + u + s }')
			done
			echo "$used 0" >"$out/fbm-$s.time"
			rm -f "$out/fbm-$s.chunk.time"
		fi
		"$out/fbmscore" -data "$data" -log "$log" -out "$out/fbm-$s.csv"
		if [ "$keep" = 0 ]; then
			rm -f "$log"
		fi
		read -r u sy <"$out/fbm-$s.time"
		echo "seed $s: fbm dft-mc after iteration $burn: $(awk -v u="$u" -v s="$sy" 'BEGIN { print u + s }') s of CPU, user + system (/usr/bin/time)" >&2
		fbmtraces="$fbmtraces $out/fbm-$s.csv"
	fi
	if [ "$only" != fbm ]; then
		nice -n 19 "$out/mixbench" -n "$n" -d "$d" -burn "$burn" -sweeps "$iters" -seeds "$s" \
			${minutes:+-cpu-limit "${minutes}m"} -trace "$out/pydt" >"$out/pydt-$s.md" 2>"$out/pydt-$s.log"
		pydttraces="$pydttraces $out/pydt-$s.csv"
	fi
done
if [ -n "$fbmtraces" ]; then
	# fbm's trace starts at iteration 1: skip the burn-in.
	# shellcheck disable=SC2086
	"$out/mixbench" -compare -skip "$burn" $fbmtraces >"$out/fbm.md"
	echo "== fbm (dft-mc), N = $n, D = $d, the iterations after $burn" && cat "$out/fbm.md"
fi
if [ -n "$pydttraces" ]; then
	# mixbench's trace holds the recorded sweeps only.
	# shellcheck disable=SC2086
	"$out/mixbench" -compare $pydttraces >"$out/pydt.md"
	echo "== pydtlang (mixbench default schedule), N = $n, D = $d, the sweeps after $burn" && cat "$out/pydt.md"
fi
