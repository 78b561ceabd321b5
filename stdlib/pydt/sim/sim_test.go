package sim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pydtlang/pydtlang/internal/densetest"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"gonum.org/v1/gonum/stat/distuv"
)

// cumulativeByHand is A(t) = ∫₀ᵗ a(u) du written out for each divergence
// function, independently of the Divergence implementations:
//
//	c/(1-t):                     A = -c log(1-t)
//	c/(1-t)²:                    A = c t/(1-t)
//	c0 + c1/(1-t) + c2/(1-t)²:   A = c0 t - c1 log(1-t) + c2 t/(1-t)
func cumulativeByHand(t *testing.T, div pydt.Divergence, x pydt.Time) float64 {
	t.Helper()
	u, logU := x.OneMinus(), x.LogOneMinus()
	switch d := div.(type) {
	case pydt.DivInv:
		return -d.C * logU
	case pydt.DivInvSq:
		return d.C * x.T() / u
	case pydt.DivNeal:
		return d.C0*x.T() - d.C1*logU + d.C2*x.T()/u
	}
	t.Fatalf("no hand-written A(t) for %T", div)
	return 0
}

// ksUniform returns the Kolmogorov-Smirnov statistic of u against U(0, 1).
func ksUniform(u []float64) float64 {
	s := slices.Clone(u)
	slices.Sort(s)
	n := float64(len(s))
	var d float64
	for i, v := range s {
		d = math.Max(d, math.Max(float64(i+1)/n-v, v-float64(i)/n))
	}
	return d
}

// ksCritical is the Kolmogorov-Smirnov critical value for n draws at a
// false-alarm rate of about 7e-4 (P(√n D > 2) ≈ 2 exp(-8)), which plays the
// role of a 4-standard-error tolerance.
func ksCritical(n int) float64 { return 2 / math.Sqrt(float64(n)) }

// (alpha, beta) pairs of the reference tests.
var (
	twoPointCases   = [][2]float64{{0, 0}, {1, 0.3}, {-0.4, 0.2}, {3, 0.7}}
	threePointCases = [][2]float64{
		{0, 0},      // Neal's DDT: binary, each 1/3
		{-1, 0.5},   // alpha = -2 beta: binary
		{-0.2, 0.1}, // alpha = -2 beta: binary
		{0, 0.5},
		{1, 0.3},
		{2, 0},
		{5, 0.9},
	}
	exchangeableCases = [][2]float64{{0, 0}, {10, 0.5}, {-1.8, 0.9}}
)

var divergences = []pydt.Divergence{
	pydt.DivInv{C: 1},
	pydt.DivInv{C: 0.3},
	pydt.DivInvSq{C: 0.5},
	pydt.DivNeal{C0: 0.2, C1: 0.5, C2: 0.3},
}

func mustValidate(t *testing.T, tr *pydt.Tree) {
	t.Helper()
	if err := tr.Validate(); err != nil {
		t.Fatalf("drawn tree is invalid: %v\n%s", err, tr.Newick())
	}
}

// TestTwoPointDivergenceTime checks the law of the divergence time T of
// point 2 from point 1.
//
// Derivation: point 2 follows point 1's path, traversed by m = 1 earlier
// point, with hazard a(t) h1, h1 = Γ(1-β)/Γ(2+α). The survival function of
// a time with hazard λ(t) is exp(-∫₀ᵗ λ), so
//
//	P(T <= t) = 1 - exp(-A(t) Γ(1-β)/Γ(2+α)).
//
// Since A(1) = ∞, T < 1 surely. By the probability integral transform,
// U = 1 - exp(-A(T) h1) is U(0, 1), tested by Kolmogorov-Smirnov with A
// and h1 computed here by hand.
func TestTwoPointDivergenceTime(t *testing.T) {
	const R = 4000
	for _, ab := range twoPointCases {
		for _, div := range divergences {
			alpha, beta := ab[0], ab[1]
			t.Run(fmt.Sprintf("alpha=%v,beta=%v,a=%v", alpha, beta, div), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(1000*alpha+7), uint64(100*beta+3)))
				p := Params{Alpha: alpha, Beta: beta, Div: div}
				h1 := math.Gamma(1-beta) / math.Gamma(2+alpha)
				u := make([]float64, R)
				for r := range u {
					tr, err := DrawTree(rng, 2, p)
					if err != nil {
						t.Fatal(err)
					}
					mustValidate(t, tr)
					u[r] = -math.Expm1(-cumulativeByHand(t, div, tr.Time(tr.Root())) * h1)
				}
				if d := ksUniform(u); !(d <= ksCritical(R)) {
					t.Errorf("KS statistic %.4f > %.4f: divergence times do not follow 1 - exp(-A(t) h1)", d, ksCritical(R))
				}
			})
		}
	}
}

