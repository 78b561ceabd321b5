package inference

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/internal/densetest"
	"github.com/pydtlang/pydtlang/stdlib"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// TestGHKQuantileRoundTrip: ghkDecode inverts ghkEncode for truncation
// points and values far into both tails, and normQuantileLog inverts
// log Φ down to log-probabilities far below float64's smallest number.
func TestGHKQuantileRoundTrip(t *testing.T) {
	for _, lp := range []float64{-1e-300, -1e-17, -1e-5, -0.3, -math.Ln2, -1, -5, -50, -689, -700, -5000, -1e6} {
		x := normQuantileLog(lp)
		if got := stdlib.LogNormCDF(x); !(math.Abs(got-lp) <= 1e-12*math.Max(1, math.Abs(lp))) {
			t.Errorf("log Φ(normQuantileLog(%g)) = %g", lp, got)
		}
	}
	as := []float64{-80, -40, -8, -1, -1e-3, 0, 0.5, 3, 10, 38, 60}
	for _, a := range as {
		for _, dx := range []float64{1e-9, 1e-4, 0.01, 0.3, 1, 2.5, 6, 20, 45, 80} {
			e := a + dx
			lpa := stdlib.LogNormCDF(-a)
			q, up := ghkEncode(a, e, lpa)
			got := ghkDecode(a, q, up, lpa)
			if !(got > a) || !(math.Abs(got-e) <= 1e-9*math.Max(1, math.Abs(e))) && !(math.Abs(got-e) <= 1e-6*dx) {
				t.Errorf("a = %g, ê = %g (up %v, log q %g): decoded %.17g", a, e, up, q, got)
			}
			// The fast path agrees.
			l2, fast := ghkStep(a, q, up)
			if !(math.Abs(l2-lpa) <= 1e-13*math.Max(1, math.Abs(lpa))) || !(fast > a) ||
				!(math.Abs(fast-e) <= 1e-9*math.Max(1, math.Abs(e))) && !(math.Abs(fast-e) <= 1e-6*dx) {
				t.Errorf("a = %g, ê = %g (up %v, log q %g): ghkStep gives %.17g, log Φ(−a) %g (want %g)", a, e, up, q, fast, l2, lpa)
			}
		}
	}
}

