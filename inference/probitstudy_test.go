package inference

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/inference/diagnostics"
	"github.com/pydtlang/pydtlang/internal/cputime"
)

// TestProbitStudy is the measurement of docs/probit-mixing.md, "Session
// 24": chains of examples/binary.pydt on the animals data under the
// default schedule or an edited one (studyVariant), each step's CPU time
// (timedSweep), and the bulk ESS, integrated autocorrelation time, split
// R-hat and lower quantiles of log_joint, its parts (log_lik = log p(u |
// tree, σ²), log_tree, hyper), log prec, alpha, beta, log c and the number
// of branch points. It runs only when asked (minutes of CPU):
//
//	PROBIT_STUDY='main;drop:ghk(prec, u)' PROBIT_SEED=1 PROBIT_CHAINS=4 \
//	  PROBIT_BURN=5000 PROBIT_SWEEPS=5000 PROBIT_TRACE=/tmp/p \
//	  go test -run TestProbitStudy -v -timeout 60m ./inference
//
// (variants separated by ';'; PROBIT_FREEZE=1 fixes the topology after the
// burn-in; PROBIT_TRACE writes each variant's draws to PREFIX-VARIANT-seedS.csv,
// which TestProbitStudyCompare reads). PROBIT_CHAINS=4 with burn-in and
// recorded sweeps equal is the design of run --iters 2·SWEEPS --chains 4,
// though not the same draws.
func TestProbitStudy(t *testing.T) {
	spec := os.Getenv("PROBIT_STUDY")
	if spec == "" {
		t.Skip("study")
	}
	atoi := func(k string, d int) int {
		if s := os.Getenv(k); s != "" {
			n, _ := strconv.Atoi(s)
			return n
		}
		return d
	}
	burn, sweeps := atoi("PROBIT_BURN", 1000), atoi("PROBIT_SWEEPS", 4000)
	chains := atoi("PROBIT_CHAINS", 2)
	seed := uint64(atoi("PROBIT_SEED", 1))
	freeze := os.Getenv("PROBIT_FREEZE") == "1"
	y, err := dataset.ReadFile("../examples/data/animals.csv")
	if err != nil {
		t.Fatal(err)
	}
	for _, variant := range strings.Split(spec, ";") {
		m := compileBinaryExample(t, y)
		sched, err := NewSchedule(m)
		if err != nil {
			t.Fatal(err)
		}
		sched.Steps = studyVariant(t, sched.Steps, variant)
		names := []string{}
		for _, s := range sched.Steps {
			names = append(names, s.Name())
		}
		cols := []string{"log_joint", "log_lik", "log_tree", "hyper", "log_prec", "alpha", "beta", "log_c", "nbranch"}
		traces := make([][][]float64, len(cols))
		stepCPU := make([]time.Duration, len(sched.Steps))
		var total time.Duration
		scal := m.Scalars()
		idx := map[string]int{}
		for i, v := range scal {
			idx[v.Name] = i
		}
		for c := range chains {
			ch, err := NewChain(m, sched, seed, seedStream(c))
			if err != nil {
				t.Fatal(err)
			}
			for range burn {
				if err := ch.Sweep(); err != nil {
					t.Fatal(err)
				}
			}
			ch.TreeMoves(0).TopologyFixed = freeze
			rec := make([][]float64, len(cols))
			for range sweeps {
				d, err := timedSweep(ch, stepCPU)
				if err != nil {
					t.Fatal(err)
				}
				total += d
				p, err := ch.Measure(scal)
				if err != nil {
					t.Fatal(err)
				}
				hyper, _, _ := m.LogHyper(ch.st.Env)
				lt := ch.logTree()
				vals := []float64{p.LogJoint, p.LogLik, lt, hyper, logf(p.Scalars[idx["prec"]]), p.Scalars[idx["alpha"]],
					p.Scalars[idx["beta"]], logf(p.Scalars[idx["c"]]), float64(ch.Tree(0).NumInternal())}
				for i, x := range vals {
					rec[i] = append(rec[i], x)
				}
			}
			for i := range cols {
				traces[i] = append(traces[i], rec[i])
			}
		}
		n := float64(chains * sweeps)
		var b strings.Builder
		fmt.Fprintf(&b, "variant %q freeze=%v seed %d, %d chains × %d (+%d burn): CPU %.1f s, %.2f ms/sweep\n", variant, freeze, seed, chains, sweeps, burn, total.Seconds(), 1000*total.Seconds()/n)
		for i, nm := range names {
			fmt.Fprintf(&b, "  %-24s %6.3f ms  %4.1f%%\n", nm, 1000*stepCPU[i].Seconds()/n, 100*stepCPU[i].Seconds()/total.Seconds())
		}
		if pre := os.Getenv("PROBIT_TRACE"); pre != "" {
			f, err := os.Create(fmt.Sprintf("%s-%s-seed%d.csv", pre, strings.NewReplacer(":", "_", "|", "_", " ", "", "(", "", ")", "", ",", "").Replace(variant), seed))
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(f, "chain,"+strings.Join(cols, ","))
			for c := range chains {
				for k := range sweeps {
					fmt.Fprintf(f, "%d", c)
					for i := range cols {
						fmt.Fprintf(f, ",%.10g", traces[i][c][k])
					}
					fmt.Fprintln(f)
				}
			}
			f.Close()
		}
		for i, c := range cols {
			ess := diagnostics.ESSBulk(traces[i])
			per := ""
			for _, x := range traces[i] {
				per += fmt.Sprintf(" %.1f", float64(len(x))/diagnostics.ESSBulk([][]float64{x}))
			}
			fmt.Fprintf(&b, "  %-10s bulkESS %7.0f  IACT %6.1f (per chain%s)  ESS/CPUs %6.2f  rhat %.3f  q01 %.4g q001 %.4g mean %.4g\n", c, ess, n/ess, per, ess/total.Seconds(),
				diagnostics.SplitRhat(traces[i]), q(traces[i], 0.01), q(traces[i], 0.001), meanOf(traces[i]))
		}
		t.Log("\n" + b.String())
	}
}

