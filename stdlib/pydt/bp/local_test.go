package bp

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// copyModel returns a new Model on tr (a tree with m's leaves) with m's
// evidence and variance.
func copyModel(t *testing.T, m *Model, tr *pydt.Tree) *Model {
	t.Helper()
	f := New(tr, m.Dims())
	if err := f.SetVariances(m.Variances()); err != nil {
		t.Fatal(err)
	}
	for i := range tr.NumLeaves() {
		for d := range m.Dims() {
			mean, prec := m.Evidence(pydt.NodeID(i), d)
			if err := f.SetEvidence(pydt.NodeID(i), d, mean, prec); err != nil {
				t.Fatal(err)
			}
		}
	}
	return f
}

// fresh returns the log likelihood of a new Model built on a copy of m's
// tree with m's evidence and variance, by a full pass.
func fresh(t *testing.T, m *Model) float64 {
	t.Helper()
	f := copyModel(t, m, m.Tree().Clone())
	if err := f.Recompute(); err != nil {
		t.Fatal(err)
	}
	return f.LogLik()
}

// randomTreeNode returns a uniformly chosen node below the root, other than
// the root.
func randomTreeNode(rng *rand.Rand, tr *pydt.Tree) pydt.NodeID {
	for {
		v := pydt.NodeID(rng.IntN(tr.Cap()))
		if v != tr.Root() && inTree(tr, v) {
			return v
		}
	}
}

func TestLocalUpdatesMatchFullPass(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, tc := range treeCases {
		for _, dc := range dimCases {
			D := dc.D
			t.Run(fmt.Sprintf("%s/%s", tc.name, dc), func(t *testing.T) {
				tr := tc.gen(rng, 30)
				m := New(tr, D)
				if err := m.SetVariance(1.3); err != nil {
					t.Fatal(err)
				}
				if dc.perDim {
					setVariances(t, m, spreadVariances(rng, D))
				}
				randomEvidence(t, rng, m, 0.3, 0.2)
				for step := range 300 {
					var what string
					switch op := rng.IntN(4); op {
					case 0, 1: // move a subtree
						v := randomTreeNode(rng, tr)
						m.Detach(v)
						if got, want := m.LogLik(), fresh(t, m); !relClose(got, want, 1e-12) {
							t.Fatalf("step %d: after Detach(%d) LogLik %.15g, full pass %.15g", step, v, got, want)
						}
						pos := randomPosition(rng, tr, v)
						guess := m.LogLikIfAttached(v, pos)
						m.Attach(v, pos)
						if got := m.LogLik(); !relClose(got, guess, 1e-12) {
							t.Fatalf("step %d: LogLikIfAttached %.15g, after Attach %.15g", step, guess, got)
						}
						what = fmt.Sprintf("move %d to %+v", v, pos)
					case 2: // move a branch point in time
						v := randomTreeNode(rng, tr)
						if tr.IsLeaf(v) {
							v = tr.Parent(v)
						}
						lo, hi := timeBounds(tr, v)
						m.SetTime(v, interp(lo, hi, 0.05+0.9*rng.Float64()))
						what = fmt.Sprintf("SetTime(%d)", v)
					case 3: // change one leaf's evidence
						leaf := pydt.NodeID(rng.IntN(tr.NumLeaves()))
						for d := range D {
							if err := m.SetEvidence(leaf, d, rng.NormFloat64(), []float64{0, 1, math.Inf(1)}[rng.IntN(3)]); err != nil {
								t.Fatal(err)
							}
						}
						what = fmt.Sprintf("evidence of %d", leaf)
					}
					if err := tr.Validate(); err != nil {
						t.Fatalf("step %d (%s): %v", step, what, err)
					}
					if got, want := m.LogLik(), fresh(t, m); !relClose(got, want, 1e-12) {
						t.Fatalf("step %d (%s): LogLik %.15g, full pass %.15g", step, what, got, want)
					}
				}
				if got, want := m.LogLik(), denseLogLik(t, m); !relClose(got, want, 1e-9) {
					t.Errorf("after the moves LogLik %.15g, dense %.15g", got, want)
				}
			})
		}
	}
}

