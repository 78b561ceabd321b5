package inference

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/internal/densetest"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// orbitSetup compiles the probit test model on an n×d Y of zeros with
// prec's prior replaced by prior and, when dims, a precision per column
// (param prec : pos[D]); it returns the model, its schedule, prec and the
// orbit move.
func orbitSetup(t *testing.T, prior string, dims, variance bool, n, d int) (*Model, *Schedule, *graph.Var, *probitOrbitStep) {
	t.Helper()
	src := strings.Replace(probitModel, "prec ~ Gamma(3, 3)", prior, 1)
	if variance {
		src = strings.Replace(src, "1 / prec)", "prec)", 1)
	}
	if dims {
		src = strings.Replace(src, "param Z : real[N, D]\n", "param Z : real[N, D]\nparam prec : pos[D]\n", 1)
	}
	m, sched, pv := probitSetupSource(t, src, n, d)
	u, ok := probitOrbit(m, 0)
	if !ok {
		t.Fatal("no orbit move")
	}
	return m, sched, pv, u.(*probitOrbitStep)
}

// orbitCase is one setting of TestProbitOrbitInvariance.
type orbitCase struct {
	name, prior string
	dims        bool    // a precision per column
	missing     float64 // the share of Y's entries made missing
	// variance: the PYDT's variance is prec itself (a variance with
	// prec's prior), not 1 / prec.
	variance bool
}

// orbitStats are the statistics TestProbitOrbitInvariance follows, of the
// observed entries only (a missing entry's u is not in the state).
var orbitStatNames = []string{"log prec", "LCA time 1,2", "mean u²", "root time", "mean |u|", "log prec·agree"}

func orbitStats(m *Model, pv *graph.Var, n, d int) func(ch *Chain) []float64 {
	return func(ch *Chain) []float64 {
		tr := ch.trees[0].Tree
		y := ch.st.Env.Values[m.Data.ID]
		sq, abs, _, agree, nobs := auxMoments(ch, y, n, d)
		agree = agree/nobs - 2.5
		lp := math.Log(ch.Values(pv)[0])
		return []float64{lp, densetest.LCATime(tr, 0, 1).T(), sq / nobs, tr.Time(tr.Root()).T(), abs / nobs, lp * agree}
	}
}

// runOrbitInvariance draws reps states from the joint distribution of c's
// model, applies moves updates of the orbit move (with the given mutation)
// to each, and returns the changes of orbitStatNames and the share of
// replicates whose prec changed. For the first checks replicates of the
// exact move it checks the invariance itself: the log likelihood of u given
// the tree after the move plus Σ_d n_d log g_d equals the one before, with
// h and g_d found from prec alone, and the root's time is t/h.
func runOrbitInvariance(t *testing.T, c orbitCase, mut orbitMutation, reps, moves, checks int) ([][]float64, float64) {
	t.Helper()
	const n, d = 6, 4
	m, sched, pv, step := orbitSetup(t, c.prior, c.dims, c.variance, n, d)
	if step.reciprocal == c.variance {
		t.Fatalf("the move takes prec as a precision: %v, want %v", step.reciprocal, !c.variance)
	}
	step.mutation = mut
	stats := orbitStats(m, pv, n, d)
	rng := rand.New(rand.NewPCG(71, 72))
	diffs := make([][]float64, len(orbitStatNames))
	var moved float64
	for r := range reps {
		ch := jointProbitState(t, m, sched, rng)
		y := ch.st.Env.Values[m.Data.ID]
		if c.missing > 0 {
			// Entries of a joint draw made missing leave a draw from
			// the joint of the rest; their u enter no target.
			for k := range y {
				if rng.Float64() < c.missing {
					y[k] = math.NaN()
				}
			}
			if err := ch.syncEvidence(); err != nil {
				t.Fatal(err)
			}
		}
		before := stats(ch)
		if err := ch.trees[0].lik.Recompute(); err != nil {
			t.Fatal(err)
		}
		ll0 := ch.trees[0].lik.LogLik()
		prec0 := append([]float64(nil), ch.Values(pv)...)
		tr := ch.trees[0].Tree
		root0 := tr.Time(tr.Root())
		for k := range moves {
			if err := step.update(ch); err != nil {
				t.Fatal(err)
			}
			if k == 0 && r < checks && mut == orbitExact {
				checkOrbitInvariance(t, ch, pv, y, d, prec0, ll0, root0, c.variance)
			}
		}
		after := stats(ch)
		if after[0] != before[0] {
			moved++
		}
		for i := range before {
			diffs[i] = append(diffs[i], after[i]-before[i])
		}
	}
	return diffs, moved / float64(reps)
}

