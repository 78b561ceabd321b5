package inference

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mathext"

	"github.com/pydtlang/pydtlang/stdlib"
)

// probitGHKStep updates the diffusion variance of a Probit PYDT in the
// non-centred coordinates of the auxiliaries: an interweaving step (Yu &
// Meng 2011, "To center or not to center", JCGS 20) that complements the
// centred updates given u.
//
// Given the tree and σ², the observed auxiliaries of column d are u ~ N(0,
// K), K = σ²C + I (C the leaves' shared times), restricted to the orthant
// Side(y)·u > 0. Write K = L Lᵀ (Cholesky, leaves in index order): u_j =
// m_j + L_jj e_j with m_j = Σ_{l<j} L_jl e_l, and given u_1..u_{j-1} the
// constraint on e_j is a half line. Its quantile ξ_j within that truncated
// standard normal, F_j(e_j) = (Φ(e_j) − Φ(a_j))/Φ(−a_j) on e_j > a_j (for
// y = 1; mirrored for y = 0), is the non-centred coordinate: the map
// (σ², ξ) → (σ², u) (Geweke-Hajivassiliou-Keane) is a bijection onto the
// orthant for every σ², triangular in ξ with ∂u_j/∂ξ_j = 1/f_j(u_j),
// f_j = N(u_j; m_j, L_jj²)/Φ_j the truncated conditional, so the joint
// density in (σ², ξ) is
//
//	p(σ²) p(tree) N(u; 0, K) Π_j Φ_j / N(u; 0, K) = p(σ²) p(tree) Π_j Φ_j,
//
// with Φ_j = P(the sign of u_j | u_1..u_{j-1}, tree, σ²) =
// Φ(Side(y_j)·m_j/L_jj). The step updates log σ² from that conditional
// given ξ (and the tree), with u following the map: where σ² is large next
// to the unit noise (on animals σ² ≈ 50) the Φ_j depend on σ² only through
// the leaves' correlations, and the conditional is far wider than that of
// σ² given u, along which the centred updates move log σ² by about 0.1 per
// sweep.
//
// The target along δ = ½ log(σ²'/σ²) is f(δ) = log p(v') + log v' +
// Σ log Φ_j(δ), v' the variance's scalar moved with σ² and log v' the
// Jacobian of updating it on the log scale. The update is a chain of
// ghkProposals random-walk Metropolis steps in δ (symmetric proposals, so
// the acceptance ratio is e^{f(δ') − f(δ)}); each costs one Cholesky
// factorisation of the N×N matrix K (shared by the fully observed columns)
// and O(N²) per column plus a few special functions per entry, so the
// schedule uses the step for trees of at most ghkMaxLeaves leaves. A slice
// sampler needs five or six such passes per update (docs/probit-mixing.md).
type probitGHKStep struct {
	k          int       // the PYDT's index in Model.Trees
	of         string    // " of Y" in a model with several PYDTs (dataOf)
	v          treeParam // the variance's scalar or array element
	reciprocal bool
}

// ghkProposals and ghkStepSD set probitGHKStep's Metropolis chain: on
// animals the conditional of δ given ξ has a standard deviation of about
// 0.12, and a step of 2.5 times that accepts about 40% of proposals.
const (
	ghkProposals = 2
	ghkStepSD    = 0.3
)

// ghkMaxLeaves bounds the number of leaves for which the schedule includes
// probitGHKStep: its cost grows as N³ + N²·D per evaluation.
const ghkMaxLeaves = 200

// probitGHK returns the step for the k-th PYDT under the conditions of
// probitScale, when it has at most ghkMaxLeaves leaves.
func probitGHK(m *Model, k int) (Updater, bool) {
	v, reciprocal, ok := probitVariance(m, k)
	if !ok || m.Trees[k].N > ghkMaxLeaves || m.Trees[k].Data == nil {
		return nil, false
	}
	return &probitGHKStep{k: k, of: dataOf(m, k), v: v, reciprocal: reciprocal}, true
}

// Name is "ghk(prec, u)": the variance updated in the non-centred
// (Geweke-Hajivassiliou-Keane) coordinates of u.
func (p *probitGHKStep) Name() string { return "ghk(" + p.v.name() + ", u" + p.of + ")" }