// topology names the tree over leaves 0, 1, 2 (points 1, 2, 3).
func topology(t *testing.T, tr *pydt.Tree) string {
	t.Helper()
	r := tr.Root()
	if tr.Degree(r) == 3 {
		return "(1,2,3)"
	}
	for c := range tr.Children(r) {
		if tr.IsLeaf(c) {
			switch c {
			case 2:
				return "((1,2),3)"
			case 1:
				return "((1,3),2)"
			case 0:
				return "((2,3),1)"
			}
		}
	}
	t.Fatalf("unexpected tree %s", tr.Newick())
	return ""
}

// threePointLaw gives the topology probabilities for N = 3.
//
// Derivation: point 2 diverges from point 1 at T with A(T) = E/h1, E ~
// Exp(1), h_m = Γ(m-β)/Γ(m+1+α). Point 3 follows the segment [0, T],
// traversed by m = 2 points, and diverges on it with probability
// 1 - exp(-A(T) h2) = 1 - exp(-E h2/h1), giving ((1,2),3). Averaging over E,
// E[exp(-E h2/h1)] = 1/(1 + h2/h1), and h2/h1 = (1-β)/(2+α), so
//
//	P(reach the branch point) = (2+α)/(3+α-β),
//	P(((1,2),3))              = (1-β)/(3+α-β).
//
// At the branch point (m = 2, K = 2, n_1 = n_2 = 1) point 3 follows the
// branch to point 1 with probability (1-β)/(2+α), then surely diverges
// before t = 1 (A(1) = ∞), giving ((1,3),2); likewise ((2,3),1); or it
// starts a third branch with probability (α+2β)/(2+α). Hence
//
//	P(((1,3),2)) = P(((2,3),1)) = (1-β)/(3+α-β),  P((1,2,3)) = (α+2β)/(3+α-β).
//
// None depends on a(t); the three binary trees are equally likely
// (exchangeability), and the three-way split has probability zero when
// α = -2β (e.g. α = β = 0).
func threePointLaw(alpha, beta float64) map[string]float64 {
	z := 3 + alpha - beta
	return map[string]float64{
		"((1,2),3)": (1 - beta) / z,
		"((1,3),2)": (1 - beta) / z,
		"((2,3),1)": (1 - beta) / z,
		"(1,2,3)":   (alpha + 2*beta) / z,
	}
}

func TestThreePointTopology(t *testing.T) {
	const R = 20000
	for k, ab := range threePointCases {
		div := divergences[k%len(divergences)]
		alpha, beta := ab[0], ab[1]
		t.Run(fmt.Sprintf("alpha=%v,beta=%v,a=%v", alpha, beta, div), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(k)+11, 99))
			p := Params{Alpha: alpha, Beta: beta, Div: div}
			counts := map[string]int{}
			for range R {
				tr, err := DrawTree(rng, 3, p)
				if err != nil {
					t.Fatal(err)
				}
				mustValidate(t, tr)
				counts[topology(t, tr)]++
			}
			for topo, pr := range threePointLaw(alpha, beta) {
				got := float64(counts[topo]) / R
				se := math.Sqrt(pr * (1 - pr) / R)
				if pr == 0 {
					if counts[topo] != 0 {
						t.Errorf("%s drawn %d times, probability 0", topo, counts[topo])
					}
					continue
				}
				if !(math.Abs(got-pr) <= 4*se) {
					t.Errorf("P(%s) = %.4f, want %.4f ± %.4f (4 s.e.)", topo, got, pr, 4*se)
				}
			}
		})
	}
}