// checkOrbitInvariance checks one move's invariance against its
// definition: h = (1 + prec_d)/(1 + prec'_d) for every d, the root at t/h,
// and log N(u'; 0, K') + Σ_d n_d log g_d = log N(u; 0, K) with
// g_d² = prec_d/(1 + prec_d − h).
func checkOrbitInvariance(t *testing.T, ch *Chain, pv *graph.Var, y []float64, d int, prec0 []float64, ll0 float64, root0 pydt.Time, variance bool) {
	t.Helper()
	prec := ch.Values(pv)
	if variance {
		// prec holds σ²: its precisions, before and after the move.
		inv := func(x []float64) []float64 {
			out := make([]float64, len(x))
			for i, v := range x {
				out[i] = 1 / v
			}
			return out
		}
		prec, prec0 = inv(prec), inv(prec0)
	}
	h := (1 + prec0[0]) / (1 + prec[0])
	if h == 1 {
		return // not moved
	}
	for j := range prec {
		if hj := (1 + prec0[j]) / (1 + prec[j]); math.Abs(hj-h) > 1e-12*h {
			t.Errorf("h = %v from prec[0] but %v from prec[%d]", h, hj, j)
		}
	}
	tr := ch.trees[0].Tree
	if root := tr.Time(tr.Root()).T(); math.Abs(root*h-root0.T()) > 1e-12 {
		t.Errorf("root time %v after the move, want %v/%v = %v", root, root0.T(), h, root0.T()/h)
	}
	want := ll0
	for dim := range d {
		p0 := prec0[0]
		if len(prec0) > 1 {
			p0 = prec0[dim]
		}
		logG := 0.5 * math.Log(p0/(1+p0-h))
		for k := dim; k < len(y); k += d {
			if !math.IsNaN(y[k]) {
				want -= logG
			}
		}
	}
	if ll := ch.trees[0].lik.LogLik(); !(math.Abs(ll-want) <= 1e-8*(1+math.Abs(want))) {
		t.Errorf("log N(u'; 0, K') = %.12g after the move, want log N(u; 0, K) − Σ n_d log g_d = %.12g (h = %v)", ll, want, h)
	}
}

// TestProbitOrbitInvariance checks that orbit(prec, times, u) leaves the
// posterior invariant, exactly and in isolation: states drawn from the
// joint distribution (scalars and tree from the prior, locations by the
// diffusion, u = Z + ε, Y = 1{u > 0}) are posterior states given their own
// Y, so after two moves (10,000 replicates per case) the statistics must
// keep their law (mean change within 4 standard errors of 0); for the
// first 100 replicates checkOrbitInvariance checks the move against its
// definition. prec ~ Gamma(4, 80) puts σ² near 20,
// where the orthant's walls bind (the animals posterior has σ² ≈ 35-50);
// the other cases take the test priors (σ² ≈ 1), a precision per column
// (with both priors: with the test priors h ranges widely enough that the
// D Jacobian terms of the precisions show), the variance written as a
// variance (Z ~ PYDT(alpha, beta, c, prec): its Jacobian δ − 2 log q, which
// no other case reaches; without the −2 log q it fails by 24 standard
// errors), and a quarter of Y missing. TestProbitOrbitMutations shows the test
// detects a dropped Jacobian, u scaled by g², and unscaled times.
func TestProbitOrbitInvariance(t *testing.T) {
	t.Parallel()
	const reps, moves = 10000, 2
	for _, c := range orbitCases {
		t.Run(c.name, func(t *testing.T) {
			diffs, moved := runOrbitInvariance(t, c, orbitExact, reps, moves, 100)
			t.Logf("prec changed in %.0f%% of replicates", 100*moved)
			if moved < 0.9 {
				t.Errorf("prec changed in only %.0f%% of replicates", 100*moved)
			}
			checkMeanChanges(t, orbitStatNames, diffs)
		})
	}
}