// timedSweep is ch.Sweep() with the CPU time of each step added to
// stepCPU (parallel to the schedule's steps); it returns the sweep's CPU
// time. The same random draws as Sweep (TestProbitStudyTimedSweep).
func timedSweep(ch *Chain, stepCPU []time.Duration) (time.Duration, error) {
	for _, tr := range ch.trees {
		if err := tr.lik.Recompute(); err != nil {
			return 0, err
		}
	}
	var total time.Duration
	for i, st := range ch.sched.Steps {
		c0 := cputime.Process()
		if err := st.update(ch); err != nil {
			return 0, fmt.Errorf("%s: %w", st.Name(), err)
		}
		d := cputime.Process() - c0
		stepCPU[i] += d
		total += d
	}
	return total, nil
}

func logf(x float64) float64 { return math.Log(x) }

func q(ch [][]float64, p float64) float64 {
	var all []float64
	for _, c := range ch {
		all = append(all, c...)
	}
	return diagnostics.Quantile(all, p)
}

func meanOf(ch [][]float64) float64 {
	s, n := 0.0, 0
	for _, c := range ch {
		for _, x := range c {
			s += x
			n++
		}
	}
	return s / float64(n)
}

// studyVariant edits the schedule's steps by variant, parts joined by
// '+': "main" (unchanged); "drop:A|B" (the steps named A and B left out);
// "interleave:K" (K − 1 pairs of tree and hmc(u) before the sweep);
// "sigrep:K" (K − 1 more copies of slice(prec), ridge, scale(prec, u),
// orbit and hmc(u) after scale(c, times)); "hmcrep:K" (K − 1 more hmc(u)
// at the end). Every edit keeps each step exact, so the chain's target.
func studyVariant(t *testing.T, steps []Updater, variant string) []Updater {
	find := func(name string) Updater {
		for _, s := range steps {
			if s.Name() == name {
				return s
			}
		}
		t.Fatalf("no step %s", name)
		return nil
	}
	for _, part := range strings.Split(variant, "+") {
		kind, arg, _ := strings.Cut(part, ":")
		switch kind {
		case "main":
		case "drop":
			drop := strings.Split(arg, "|")
			var out []Updater
			for _, s := range steps {
				keep := true
				for _, d := range drop {
					if s.Name() == d {
						keep = false
					}
				}
				if keep {
					out = append(out, s)
				}
			}
			steps = out
		case "interleave":
			k, _ := strconv.Atoi(arg)
			tree, hmc := find("tree"), find("hmc(u)")
			var out []Updater
			for range k - 1 {
				out = append(out, tree, hmc)
			}
			steps = append(out, steps...)
		case "sigrep":
			// k-1 more copies of the σ² moves given u and hmc(u), after scale(c, times)
			k, _ := strconv.Atoi(arg)
			var block []Updater
			for _, nm := range []string{"slice(prec)", "ridge(prec, times)", "scale(prec, u)", "orbit(prec, times, u)", "hmc(u)"} {
				block = append(block, find(nm))
			}
			var out []Updater
			for _, s := range steps {
				out = append(out, s)
				if s.Name() == "scale(c, times)" {
					for range k - 1 {
						out = append(out, block...)
					}
				}
			}
			steps = out
		case "hmcrep":
			// hmc(u) k times at the end
			k, _ := strconv.Atoi(arg)
			hmc := find("hmc(u)")
			for range k - 1 {
				steps = append(steps, hmc)
			}
		default:
			t.Fatalf("variant %s", part)
		}
	}
	return steps
}