// TestThreePointExchangeable checks that the three binary trees, produced
// by different mechanisms (divergence on a segment versus the choice of a
// branch), are equally likely, without using their probability: for counts
// n_a, n_b of two outcomes of a multinomial with equal probabilities,
// E[n_a - n_b] = 0 and Var(n_a - n_b) = R(p_a + p_b) ≈ n_a + n_b.
func TestThreePointExchangeable(t *testing.T) {
	const R = 20000
	for k, ab := range exchangeableCases {
		rng := rand.New(rand.NewPCG(uint64(k), 5))
		p := Params{Alpha: ab[0], Beta: ab[1], Div: pydt.DivInvSq{C: 2}}
		counts := map[string]int{}
		for range R {
			tr, err := DrawTree(rng, 3, p)
			if err != nil {
				t.Fatal(err)
			}
			counts[topology(t, tr)]++
		}
		names := []string{"((1,2),3)", "((1,3),2)", "((2,3),1)"}
		for i := range names {
			for j := i + 1; j < len(names); j++ {
				a, b := counts[names[i]], counts[names[j]]
				if d := math.Abs(float64(a - b)); !(d <= 4*math.Sqrt(float64(a+b))) {
					t.Errorf("alpha=%v beta=%v: %s drawn %d times, %s %d times", ab[0], ab[1], names[i], a, names[j], b)
				}
			}
		}
	}
}

// TestTwoPointCovariance checks the leaf locations for N = 2.
//
// Derivation: both points share the Brownian path up to T, then move
// independently, so given T each coordinate d has Var x_i = σ²_d and
// Cov(x_1, x_2) = σ²_d T; unconditionally Cov = σ²_d E[T]. With a(t) =
// c/(1-t), A(T) = -c log(1-T) = E/h1 with E ~ Exp(1), so 1-T =
// exp(-E/(c h1)) and E[1-T] = E[exp(-λE)] = 1/(1+λ) with λ = 1/(c h1),
// giving
//
//	E[T] = 1/(1 + c h1),  h1 = Γ(1-β)/Γ(2+α).
//
// The law is checked per dimension, with one variance shared by all and
// with unequal variances per dimension (Params.Variances).
func TestTwoPointCovariance(t *testing.T) {
	const R, D = 20000, 3
	for k, tc := range []struct {
		alpha, beta, c float64
		sigma2         []float64 // per dimension; one value: Params.Variance
	}{
		{0, 0, 1, []float64{1}},
		{1, 0.3, 0.4, []float64{2.5}},
		{-0.5, 0.25, 3, []float64{0.7}},
		{1, 0.3, 0.4, []float64{0.05, 1, 20}},
		{0, 0, 2, []float64{3, 0.2, 0.2}},
	} {
		rng := rand.New(rand.NewPCG(uint64(k), 77))
		p := Params{Alpha: tc.alpha, Beta: tc.beta, Div: pydt.DivInv{C: tc.c}, Dims: D}
		if len(tc.sigma2) == 1 {
			p.Variance = tc.sigma2[0]
		} else {
			p.Variances = tc.sigma2
		}
		s2 := p.DimVariances()
		h1 := math.Gamma(1-tc.beta) / math.Gamma(2+tc.alpha)
		var cov, cov2, v, v2 [D]float64
		for range R {
			tr, x, err := Draw(rng, 2, p)
			if err != nil {
				t.Fatal(err)
			}
			mustValidate(t, tr)
			for d := range D {
				c := x[d] * x[D+d]
				s := (x[d]*x[d] + x[D+d]*x[D+d]) / 2
				cov[d] += c
				cov2[d] += c * c
				v[d] += s
				v2[d] += s * s
			}
		}
		for d := range D {
			wantCov := s2[d] / (1 + tc.c*h1)
			cv, vv := cov[d]/R, v[d]/R
			seCov := math.Sqrt((cov2[d]/R - cv*cv) / R)
			seV := math.Sqrt((v2[d]/R - vv*vv) / R)
			if !(math.Abs(cv-wantCov) <= 4*seCov) {
				t.Errorf("case %d, dimension %d: Cov(x1, x2) = %.4f, want σ²_d E[T] = %.4f ± %.4f", k, d, cv, wantCov, 4*seCov)
			}
			if !(math.Abs(vv-s2[d]) <= 4*seV) {
				t.Errorf("case %d, dimension %d: Var x = %.4f, want σ²_d = %.4f ± %.4f", k, d, vv, s2[d], 4*seV)
			}
		}
	}
}