func (p *probitGHKStep) Explain() string {
	return fmt.Sprintf("random-walk Metropolis steps of log %s given the tree and the non-centred auxiliaries ξ (the quantiles of u%s "+
		"in their sequential truncated-normal conditionals, Geweke-Hajivassiliou-Keane), u moving with %s; "+
		"the target is p(%s)·Π_j Φ_j, the probability of each sign given the earlier ones (interweaving, Yu & Meng 2011)",
		p.v.name(), p.of, p.v.name(), p.v.name())
}

// ghkScratch is a chain's scratch space for probitGHKStep.
type ghkScratch struct {
	c    []float64   // n×n: the leaves' shared times
	l    []float64   // n×n: a Cholesky factor of K
	rows [][]int     // per column: its observed rows
	sgn  [][]float64 // per column: their sides
	full []bool      // per column: every row observed
	q    []float64   // per entry i·D+d: the log quantile of e (see ghkEncode)
	up   []bool      // per entry: q is the upper tail's
	e    []float64   // per observed row of a column: e_j
	u    []float64   // N·D: the auxiliaries at the last δ evaluated
	acc  []float64   // N·D: those at the last accepted δ
	sub  []float64   // Cholesky factor of a column with missing entries
}

// cholesky writes into l (n×n, row major, lower triangle) the Cholesky
// factor of K = s2·C[rows, rows] + I for the given rows of the n0×n0 matrix
// c, and reports false when K is not numerically positive definite. It
// writes K's lower triangle into l and factorises it in place
// (choleskyDense).
func cholesky(l, c []float64, n0 int, rows []int, s2 float64) bool {
	n := len(rows)
	for j := range n {
		for i := j; i < n; i++ {
			s := s2 * c[rows[i]*n0+rows[j]]
			if i == j {
				s++
			}
			l[i*n+j] = s
		}
	}
	return choleskyDense(l, l, n)
}

// ghkEncode returns the log quantile of ê in the standard normal truncated
// to ê > a, as the log of the upper tail Φ(−ê)/Φ(−a) when that is below ½
// (up) and of the lower part (Φ(ê) − Φ(a))/Φ(−a) otherwise, each formed
// without cancellation. lpa is log Φ(−a).
func ghkEncode(a, e, lpa float64) (q float64, up bool) {
	upper := stdlib.LogNormCDF(-e) - lpa
	if upper < -math.Ln2 {
		return upper, true
	}
	if a > 0 {
		// Both in the upper half: Φ(ê) − Φ(a) = Φ(−a) − Φ(−ê).
		return math.Log(-math.Expm1(upper)), false
	}
	la := stdlib.LogNormCDF(a)
	return la + logExpm1(stdlib.LogNormCDF(e)-la) - lpa, false
}

// logExpm1 returns log(e^x − 1) for x > 0 without overflow.
func logExpm1(x float64) float64 {
	if x > 30 {
		return x + math.Log1p(-math.Exp(-x))
	}
	return math.Log(math.Expm1(x))
}

// normalQuantile is mathext.NormalQuantile, NaN outside (0, 1) instead of
// a panic (a rounding far in a tail; the caller refuses the point).
func normalQuantile(p float64) float64 {
	if !(p > 0 && p < 1) {
		return math.NaN()
	}
	return mathext.NormalQuantile(p)
}

// ghkDecode inverts ghkEncode for the truncation point a (lpa = log Φ(−a)).
func ghkDecode(a, q float64, up bool, lpa float64) float64 {
	if up {
		return -normQuantileLog(q + lpa)
	}
	if a > 0 {
		// Φ(−ê) = Φ(−a)·(1 − G).
		return -normQuantileLog(lpa + math.Log1p(-math.Exp(q)))
	}
	// Φ(ê) = Φ(a) + G·Φ(−a).
	x, y := stdlib.LogNormCDF(a), q+lpa
	if x < y {
		x, y = y, x
	}
	return normQuantileLog(x + math.Log1p(math.Exp(y-x)))
}