// TestRejectRestores checks the sampler's undo: detach, attach elsewhere,
// detach again and attach at the returned old position.
func TestRejectRestores(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	tr := genPYDT(rng, 40, 1, 0.5, 0.3)
	m := New(tr, 3)
	randomEvidence(t, rng, m, 0.2, 0.2)
	for step := range 200 {
		before := m.LogLik()
		v := randomTreeNode(rng, tr)
		old := m.Detach(v)
		pos := randomPosition(rng, tr, v)
		m.Attach(v, pos)
		m.Detach(v)
		m.Attach(v, old)
		if err := tr.Validate(); err != nil {
			t.Fatal(err)
		}
		if got := m.LogLik(); !relClose(got, before, 1e-12) {
			t.Fatalf("step %d: LogLik %.15g after undo, %.15g before", step, got, before)
		}
	}
}

// attachPoints returns the attachment points at u for a detached subtree
// whose root has time tv: u itself if it is a branch point before tv, and
// the point at the fraction frac() of the edge above u, cut at tv, if
// any of it is left (frac is called only then).
func attachPoints(tr *pydt.Tree, u pydt.NodeID, tv pydt.Time, frac func() float64) []pydt.Position {
	var cands []pydt.Position
	if !tr.IsLeaf(u) && tr.Time(u).Before(tv) {
		cands = append(cands, pydt.Position{Node: u, AtNode: true})
	}
	lo, hi := tr.ParentTime(u), tr.Time(u)
	if tv.Before(hi) {
		hi = tv
	}
	if lo.Before(hi) {
		cands = append(cands, pydt.Position{Node: u, Time: interp(lo, hi, frac())})
	}
	return cands
}

// TestLogLikIfAttachedEverywhere scores every edge and branch point of a
// tree for a detached subtree and compares with attaching there.
func TestLogLikIfAttachedEverywhere(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	tr := genPYDT(rng, 30, 1.5, 1, 0.4)
	m := New(tr, 2)
	randomEvidence(t, rng, m, 0.3, 0.3)
	for range 10 {
		v := randomTreeNode(rng, tr)
		old := m.Detach(v)
		tv := tr.Time(v)
		for _, u := range tr.PreOrder(nil) {
			for _, pos := range attachPoints(tr, u, tv, func() float64 { return 0.5 }) {
				guess := m.LogLikIfAttached(v, pos)
				m.Attach(v, pos)
				if got := m.LogLik(); !relClose(got, guess, 1e-12) {
					t.Fatalf("at %+v: LogLikIfAttached %.15g, after Attach %.15g", pos, guess, got)
				}
				m.Detach(v)
			}
		}
		m.Attach(v, old)
	}
}

func TestZeroLengthEdge(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	tr := genPYDT(rng, 10, 1, 0, 0)
	m := New(tr, 2)
	randomEvidence(t, rng, m, 0, 0)
	if err := m.Recompute(); err != nil {
		t.Fatal(err)
	}
	good := m.LogLik()
	// Put a branch point at its parent's time.
	var v pydt.NodeID = pydt.NoNode
	for _, u := range tr.PreOrder(nil) {
		if !tr.IsLeaf(u) && u != tr.Root() {
			v = u
			break
		}
	}
	if v == pydt.NoNode {
		t.Skip("no non-root branch point")
	}
	old := tr.Time(v)
	m.SetTime(v, tr.ParentTime(v))
	if ll := m.LogLik(); !math.IsInf(ll, -1) {
		t.Errorf("LogLik with a zero-length edge = %v, want -Inf", ll)
	}
	err := m.Recompute()
	if !errors.Is(err, ErrZeroEdge) {
		t.Errorf("Recompute error %v, want ErrZeroEdge", err)
	} else if want := fmt.Sprintf("branch point %d", v); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name %q", err, want)
	}
	x := make([]float64, tr.Cap()*2)
	if err := m.SampleLocations(rng, x); !errors.Is(err, ErrZeroEdge) {
		t.Errorf("SampleLocations error %v, want ErrZeroEdge", err)
	}
	m.SetTime(v, old)
	if ll := m.LogLik(); !relClose(ll, good, 1e-12) {
		t.Errorf("LogLik after restoring the time %v, want %v", ll, good)
	}
	if err := m.Err(); err != nil {
		t.Errorf("Err after restoring: %v", err)
	}
}