// TestLocationsAreBrownianOnTheTree checks the joint law of all node
// locations given the tree. Given the tree, the locations are Brownian motion
// along its edges started at 0 at t = 0: the increments over the edges,
// z = (x_v - x_parent) / sqrt(σ² (t_v - t_parent)), are independent N(0, 1)
// (the origin counting as the root's parent), whatever order the process
// created the nodes in. Consequently Cov(x_u, x_v) = σ² t(lca(u, v)) for any
// two nodes, C_ij = t(lca(i, j)) between leaves and C_ii = 1. The test checks
// (a) the increments: mean 0, mean square 1, Kolmogorov-Smirnov against
// N(0, 1), and zero correlation between an edge and the edge above it (a
// wrong bridge mean would correlate them); (b) E[x_u x_v - σ² t(lca)] = 0
// over all pairs of nodes, leaves and branch points (divided by σ², so that
// dimensions with per-dimension variances σ²_d weigh alike).
func TestLocationsAreBrownianOnTheTree(t *testing.T) {
	const R, N, D, sigma2 = 1500, 6, 2, 1.7
	rng := rand.New(rand.NewPCG(42, 43))
	for k, p := range []Params{
		{Alpha: 1, Beta: 0.4, Div: pydt.DivInv{C: 1}, Variance: sigma2, Dims: D},
		{Alpha: 0, Beta: 0, Div: pydt.DivInvSq{C: 0.5}, Variance: sigma2, Dims: D},
		{Alpha: 3, Beta: 0.8, Div: pydt.DivNeal{C0: 1, C1: 0.2, C2: 0.1}, Variance: sigma2, Dims: D},
		// Per-dimension variances: σ² in the statements above is σ²_d.
		{Alpha: 1, Beta: 0.4, Div: pydt.DivInv{C: 1}, Variances: []float64{0.04, 9}, Dims: D},
		{Alpha: 3, Beta: 0.8, Div: pydt.DivNeal{C0: 1, C1: 0.2, C2: 0.1}, Variances: []float64{25, 0.3}, Dims: D},
	} {
		s2 := p.DimVariances()
		var zs []float64
		var zz, zzN float64 // sum of z_v z_parent(v), count
		var zzSq float64
		var pair, pairSq float64 // per-draw means of x_u x_v - σ² t(lca)
		for range R {
			tr, x, err := Draw(rng, N, p)
			if err != nil {
				t.Fatal(err)
			}
			mustValidate(t, tr)
			nodes := tr.PreOrder(nil)
			z := make([]float64, tr.Cap()*D)
			for _, v := range nodes {
				par := tr.Parent(v)
				for d := range D {
					sd := math.Sqrt(s2[d] * tr.BranchLength(v))
					xp := 0.0
					if par != pydt.NoNode {
						xp = x[int(par)*D+d]
					}
					z[int(v)*D+d] = (x[int(v)*D+d] - xp) / sd
					zs = append(zs, z[int(v)*D+d])
					if par != pydt.NoNode {
						q := z[int(v)*D+d] * z[int(par)*D+d]
						zz += q
						zzSq += q * q
						zzN++
					}
				}
			}
			var q, qn float64
			for a, u := range nodes {
				for _, v := range nodes[a:] {
					tl := densetest.LCATime(tr, u, v).T()
					for d := range D {
						q += (x[int(u)*D+d]*x[int(v)*D+d] - s2[d]*tl) / s2[d]
						qn++
					}
				}
			}
			pair += q / qn
			pairSq += (q / qn) * (q / qn)
		}
		n := float64(len(zs))
		var m, m2 float64
		for _, v := range zs {
			m += v
			m2 += v * v
		}
		m, m2 = m/n, m2/n
		if se := math.Sqrt(1 / n); !(math.Abs(m) <= 4*se) {
			t.Errorf("params %d: mean increment %.4f, want 0 ± %.4f", k, m, 4*se)
		}
		if se := math.Sqrt(2 / n); !(math.Abs(m2-1) <= 4*se) {
			t.Errorf("params %d: mean squared increment %.4f, want 1 ± %.4f", k, m2, 4*se)
		}
		u := make([]float64, len(zs))
		for i, v := range zs {
			u[i] = distuv.UnitNormal.CDF(v)
		}
		if d := ksUniform(u); !(d <= ksCritical(len(u))) {
			t.Errorf("params %d: KS statistic of increments %.4f > %.4f", k, d, ksCritical(len(u)))
		}
		if mean, se := zz/zzN, math.Sqrt((zzSq/zzN)/zzN); !(math.Abs(mean) <= 4*se) {
			t.Errorf("params %d: E[z_v z_parent] = %.4f, want 0 ± %.4f", k, mean, 4*se)
		}
		// Pairs within a draw are dependent: draws are the independent units.
		mean := pair / R
		se := math.Sqrt((pairSq/R - mean*mean) / R)
		if !(math.Abs(mean) <= 4*se) {
			t.Errorf("params %d: E[x_u x_v - σ² t(lca)] = %.4f, want 0 ± %.4f", k, mean, 4*se)
		}
	}
}