// ghkStep returns log Φ(−a) and ghkDecode(a, q, up, log Φ(−a)), in
// probability space where nothing underflows (two thirds of the special
// functions of the log-space path) and by ghkDecode elsewhere.
func ghkStep(a, q float64, up bool) (lpa, e float64) {
	if !(q <= 0) {
		return math.NaN(), math.NaN() // not a log probability: refused
	}
	if a > -30 && a < 30 && q > -700 {
		pa := 0.5 * math.Erfc(a/math.Sqrt2) // Φ(−a)
		lpa = math.Log(pa)
		g := math.Exp(q)
		switch {
		case up: // Φ(−ê) = G·Φ(−a)
			if p := g * pa; p > 1e-300 {
				return lpa, -normalQuantile(p)
			}
		case a > 0: // Φ(−ê) = Φ(−a)·(1 − G)
			if p := pa * (1 - g); p > 1e-300 {
				return lpa, -normalQuantile(p)
			}
		default: // Φ(ê) = Φ(a) + G·Φ(−a) ≤ ¾
			if p := 0.5*math.Erfc(-a/math.Sqrt2) + g*pa; p > 1e-300 {
				return lpa, normalQuantile(p)
			}
		}
	}
	lpa = stdlib.LogNormCDF(-a)
	return lpa, ghkDecode(a, q, up, lpa)
}

// normQuantileLog returns x with log Φ(x) = lp (lp ≤ 0), accurate far into
// both tails: below p = e^-690 by Newton steps on log Φ from an asymptotic
// start.
func normQuantileLog(lp float64) float64 {
	switch {
	case math.IsNaN(lp) || lp > 0:
		return math.NaN()
	case lp == 0:
		return math.Inf(1)
	case lp > -math.Ln2:
		return -lowerQuantileLog(math.Log(-math.Expm1(lp)))
	}
	return lowerQuantileLog(lp)
}

// lowerQuantileLog is normQuantileLog for lp ≤ log ½.
func lowerQuantileLog(lp float64) float64 {
	if lp > -690 {
		return normalQuantile(math.Exp(lp))
	}
	if math.IsInf(lp, -1) {
		return math.Inf(-1)
	}
	// log Φ(x) ≈ −x²/2 − log(−x) − ½ log 2π for x → −∞.
	x := -math.Sqrt(-2 * lp)
	for range 6 {
		x = -math.Sqrt(-2 * (lp + math.Log(-x) + 0.5*math.Log(2*math.Pi)))
	}
	// Newton on log Φ: d/dx log Φ(x) = φ(x)/Φ(x).
	for range 3 {
		lphi := stdlib.LogNormCDF(x)
		x -= (lphi - lp) * math.Exp(lphi+0.5*x*x+0.5*math.Log(2*math.Pi))
	}
	return x
}

// factor returns the Cholesky factor of K for column dim at variance s2
// (in g.sub, or for a fully observed column in g.l, factorised again only
// when s2 differs from *fullVar, the variance g.l holds), and false when K
// is not numerically positive definite.
func (g *ghkScratch) factor(n, dim int, s2 float64, fullVar *float64) ([]float64, bool) {
	rows := g.rows[dim]
	if !g.full[dim] {
		return g.sub, cholesky(g.sub, g.c, n, rows, s2)
	}
	if s2 != *fullVar {
		*fullVar = s2
		if !cholesky(g.l, g.c, n, rows, s2) {
			return nil, false
		}
	}
	return g.l, true
}

// condMean returns m_j = Σ_{k<j} L_jk e_k for row j of the m×m factor l.
func (g *ghkScratch) condMean(l []float64, m, j int) float64 {
	return addCondMean(0, l[j*m:j*m+j], g.e[:j])
}

// addCondMean returns mu + Σ_k lj[k]·e[k], summed in order: the
// conditional mean of a GHK entry from its row lj of the Cholesky factor
// and the whitened entries e before it.
func addCondMean(mu float64, lj, e []float64) float64 {
	for k, ek := range e {
		mu += lj[k] * ek
	}
	return mu
}