// TestProbitStudyCompare compares the lower tail of log prec in traces
// written by TestProbitStudy (PROBIT_COMPARE=A.csv,B.csv,...): for the
// pooled 1% and 0.1% quantiles, each run's quantile and the fraction of its
// draws below the pooled one, with the standard error from the effective
// sample size of that indicator.
func TestProbitStudyCompare(t *testing.T) {
	spec := os.Getenv("PROBIT_COMPARE")
	if spec == "" {
		t.Skip("study")
	}
	files := strings.Split(spec, ",")
	read := func(path string) [][]float64 {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		head := strings.Split(lines[0], ",")
		col := -1
		for i, h := range head {
			if h == "log_prec" {
				col = i
			}
		}
		var out [][]float64
		for _, l := range lines[1:] {
			f := strings.Split(l, ",")
			c, _ := strconv.Atoi(f[0])
			for len(out) <= c {
				out = append(out, nil)
			}
			x, _ := strconv.ParseFloat(f[col], 64)
			out[c] = append(out[c], x)
		}
		return out
	}
	runs := [][][]float64{}
	for _, f := range files {
		runs = append(runs, read(f))
	}
	// the fraction below a threshold, with its SE from the ESS of the indicator
	frac := func(ch [][]float64, thr float64) (float64, float64) {
		ind := make([][]float64, len(ch))
		n, k := 0, 0
		for c := range ch {
			for _, x := range ch[c] {
				v := 0.0
				if x < thr {
					v = 1
					k++
				}
				n++
				ind[c] = append(ind[c], v)
			}
		}
		p := float64(k) / float64(n)
		ess := diagnostics.ESSMean(ind)
		if k == 0 || math.IsNaN(ess) {
			ess = float64(n) / 50
		}
		return p, math.Sqrt(p * (1 - p) / ess)
	}
	for _, p := range []float64{0.01, 0.001} {
		// pooled threshold
		var all [][]float64
		for _, r := range runs {
			all = append(all, r...)
		}
		thr := q(all, p)
		var b strings.Builder
		fmt.Fprintf(&b, "p %.3f pooled log_prec quantile %.3f (prec %.3g):", p, thr, math.Exp(thr))
		for i, r := range runs {
			f, se := frac(r, thr)
			fmt.Fprintf(&b, "\n  %s: quantile %.3f (prec %.3g), fraction below pooled %.5f ± %.5f", files[i], q(r, p), math.Exp(q(r, p)), f, se)
		}
		t.Log(b.String())
	}
}

// TestProbitStudyTimedSweep checks that timedSweep, by which the study
// times each step, makes the same draws as Sweep: from the same seed two
// chains of the probit test model keep the same log joint density and
// precision, bit for bit, for 30 sweeps.
func TestProbitStudyTimedSweep(t *testing.T) {
	m, sched, pv := probitSetup(t, "", 6, 3)
	a, err := NewChain(m, sched, 5, 6)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewChain(m, sched, 5, 6)
	if err != nil {
		t.Fatal(err)
	}
	cpu := make([]time.Duration, len(sched.Steps))
	for k := range 30 {
		if err := a.Sweep(); err != nil {
			t.Fatal(err)
		}
		if _, err := timedSweep(b, cpu); err != nil {
			t.Fatal(err)
		}
		pa, err := a.Measure(nil)
		if err != nil {
			t.Fatal(err)
		}
		pb, err := b.Measure(nil)
		if err != nil {
			t.Fatal(err)
		}
		if pa.LogJoint != pb.LogJoint || a.get(pv) != b.get(pv) {
			t.Fatalf("sweep %d: Sweep gives log_joint %v, prec %v; timedSweep %v, %v", k+1, pa.LogJoint, a.get(pv), pb.LogJoint, b.get(pv))
		}
	}
}