// TestLargeTreesValidate draws larger trees over a range of parameters,
// including the corners alpha = -2 beta and beta near 1.
func TestLargeTreesValidate(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for _, p := range []Params{
		{Alpha: 0, Beta: 0, Div: pydt.DivInv{C: 1}, Variance: 1, Dims: 2},
		{Alpha: -1.8, Beta: 0.9, Div: pydt.DivInvSq{C: 1}, Variance: 1, Dims: 1},
		{Alpha: 0.5, Beta: 0.99, Div: pydt.DivNeal{C0: 0, C1: 1, C2: 0}, Variance: 1, Dims: 3},
		{Alpha: 20, Beta: 0.2, Div: pydt.DivInv{C: 2}, Variance: 1, Dims: 1},
	} {
		for _, n := range []int{1, 2, 50, 300} {
			tr, x, err := Draw(rng, n, p)
			if err != nil {
				t.Fatal(err)
			}
			mustValidate(t, tr)
			if tr.Count(tr.Root()) != n {
				t.Fatalf("root counts %d leaves, want %d", tr.Count(tr.Root()), n)
			}
			if len(x) != tr.Cap()*p.Dims {
				t.Fatalf("%d locations, want %d", len(x), tr.Cap()*p.Dims)
			}
			for _, v := range x {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("non-finite location %v", v)
				}
			}
			if p.Alpha == -2*p.Beta {
				for _, v := range tr.PreOrder(nil) {
					if !tr.IsLeaf(v) && tr.Degree(v) != 2 {
						t.Fatalf("alpha = -2 beta gave a node of degree %d", tr.Degree(v))
					}
				}
			}
		}
	}
}

// TestTimesNearOne draws with a(t) = c/(1-t) and small c, or large alpha,
// where a sizeable fraction of divergence times have 1-t below 1e-16 (for
// N = 2, α = β = 0, c = 0.05: 1-T = exp(-E/c), so P(1-T < 1e-16) =
// exp(-36.8 c) ≈ 0.16), and some beyond the float64 range of 1-t. Such
// trees must still validate, with every branch point before t = 1 (finite
// s), and finite locations; none needs clamping.
func TestTimesNearOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		p Params
		n int
	}{
		{Params{Alpha: 0, Beta: 0, Div: pydt.DivInv{C: 0.05}, Variance: 1, Dims: 1}, 30},
		{Params{Alpha: 0.5, Beta: 0.5, Div: pydt.DivInv{C: 0.05}, Variance: 1, Dims: 1}, 30},
		{Params{Alpha: 8, Beta: 0, Div: pydt.DivInv{C: 1}, Variance: 1, Dims: 1}, 30},
		{Params{Alpha: 60, Beta: 0.1, Div: pydt.DivInv{C: 1}, Variance: 1, Dims: 1}, 10}, // 1-t beyond float64
		{Params{Alpha: 0.5, Beta: 0.2, Div: pydt.DivInv{C: 1e-4}, Variance: 1, Dims: 2}, 10},
		{Params{Alpha: 0, Beta: 0, Div: pydt.DivNeal{C0: 0, C1: 0.02, C2: 0}, Variance: 1, Dims: 1}, 20},
	} {
		if err := tc.p.Check(); err != nil {
			t.Fatal(err)
		}
		tiny, total, clamped := 0, 0, 0
		for range 300 {
			d := drawer{rng: rng, p: tc.p, locs: true}
			tr, x := d.run(tc.n), d.x
			clamped += d.clamped
			mustValidate(t, tr)
			for _, v := range tr.PreOrder(nil) {
				if tr.IsLeaf(v) {
					continue
				}
				total++
				if tv := tr.Time(v); tv.IsLeaf() || !tv.Valid() {
					t.Fatalf("branch point at %v", tv)
				}
				if tr.Time(v).OneMinus() < 1e-16 {
					tiny++
				}
			}
			for _, v := range x {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("non-finite location %v", v)
				}
			}
		}
		if tiny == 0 {
			t.Errorf("%+v: no branch point with 1-t < 1e-16 among %d; the test does not exercise the regime", tc.p, total)
		}
		if clamped != 0 {
			t.Errorf("%+v: %d divergences clamped", tc.p, clamped)
		}
		t.Logf("alpha=%v beta=%v a=%v: %d of %d branch points have 1-t < 1e-16, %d not representable (clamped)",
			tc.p.Alpha, tc.p.Beta, tc.p.Div, tiny, total, clamped)
	}
}