var orbitCases = []orbitCase{
	{"sigma2 near 20", "prec ~ Gamma(4, 80)", false, 0, false},
	{"test priors", "prec ~ Gamma(3, 3)", false, 0, false},
	{"per-dimension sigma2 near 20", "prec ~ Gamma(4, 80)", true, 0, false},
	{"per-dimension test priors", "prec ~ Gamma(3, 3)", true, 0, false},
	{"a variance", "prec ~ Gamma(3, 3)", false, 0, true},
	{"missing entries", "prec ~ Gamma(4, 80)", false, 0.25, false},
}

// TestProbitOrbitMutations breaks the move in each of the ways its
// derivation could go wrong and requires TestProbitOrbitInvariance's
// statistics to detect it (some mean change beyond 6 standard errors),
// with the test priors (σ² ≈ 1), where h ranges widely. At 10,000
// replicates the largest |z| were: the variance's Jacobian dropped 14.5
// (log prec); the times' Jacobian dropped 69 (log prec); u scaled by g²
// instead of g 9.3 (mean u²); the times not scaled 15.6 (log prec). With
// prec ~ Gamma(4, 80) (σ² ≈ 20) h stays within a few hundredths of 1, and
// the variance's Jacobian (−log h per precision) is too small to detect
// (|z| 1.6); the others fail there by 19, 15 and 6.
func TestProbitOrbitMutations(t *testing.T) {
	const reps, moves = 10000, 2
	for _, mut := range []struct {
		name string
		mut  orbitMutation
	}{
		{"variance Jacobian dropped", orbitNoVarJacobian},
		{"time Jacobian dropped", orbitNoTimeJacobian},
		{"u scaled by g²", orbitGSquared},
		{"times not scaled", orbitTimesFixed},
	} {
		t.Run(mut.name, func(t *testing.T) {
			diffs, _ := runOrbitInvariance(t, orbitCases[1], mut.mut, reps, moves, 0)
			checkMutationDetected(t, orbitStatNames, diffs)
		})
	}
}