// prepare lays out the observed rows of every column and the tree's shared
// times, encodes the current auxiliaries at the current variances and
// returns Σ log Φ_j there. It reports false when the current u is outside
// the orthant or K cannot be factorised (the step then leaves the state
// alone).
func (p *probitGHKStep) prepare(ch *Chain) (float64, bool, error) {
	t := ch.trees[p.k]
	b, tr, env := t.b, t.Tree, ch.st.Env
	n, d := b.N, b.D
	g := &ch.probit.ghk
	h := &ch.probit.hmc
	y := env.Values[b.Data.ID]
	th := b.Threshold()
	if len(g.rows) != d {
		g.rows = make([][]int, d)
		g.sgn = make([][]float64, d)
		g.full = make([]bool, d)
	}
	for dim := range d {
		g.rows[dim], g.sgn[dim] = g.rows[dim][:0], g.sgn[dim][:0]
		for i := range n {
			if yk := y[i*d+dim]; !math.IsNaN(yk) {
				g.rows[dim] = append(g.rows[dim], i)
				g.sgn[dim] = append(g.sgn[dim], th.Side(yk))
			}
		}
		g.full[dim] = len(g.rows[dim]) == n
	}
	// The shared times: C_ij = t of the lowest common ancestor.
	h.layout(tr, n)
	g.c = grow(g.c, n*n)
	for i := range n {
		lcaColumn(h, tr, i)
		copy(g.c[i*n:i*n+n], h.col[:n])
	}
	g.l = grow(g.l, n*n)
	g.sub = grow(g.sub, n*n)
	g.q = grow(g.q, n*d)
	g.up = grow(g.up, n*d)
	g.e = grow(g.e, n)
	g.u = grow(g.u, n*d)
	if len(h.variances) != d {
		h.variances = make([]float64, d)
	}
	if err := b.Factor.Variances(env, h.variances); err != nil {
		return 0, false, fmt.Errorf("%s: %w", p.Name(), err)
	}
	fullVar, sum := math.NaN(), 0.0
	for dim := range d {
		rows := g.rows[dim]
		if len(rows) == 0 {
			continue
		}
		l, ok := g.factor(n, dim, h.variances[dim], &fullVar)
		if !ok {
			return 0, false, nil
		}
		m := len(rows)
		for j, i := range rows {
			mu := g.condMean(l, m, j)
			s, ljj := g.sgn[dim][j], l[j*m+j]
			e := (t.aux[i*d+dim] - mu) / ljj
			a := -s * mu / ljj
			if !(s*e > a) || math.IsInf(e, 0) {
				return 0, false, nil // outside the orthant
			}
			g.e[j] = e
			k := i*d + dim
			lpa := stdlib.LogNormCDF(-a)
			sum += lpa
			g.q[k], g.up[k] = ghkEncode(a, s*e, lpa)
			if !(g.q[k] <= 0) {
				return 0, false, nil
			}
		}
	}
	return sum, true, nil
}

// at moves the variance to δ, decodes the auxiliaries into g.u and returns
// f(δ), -Inf where the variance leaves its support or a decoded auxiliary
// is not finite or on the wrong side. An error is one of the leaf factor's
// variances at the proposed value (the model cannot be evaluated there),
// which the step reports rather than treating as a rejection.
func (p *probitGHKStep) at(ch *Chain, x0, delta float64) (float64, error) {
	t := ch.trees[p.k]
	b, env := t.b, ch.st.Env
	n, d := b.N, b.D
	g := &ch.probit.ghk
	h := &ch.probit.hmc
	lp := varianceAt(ch, p.v, p.reciprocal, x0, delta)
	if math.IsInf(lp, -1) {
		return lp, nil
	}
	if err := b.Factor.Variances(env, h.variances); err != nil {
		return 0, fmt.Errorf("%s: the variances at the proposed %s = %g: %w", p.Name(), p.v.name(), p.v.value(ch), err)
	}
	fullVar := math.NaN()
	for dim := range d {
		rows := g.rows[dim]
		if len(rows) == 0 {
			continue
		}
		l, ok := g.factor(n, dim, h.variances[dim], &fullVar)
		if !ok {
			return math.Inf(-1), nil
		}
		m := len(rows)
		for j, i := range rows {
			mu := g.condMean(l, m, j)
			s, ljj := g.sgn[dim][j], l[j*m+j]
			a := -s * mu / ljj
			k := i*d + dim
			lpa, e := ghkStep(a, g.q[k], g.up[k])
			e *= s
			u := mu + ljj*e
			if !(s*u > 0) || math.IsInf(u, 0) {
				return math.Inf(-1), nil
			}
			g.e[j] = e
			g.u[k] = u
			lp += lpa
		}
	}
	if math.IsNaN(lp) || math.IsInf(lp, 1) {
		return math.Inf(-1), nil
	}
	return lp, nil
}