// TestProbitGHKInvariance checks that ghk(prec, u) leaves the posterior
// invariant: states drawn from the joint distribution are posterior states
// given their own Y, so after two moves log prec and the statistics of u
// must keep their law (mean change within 4 standard errors of 0), with the
// test priors (σ² ≈ 1) and with a prior that puts σ² near 20, the regime of
// the animals posterior where the orthant's walls bind. Dropping the
// Jacobian log v', or the Φ_j terms of the target, fails it by many
// standard errors (docs/probit-mixing.md). At σ² near 20 only Σ log Φ_j
// (ghkLogPhi) detects a dropped or doubled Φ_j (by about 7 standard
// errors; log prec·agree by under 3). A third case makes a quarter of
// Y's entries missing, so columns take the Cholesky factor of their
// observed rows.
func TestProbitGHKInvariance(t *testing.T) {
	t.Parallel()
	const n, d, reps, moves = 6, 8, 10000, 2
	for _, c := range []struct {
		name, prior string
		missing     float64 // the share of Y's entries made missing
	}{
		{"test priors", "prec ~ Gamma(3, 3)", 0},
		{"sigma2 near 20", "prec ~ Gamma(4, 80)", 0},
		// Columns with missing entries take their own Cholesky factor of
		// the observed rows' K (ghkScratch.sub).
		{"missing entries", "prec ~ Gamma(3, 3)", 0.25},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, sched, pv := probitSetup(t, c.prior, n, d)
			g, ok := probitGHK(m, 0)
			if !ok {
				t.Fatal("no ghk move")
			}
			stats := func(ch *Chain) []float64 {
				// Only the observed entries: a missing entry's u is
				// not in the chain's state, and the move need not keep
				// its joint law with the rest.
				y := ch.st.Env.Values[m.Data.ID]
				sq, abs, sum2, agree, nobs := auxMoments(ch, y, n, d)
				// The signs agree more within a column the larger σ² is:
				// log prec times their agreement (a function of Y, which
				// the move keeps) tests that prec still depends on Y.
				agree = agree/nobs - 2.5
				lp := math.Log(ch.get(pv))
				// Σ log Φ_j, in hundredths to print: the statistic that
				// detects a dropped or doubled Φ_j at σ² near 20 (by about
				// 7 standard errors), where the others cannot.
				phi := 100 * ghkLogPhi(t, ch, y, n, d, 1/ch.get(pv))
				return []float64{lp, sq / nobs, abs / nobs, sum2 / nobs, lp * agree, phi}
			}
			names := []string{"log prec", "mean u²", "mean |u|", "(Σu)²/n", "log prec·agree", "100·Σ log Φ_j"}
			rng := rand.New(rand.NewPCG(61, 62))
			diffs := make([][]float64, len(names))
			var moved float64
			for r := range reps {
				ch := jointProbitState(t, m, sched, rng)
				if c.missing > 0 {
					// Entries of a joint draw made missing leave a draw
					// from the joint of the rest; their u enter no
					// target and stay as they are.
					y := ch.st.Env.Values[m.Data.ID]
					for k := range y {
						if rng.Float64() < c.missing {
							y[k] = math.NaN()
						}
					}
				}
				before := stats(ch)
				if r < 100 {
					ghkRoundTrip(t, ch, g.(*probitGHKStep))
				}
				for range moves {
					if err := g.update(ch); err != nil {
						t.Fatal(err)
					}
				}
				after := stats(ch)
				for i := range before {
					diffs[i] = append(diffs[i], after[i]-before[i])
				}
				moved += math.Abs(after[0] - before[0])
				if ch.Skipped > 0 {
					t.Fatalf("the move skipped a state (%d)", ch.Skipped)
				}
			}
			checkMeanChanges(t, names, diffs)
			t.Logf("mean |Δ log prec| per replicate %.3f", moved/reps)
			if moved == 0 {
				t.Error("the move never changed prec")
			}
		})
	}
}

// ghkLogPhi returns Σ_j log Φ_j, the log of the masses of the intervals
// that the GHK decomposition allows each auxiliary of the state, computed
// here independently of the move: in each column the observed auxiliaries
// u ~ N(0, K), K = σ²·C + I (C_ij the time of the lowest common ancestor of
// rows i and j, 1 on the diagonal; the Probit noise has variance 1), are
// u = L·e with L the Cholesky factor of K (rows in order); given e_1..e_{j-1}
// the sign of u_j is that of Y_j exactly where e_j lies beyond
// −μ_j/L_jj (μ_j = Σ_{k<j} L_jk e_k), which has mass Φ(s_j μ_j / L_jj). The
// move's target along its orbit holds these terms; a move that drops or
// doubles them tilts their law, and at σ² near 20, where K is nearly σ²·C
// and every other statistic hardly depends on them, this one still moves.
func ghkLogPhi(t *testing.T, ch *Chain, y []float64, n, d int, sigma2 float64) float64 {
	t.Helper()
	tr := ch.trees[0].Tree
	aux := ch.trees[0].aux
	total := 0.0
	for dim := range d {
		var rows []int
		for i := range n {
			if !math.IsNaN(y[i*d+dim]) {
				rows = append(rows, i)
			}
		}
		m := len(rows)
		if m == 0 {
			continue
		}
		// L, the Cholesky factor of K, by the textbook recurrence
		// (gonum's Factorize also estimates K's condition number, which
		// took a third of this test's time).
		L := make([]float64, m*m)
		for a, i := range rows {
			for b := 0; b <= a; b++ {
				k := sigma2 * densetest.LCATime(tr, pydt.NodeID(i), pydt.NodeID(rows[b])).T()
				if a == b {
					k++
				}
				for c := range b {
					k -= L[a*m+c] * L[b*m+c]
				}
				if a == b {
					if !(k > 0) {
						t.Fatal("K is not positive definite")
					}
					L[a*m+a] = math.Sqrt(k)
				} else {
					L[a*m+b] = k / L[b*m+b]
				}
			}
		}
		e := make([]float64, m)
		for j, i := range rows {
			mu := 0.0
			for k := range j {
				mu += L[j*m+k] * e[k]
			}
			ljj := L[j*m+j]
			e[j] = (aux[i*d+dim] - mu) / ljj
			s := 2*y[i*d+dim] - 1 // Y = 1: u > 0; Y = 0: u < 0
			total += math.Log(0.5 * math.Erfc(-s*mu/ljj/math.Sqrt2))
		}
	}
	return total
}