func TestBadInput(t *testing.T) {
	tr := genPYDT(rand.New(rand.NewPCG(1, 0)), 4, 1, 0, 0)
	m := New(tr, 2)
	for _, c := range []struct {
		name string
		err  error
	}{
		{"negative precision", m.SetEvidence(0, 0, 1, -1)},
		{"NaN precision", m.SetEvidence(0, 0, 1, math.NaN())},
		{"infinite mean", m.SetEvidence(0, 0, math.Inf(1), 1)},
		{"not a leaf", m.SetEvidence(5, 0, 1, 1)},
		{"bad dimension", m.SetEvidence(0, 2, 1, 1)},
		{"infinite observation", m.Observe(0, 0, math.Inf(-1))},
		{"matrix size", m.ObserveMatrix(make([]float64, 7))},
		{"zero variance", m.SetVariance(0)},
		{"variances length", m.SetVariances([]float64{1})},
		{"zero variance of a dimension", m.SetVariances([]float64{1, 0})},
		{"NaN variance of a dimension", m.SetVariances([]float64{math.NaN(), 1})},
		{"infinite variance of a dimension", m.SetVariances([]float64{1, math.Inf(1)})},
		{"suffstats lengths", m.SuffStatsDims(make([]float64, tr.Cap()*2), make([]float64, 1), make([]int, 2))},
		{"marginals size", m.Marginals(make([]float64, 3), make([]float64, 3))},
	} {
		if c.err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	if got := m.Variances(); got[0] != 1 || got[1] != 1 {
		t.Errorf("variances %v after refused changes, want [1 1]", got)
	}
}

// TestVariancesAPI checks how the shared and per-dimension variances relate:
// Variance reports the shared value or NaN, SetVariance sets every
// dimension, and equal per-dimension variances give bit for bit the
// likelihood of the shared one.
func TestVariancesAPI(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 7))
	tr := genPYDT(rng, 20, 1, 0.5, 0.3)
	m := New(tr, 3)
	randomEvidence(t, rng, m, 0.2, 0.3)
	if err := m.SetVariance(0.6); err != nil {
		t.Fatal(err)
	}
	shared := m.LogLik()
	setVariances(t, m, []float64{0.6, 0.6, 0.6})
	if got := m.LogLik(); got != shared {
		t.Errorf("equal per-dimension variances: LogLik %.17g, shared variance %.17g", got, shared)
	}
	if got := m.Variance(); got != 0.6 {
		t.Errorf("Variance = %v with equal variances 0.6", got)
	}
	setVariances(t, m, []float64{0.6, 2, 0.6})
	if got := m.Variance(); !math.IsNaN(got) {
		t.Errorf("Variance = %v with unequal variances, want NaN", got)
	}
	if got := m.LogLik(); got == shared {
		t.Error("LogLik unchanged after changing one dimension's variance")
	}
	if err := m.SetVariance(0.6); err != nil {
		t.Fatal(err)
	}
	if got := m.LogLik(); got != shared || m.Variance() != 0.6 {
		t.Errorf("after SetVariance(0.6): LogLik %.17g (want %.17g), Variance %v", got, shared, m.Variance())
	}
}