// TestNoClampingInOrdinaryRegimes checks that the parameters used by the
// reference tests above never need a divergence time beyond float64 (see
// placeOnLeafSegment), so that those tests exercise the exact process.
func TestNoClampingInOrdinaryRegimes(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	type combo struct {
		n int
		p Params
	}
	var combos []combo
	for _, ab := range twoPointCases {
		for _, div := range divergences {
			combos = append(combos, combo{2, Params{Alpha: ab[0], Beta: ab[1], Div: div}})
		}
	}
	for k, ab := range threePointCases {
		combos = append(combos, combo{3, Params{Alpha: ab[0], Beta: ab[1], Div: divergences[k%len(divergences)]}})
	}
	for _, ab := range exchangeableCases {
		combos = append(combos, combo{3, Params{Alpha: ab[0], Beta: ab[1], Div: pydt.DivInvSq{C: 2}}})
	}
	for _, c := range combos {
		for range 2000 {
			d := drawer{rng: rng, p: c.p}
			d.run(c.n)
			if d.clamped != 0 {
				t.Fatalf("alpha=%v beta=%v a=%v: %d divergences beyond float64 for N = %d", c.p.Alpha, c.p.Beta, c.p.Div, d.clamped, c.n)
			}
		}
	}
}

func TestParamsErrors(t *testing.T) {
	ok := Params{Alpha: 1, Beta: 0.5, Div: pydt.DivInv{C: 1}, Variance: 1, Dims: 2}
	for _, tc := range []struct {
		name string
		edit func(*Params)
		n    int
	}{
		{"beta negative", func(p *Params) { p.Beta = -0.1 }, 3},
		{"beta one", func(p *Params) { p.Beta = 1 }, 3},
		{"beta NaN", func(p *Params) { p.Beta = math.NaN() }, 3},
		{"alpha below -2 beta", func(p *Params) { p.Alpha = -1.01 }, 3},
		{"alpha NaN", func(p *Params) { p.Alpha = math.NaN() }, 3},
		{"alpha Inf", func(p *Params) { p.Alpha = math.Inf(1) }, 3},
		{"no divergence", func(p *Params) { p.Div = nil }, 3},
		{"bad divergence", func(p *Params) { p.Div = pydt.DivInv{C: 0} }, 3},
		{"bad neal", func(p *Params) { p.Div = pydt.DivNeal{C0: 1} }, 3},
		{"zero variance", func(p *Params) { p.Variance = 0 }, 3},
		{"NaN variance", func(p *Params) { p.Variance = math.NaN() }, 3},
		{"variances length", func(p *Params) { p.Variances = []float64{1} }, 3},
		{"zero variance of a dimension", func(p *Params) { p.Variances = []float64{1, 0} }, 3},
		{"infinite variance of a dimension", func(p *Params) { p.Variances = []float64{math.Inf(1), 1} }, 3},
		{"zero dims", func(p *Params) { p.Dims = 0 }, 3},
		{"n zero", func(p *Params) {}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := ok
			tc.edit(&p)
			rng := rand.New(rand.NewPCG(1, 1))
			if _, _, err := Draw(rng, tc.n, p); !errors.Is(err, ErrParams) {
				t.Errorf("Draw: error %v, want ErrParams", err)
			}
		})
	}
	// DrawTree ignores Variance and Dims.
	p := ok
	p.Variance, p.Dims = 0, 0
	if _, err := DrawTree(rand.New(rand.NewPCG(1, 1)), 4, p); err != nil {
		t.Errorf("DrawTree with no variance: %v", err)
	}
	p.Beta = 1
	if _, err := DrawTree(rand.New(rand.NewPCG(1, 1)), 4, p); !errors.Is(err, ErrParams) {
		t.Errorf("DrawTree with beta = 1: %v", err)
	}
	// The boundary alpha = -2 beta is allowed.
	p = ok
	p.Alpha = -1
	if _, _, err := Draw(rand.New(rand.NewPCG(1, 1)), 4, p); err != nil {
		t.Errorf("alpha = -2 beta: %v", err)
	}
}