// setErr returns, with the step's name, the error that varianceAt recorded
// in ch.setErr (the model could not be evaluated at a value of the
// variable; varianceAt then returned -Inf, which is not a rejection), the
// variable put back to x0; nil when there is none.
func (p *probitGHKStep) setErr(ch *Chain, x0 float64) error {
	err := ch.setErr
	if err == nil {
		return nil
	}
	ch.setErr = nil
	_ = p.v.assign(ch, x0) // the recorded error is the one to report
	return fmt.Errorf("%s: %w", p.Name(), err)
}

// restore puts the variable back to x0, returning set's error with the
// step's name.
func (p *probitGHKStep) restore(ch *Chain, x0 float64) error {
	if err := p.v.assign(ch, x0); err != nil {
		return fmt.Errorf("%s: %w", p.Name(), err)
	}
	return nil
}

func (p *probitGHKStep) update(ch *Chain) error {
	t := ch.trees[p.k]
	x0 := p.v.value(ch)
	sum, ok, err := p.prepare(ch)
	if err != nil {
		return err
	}
	ch.setErr = nil
	f0 := varianceAt(ch, p.v, p.reciprocal, x0, 0) + sum
	if err := p.setErr(ch, x0); err != nil {
		return err
	}
	if !ok || math.IsInf(f0, -1) || math.IsNaN(f0) || math.IsInf(f0, 1) {
		ch.Skipped++
		return p.restore(ch, x0)
	}
	// Random-walk Metropolis on δ given ξ: each proposal costs one
	// decoding pass, a third of what a slice sample's five or six
	// evaluations cost, and a chain of them leaves the conditional
	// invariant.
	g := &ch.probit.ghk
	cur, fcur, moved := 0.0, f0, false
	for range ghkProposals {
		prop := cur + ghkStepSD*ch.rng.NormFloat64()
		fp, err := p.at(ch, x0, prop)
		if err == nil {
			err = p.setErr(ch, x0)
		}
		if err != nil {
			_ = p.v.assign(ch, x0) // the first error is the one to report
			return err
		}
		accepted := !math.IsInf(fp, -1) && (fp-fcur >= 0 || ch.rng.Float64() < math.Exp(fp-fcur))
		ch.countStep(p.Name(), accepted)
		if accepted {
			cur, fcur, moved = prop, fp, true
			g.acc = grow(g.acc, len(g.u))
			copy(g.acc, g.u)
		}
	}
	if !moved {
		return p.restore(ch, x0)
	}
	if math.IsInf(varianceAt(ch, p.v, p.reciprocal, x0, cur), -1) {
		if err := p.setErr(ch, x0); err != nil {
			return err
		}
		return fmt.Errorf("%s: the density is zero at the accepted scale e^%g", p.Name(), cur)
	}
	for dim, rows := range g.rows {
		for _, i := range rows {
			k := i*t.b.D + dim
			t.aux[k] = g.acc[k]
		}
	}
	if err := t.syncVariance(ch.st.Env); err != nil {
		return fmt.Errorf("%s: %w", p.Name(), err)
	}
	if err := t.syncEvidence(ch.st.Env, &ch.leafParams); err != nil {
		return fmt.Errorf("%s: %w", p.Name(), err)
	}
	return nil
}

// choleskyDense writes into l the lower Cholesky factor of the m×m matrix
// a (lower triangle read, row major) and reports false when a is not
// numerically positive definite. l may be a itself: each entry of a is
// read just before the same entry of l is written.
func choleskyDense(l, a []float64, m int) bool {
	for j := range m {
		for i := j; i < m; i++ {
			s := a[i*m+j]
			li, lj := l[i*m:i*m+j], l[j*m:j*m+j]
			for k := range j {
				s -= li[k] * lj[k]
			}
			if i == j {
				if !(s > 0) || math.IsInf(s, 1) {
					return false
				}
				l[j*m+j] = math.Sqrt(s)
			} else {
				l[i*m+j] = s / l[j*m+j]
			}
		}
	}
	return true
}