// ghkRoundTrip checks that encoding the auxiliaries and decoding them at
// the same variance gives them back.
func ghkRoundTrip(t *testing.T, ch *Chain, g *probitGHKStep) {
	t.Helper()
	_, ok, err := g.prepare(ch)
	if err != nil || !ok {
		t.Fatalf("prepare: %v, %v", ok, err)
	}
	x0 := g.v.value(ch)
	if f, err := g.at(ch, x0, 0); err != nil || math.IsInf(f, -1) {
		t.Fatalf("f(0) = %g, %v", f, err)
	}
	aux, gs, d := ch.trees[0].aux, &ch.probit.ghk, ch.trees[0].b.D
	for dim, rows := range gs.rows { // the observed entries
		for _, i := range rows {
			k := i*d + dim
			if u := gs.u[k]; !(math.Abs(u-aux[k]) <= 1e-9*math.Max(1, math.Abs(aux[k]))) {
				t.Fatalf("entry %d: u = %.17g decoded as %.17g", k, aux[k], u)
			}
		}
	}
}

// TestProbitGHKReports checks that ghk(prec, u) reports its acceptance
// rate with the other moves' (summary and table), and that a failure to
// evaluate the variances at a proposal is returned as an error naming the
// step, not taken for a rejection.
func TestProbitGHKReports(t *testing.T) {
	const n, d = 6, 3
	y := &dataset.Matrix{Rows: n, Cols: d, Source: "y.csv", Data: []float64{
		1, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1, 0, 1, 1, 1, 0, 0, 0}}
	m := compileProbit(t, y)
	res, err := Run(context.Background(), m, Config{Iters: 40, Burn: 10, Chains: 1, Seed: 3, Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	a, ok := res.Acceptance["ghk(prec, u)"]
	if !ok || !(a >= 0 && a <= 1) {
		t.Fatalf("acceptance of ghk(prec, u): %v, %v (all: %v)", a, ok, res.Acceptance)
	}
	var b strings.Builder
	if err := res.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), fmt.Sprintf("ghk(prec, u) %.3f", a)) {
		t.Errorf("the table lacks ghk's acceptance:\n%s", b.String())
	}

	// The variances cannot be evaluated at the proposal (here: the
	// scratch they are written to has the wrong length).
	sched, err := NewSchedule(m)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := probitGHK(m, 0)
	ch := jointProbitState(t, m, sched, rand.New(rand.NewPCG(1, 2)))
	if _, ok, err := g.(*probitGHKStep).prepare(ch); !ok || err != nil {
		t.Fatalf("prepare: %v, %v", ok, err)
	}
	ch.probit.hmc.variances = ch.probit.hmc.variances[:d-1]
	_, err = g.(*probitGHKStep).at(ch, g.(*probitGHKStep).v.value(ch), 0.1)
	if err == nil || !strings.Contains(err.Error(), "ghk(prec, u)") {
		t.Errorf("at with unevaluable variances: %v", err)
	}
}