// TestBeyondFloat64 checks BP on a tree whose branch points lie beyond the
// float64 range of 1-t (s = -log(1-t) > 745), where the lengths of the
// edges below them underflow to 0. With noisy evidence the likelihood is
// finite and equals the one of the tree with those edges at length 0 in
// closed form: the leaves below a branch point at s > 745 share its
// location. Exactly observed distinct values there have zero density
// (-Inf, a valid answer, not an error); exactly observed equal values have
// an infinite one, which Err reports (ErrNoDensity). Nothing is NaN.
func TestBeyondFloat64(t *testing.T) {
	// ((1,2)@s=900, 3)@t=0.5: leaves 1 and 2 meet 1e-391 before t = 1.
	tr := pydt.New(3)
	tr.Plant(0)
	tr.Attach(2, pydt.Position{Node: 0, Time: pydt.TimeAt(0.5)})
	tr.Attach(1, pydt.Position{Node: 0, Time: pydt.TimeFromS(900)})
	if err := tr.Validate(); err != nil {
		t.Fatal(err)
	}
	m := New(tr, 1)
	const s2, noise = 1.3, 0.2 // diffusion variance, evidence variance
	if err := m.SetVariance(s2); err != nil {
		t.Fatal(err)
	}
	y := []float64{0.3, -0.4, 1.1}
	for i, v := range y {
		if err := m.SetEvidence(pydt.NodeID(i), 0, v, 1/noise); err != nil {
			t.Fatal(err)
		}
	}
	// Closed form: x_r ~ N(0, s2/2) at t = 1/2; x_w = x_1 = x_2 (shared
	// location, variance s2/2 from x_r: the edge r→w has length 1/2 to
	// rounding); x_3 ~ N(x_r, s2/2). The data y_i = x_i + N(0, noise).
	// (y1, y2, y3) is Gaussian with mean 0 and covariance
	// C_ij = s2/2 + [i = j, or both below w] s2/2 + [i = j] noise.
	c := [3][3]float64{}
	for i := range 3 {
		for j := range 3 {
			c[i][j] = s2 / 2
			if i == j || (i < 2 && j < 2) {
				c[i][j] += s2 / 2
			}
			if i == j {
				c[i][j] += noise
			}
		}
	}
	want := gauss3LogPDF(y, c)
	if got := m.LogLik(); math.IsNaN(got) || !(math.Abs(got-want) <= 1e-12) {
		t.Errorf("noisy evidence: LogLik %v, closed form %v", got, want)
	}
	if err := m.Err(); err != nil {
		t.Errorf("noisy evidence: Err %v", err)
	}
	// Exact observations of distinct values: zero density, no error.
	if err := m.ObserveMatrix(y); err != nil {
		t.Fatal(err)
	}
	if err := m.Recompute(); err != nil {
		t.Errorf("distinct exact values: Recompute %v", err)
	}
	if got := m.LogLik(); !math.IsInf(got, -1) {
		t.Errorf("distinct exact values: LogLik %v, want -Inf", got)
	}
	// Equal exact values: infinite density, reported.
	if err := m.ObserveMatrix([]float64{0.3, 0.3, 1.1}); err != nil {
		t.Fatal(err)
	}
	err := m.Recompute()
	if got := m.LogLik(); !math.IsInf(got, 1) {
		t.Errorf("equal exact values: LogLik %v, want +Inf", got)
	}
	if !errors.Is(err, ErrNoDensity) || !errors.Is(m.Err(), ErrNoDensity) {
		t.Errorf("equal exact values: Recompute %v, Err %v; want ErrNoDensity", err, m.Err())
	}
	x := make([]float64, tr.Cap())
	if err := m.SampleLocations(rand.New(rand.NewPCG(1, 1)), x); !errors.Is(err, ErrNoDensity) {
		t.Errorf("equal exact values: SampleLocations %v, want ErrNoDensity", err)
	}
	// Noisy evidence on one of the pair: finite again, and the sampled
	// locations are finite and give finite sufficient statistics.
	if err := m.SetEvidence(1, 0, 0.3, 1/noise); err != nil {
		t.Fatal(err)
	}
	if got := m.LogLik(); math.IsInf(got, 0) || math.IsNaN(got) {
		t.Errorf("one noisy value: LogLik %v", got)
	}
	if err := m.SampleLocations(rand.New(rand.NewPCG(1, 1)), x); err != nil {
		t.Fatal(err)
	}
	ss, n, err := m.SuffStats(x)
	if err != nil || math.IsNaN(ss) || math.IsInf(ss, 0) || n != 3 {
		t.Errorf("SuffStats = %v, %v, %v; want finite over the 3 edges of positive length", ss, n, err)
	}
	mean, vr := make([]float64, tr.Cap()), make([]float64, tr.Cap())
	if err := m.Marginals(mean, vr); err != nil {
		t.Fatal(err)
	}
	for _, v := range tr.PreOrder(nil) {
		if math.IsNaN(mean[v]) || math.IsNaN(vr[v]) {
			t.Errorf("Marginals of node %d: %v, %v", v, mean[v], vr[v])
		}
	}
}

// gauss3LogPDF returns the log density of N(0, c) at y, for a 3×3 c.
func gauss3LogPDF(y []float64, c [3][3]float64) float64 {
	det := c[0][0]*(c[1][1]*c[2][2]-c[1][2]*c[2][1]) - c[0][1]*(c[1][0]*c[2][2]-c[1][2]*c[2][0]) + c[0][2]*(c[1][0]*c[2][1]-c[1][1]*c[2][0])
	var inv [3][3]float64
	for i := range 3 {
		for j := range 3 {
			a, b := (j+1)%3, (j+2)%3
			p, q := (i+1)%3, (i+2)%3
			inv[i][j] = (c[a][p]*c[b][q] - c[a][q]*c[b][p]) / det
		}
	}
	quad := 0.0
	for i := range 3 {
		for j := range 3 {
			quad += y[i] * inv[i][j] * y[j]
		}
	}
	return -0.5 * (3*math.Log(2*math.Pi) + math.Log(det) + quad)
}