// TestProbitOrbitDomain checks that the move's target is -Inf at and
// beyond both ends of its domain, max_b t_b < h < min_d (1 + prec_d), and
// finite just inside, so a slice sampler never accepts a state at an edge:
// there a time would reach t = 1 or a precision 0. orbitTime is exact at
// h = 1 and refuses h ≤ t, also for a time within 1e-250 of t = 1.
func TestProbitOrbitDomain(t *testing.T) {
	for _, c := range []struct {
		s, delta float64
		want     float64 // NaN: refused
	}{
		{3, 0, 3},
		{600, 0, 600},                            // t = 1 − e^-600: kept exactly at h = 1
		{600, -1e-300, 600},                      // h − t = e^-600 − 1e-300 > 0
		{600, -1e-200, math.NaN()},               // h < t
		{math.Log(2), math.Log(0.5), math.NaN()}, // h = t: t' = 1
		{math.Log(2), math.Log(0.25), math.NaN()},
		{math.Log(2), math.Log(2), math.Log(4.0 / 3)}, // t = 1/2 → 1/4
	} {
		got, ok := orbitTime(c.s, c.delta, math.Expm1(c.delta))
		if math.IsNaN(c.want) {
			if ok {
				t.Errorf("orbitTime(%v, %v) = %v, want a refusal", c.s, c.delta, got)
			}
			continue
		}
		if !ok || math.Abs(got-c.want) > 1e-12*c.want {
			t.Errorf("orbitTime(%v, %v) = %v, %v, want %v", c.s, c.delta, got, ok, c.want)
		}
	}
	for _, dims := range []bool{false, true} {
		m, sched, pv, step := orbitSetup(t, "prec ~ Gamma(4, 80)", dims, false, 6, 4)
		rng := rand.New(rand.NewPCG(5, 6))
		for range 20 {
			ch := jointProbitState(t, m, sched, rng)
			tr := ch.trees[0].Tree
			ch.internal, ch.saved = ch.internal[:0], ch.saved[:0]
			maxS := 0.0
			for _, b := range tr.PreOrder(nil) {
				if !tr.IsLeaf(b) {
					ch.internal = append(ch.internal, b)
					ch.saved = append(ch.saved, tr.Time(b))
					maxS = max(maxS, tr.Time(b).S())
				}
			}
			ch.probit.orbit.x0 = append(ch.probit.orbit.x0[:0], ch.Values(pv)...)
			minPrec := math.Inf(1)
			for _, p := range ch.Values(pv) {
				minPrec = min(minPrec, p)
			}
			// log max_b t_b and log min_d (1 + prec_d); at the edges
			// themselves rounding decides, beyond them by a millionth
			// of the domain's width the target must be -Inf.
			lo, hi := math.Log1p(-math.Exp(-maxS)), math.Log1p(minPrec)
			w := hi - lo
			cases := []struct {
				delta  float64
				finite bool
			}{{lo - 1e-6*w, false}, {lo - w, false}, {0, true}, {hi + 1e-6*w, false}, {hi + w, false}}
			if maxS < 30 {
				// Nested times within 1e-13 of t = 1 can meet in
				// float64 once moved (the move then refuses them).
				cases = append(cases, []struct {
					delta  float64
					finite bool
				}{{lo + 1e-6*w, true}, {lo + w/2, true}, {hi - 1e-6*w, true}}...)
			}
			for _, c := range cases {
				if f := step.at(ch, c.delta); c.finite != !math.IsInf(f, -1) || math.IsNaN(f) {
					t.Errorf("f(%v) = %v with the domain (%v, %v), largest s %v", c.delta, f, lo, hi, maxS)
				}
			}
		}
	}
}

// TestGewekeProbitPerDim is TestGewekeProbit with a precision per column
// (param prec : pos[D]), whose schedule has orbit(prec[d], times, u) with
// one h shared by the columns and neither scale(prec, u) nor ghk (they take
// one scalar).
func TestGewekeProbitPerDim(t *testing.T) {
	t.Parallel()
	const n, d = 4, 2
	src := strings.Replace(probitModel, "param Z : real[N, D]\n", "param Z : real[N, D]\nparam prec : pos[D]\n", 1)
	m := compileSource(t, "probit.pydt", []byte(src),
		map[string]*dataset.Matrix{"Y": {Rows: n, Cols: d, Data: make([]float64, n*d), Source: "y.csv"}}, nil)
	sched, err := NewSchedule(m)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sched.Explain(), "orbit(prec[d], times, u)") {
		t.Fatalf("no orbit(prec[d], times, u) in\n%s", sched.Explain())
	}
	pv, _ := m.G.Lookup("prec")
	stats := func(env *graph.Env, tr *pydt.Tree) []float64 {
		out := treeStats(m, env, tr)
		var ones float64
		for _, v := range env.Values[m.Data.ID] {
			ones += v
		}
		p := env.Values[pv.ID]
		return append(out, math.Log(p[0]), math.Log(p[1]), ones)
	}
	names := append(treeStatNames(m), "log prec[1]", "log prec[2]", "number of ones")
	setup := gewekeSetup{priorSeed: [2]uint64{31, 32}, chainSeed: 33, firstStream: 0, chains: 8, burn: 500, iters: 4000}
	prior, chains := gewekeMeans(t, m, setup, len(names), stats, m.SampleJoint, func(ch *Chain) { redrawProbit(t, ch) })
	compareMeans(t, names, prior, chains)
}
