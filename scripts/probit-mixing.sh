#!/bin/sh
# Mixing benchmark of the probit sampler on the animals data (issue 7, item 3):
# 4 chains × 20,000 sweeps (or ITERS) of examples/binary.pydt per seed; prints split R-hat,
# bulk ESS and ESS per second (wall and CPU) of every scalar and log_joint.
# Usage: scripts/probit-mixing.sh OUTDIR [SEED...]   (default seeds 1 2 3)
# ITERS=3000 scripts/probit-mixing.sh ... runs pilots of 4 × 3000 sweeps.
# Slow (minutes per seed): it runs with nice -n 10.
set -eu
out=${1:?usage: scripts/probit-mixing.sh OUTDIR [SEED...]}
shift
[ $# -gt 0 ] || set -- 1 2 3
iters=${ITERS:-20000}
mkdir -p "$out"
go build -o "$out/pydtlang" ./cmd/pydtlang
for seed in "$@"; do
	dir="$out/seed$seed"
	# GNU time records user and system CPU seconds: on a shared machine
	# ESS per CPU second is the comparable speed, wall time is not.
	/usr/bin/time -f "%U %S" -o "$dir.cpu" nice -n 10 "$out/pydtlang" run examples/binary.pydt \
		--data Y=examples/data/animals.csv --iters "$iters" --chains 4 --seed "$seed" --out "$dir" --force >"$dir.log" 2>&1 || true
	tail -3 "$dir.log"
done
python3 - "$out" "$@" <<'PY'
import json, sys
out, seeds = sys.argv[1], sys.argv[2:]
print("| seed | variable | split R-hat | bulk ESS | tail ESS | ESS/s (wall) | ESS/s (CPU) | wall s | CPU s |")
print("|---|---|---|---|---|---|---|---|---|")
for s in seeds:
    d = json.load(open(f"{out}/seed{s}/summary.json"))
    wall = d["wall_time_seconds"]
    cpu = sum(float(x) for x in open(f"{out}/seed{s}.cpu").read().split()[-2:])
    for v in d["scalars"]:
        if v["name"] == "log_lik":
            continue
        print(f"| {s} | {v['name']} | {v['rhat']:.3f} | {v['ess_bulk']:.0f} | {v['ess_tail']:.0f} | "
              f"{v['ess_bulk']/wall:.2f} | {v['ess_bulk']/cpu:.2f} | {wall:.0f} | {cpu:.0f} |")
PY