func TestLeafRows(t *testing.T) {
	tr, x, err := Draw(rand.New(rand.NewPCG(3, 3)), 4, Params{Div: pydt.DivInv{C: 1}, Variance: 1, Dims: 3})
	if err != nil {
		t.Fatal(err)
	}
	rows := LeafRows(x, tr.NumLeaves(), 3)
	if len(rows) != 4 || rows[2][1] != x[7] || len(rows[3]) != 3 {
		t.Fatalf("LeafRows does not index node*D+d")
	}
}

func BenchmarkDrawTree(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	p := Params{Alpha: 1, Beta: 0.3, Div: pydt.DivInv{C: 1}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DrawTree(rng, 1000, p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDraw(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	p := Params{Alpha: 1, Beta: 0.3, Div: pydt.DivInv{C: 1}, Variance: 1, Dims: 5}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Draw(rng, 1000, p); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLawBeyondFloat64 checks the generative process where 1-t is far below
// the float64 range (s = -log(1-t) around 1e4, c = 1e-4): for N = 2 the
// root's s = E/(c h_1) is exponential with mean 1/(c h_1) (a
// Kolmogorov-Smirnov test), and for N = 3 the topology has the exact law
// of the process, which does not depend on c. Before times were kept as s,
// every such time was clamped.
func TestLawBeyondFloat64(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	const c = 1e-4
	alpha, beta := 0.7, 0.3
	p := Params{Alpha: alpha, Beta: beta, Div: pydt.DivInv{C: c}}
	lg := func(x float64) float64 { v, _ := math.Lgamma(x); return v }
	h1 := math.Exp(lg(1-beta) - lg(2+alpha))
	const draws = 20000
	u := make([]float64, draws)
	beyond := 0
	for i := range u {
		tr, err := DrawTree(rng, 2, p)
		if err != nil {
			t.Fatal(err)
		}
		s := tr.Time(tr.Root()).S()
		if s > 745 {
			beyond++
		}
		u[i] = 1 - math.Exp(-c*h1*s) // uniform under the law
	}
	if beyond < draws/2 {
		t.Fatalf("only %d of %d roots beyond 1-t = 5e-324: the test misses the regime", beyond, draws)
	}
	slices.Sort(u)
	dmax := 0.0
	for i, x := range u {
		dmax = max(dmax, math.Abs(x-float64(i)/draws), math.Abs(x-float64(i+1)/draws))
	}
	// The 0.001 critical value of the KS statistic is about 1.95/sqrt(n).
	if crit := 1.95 / math.Sqrt(draws); dmax > crit {
		t.Errorf("N = 2: KS distance %.4f of the root's s from Exp(c h_1) exceeds %.4f", dmax, crit)
	}

	// N = 3: the third point leaves the root edge with probability
	// h2/(h1+h2), h2/h1 = (1-β)/(2+α); otherwise at the root it starts a
	// new branch with (α+2β)/(2+α).
	r := (1 - beta) / (2 + alpha)
	three := 1 / (1 + r) * (alpha + 2*beta) / (2 + alpha)
	n3 := 0
	for range draws {
		tr, err := DrawTree(rng, 3, p)
		if err != nil {
			t.Fatal(err)
		}
		mustValidate(t, tr)
		if tr.NumInternal() == 1 {
			n3++
		}
	}
	got := float64(n3) / draws
	if se := math.Sqrt(three * (1 - three) / draws); !(math.Abs(got-three) <= 4*se) {
		t.Errorf("N = 3: P(three-way split) = %.4f, exact %.4f ± %.4f", got, three, se)
	}
}
