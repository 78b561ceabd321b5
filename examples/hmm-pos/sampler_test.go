package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// drawCat draws a category from log probabilities lp.
func drawCat(rng *rand.Rand, lp []float64) int {
	u := rng.Float64()
	for k, l := range lp {
		u -= math.Exp(l)
		if u < 0 {
			return k
		}
	}
	return len(lp) - 1
}

// generate draws z given the chain and w given z and η, from the model.
func (s *sampler) generate(statesToo bool) {
	K, V := s.K, s.V
	if statesToo {
		for t := range s.z {
			if t == 0 {
				s.z[t] = drawCat(s.rng, s.chain.LogInit)
			} else {
				s.z[t] = drawCat(s.rng, s.chain.LogTrans[s.z[t-1]*K:(s.z[t-1]+1)*K])
			}
		}
	}
	for t := range s.w {
		s.w[t] = drawCat(s.rng, s.logEm[s.z[t]*V:(s.z[t]+1)*V])
	}
}

// gewekeStats are the statistics compared by the Geweke test.
var gewekeNames = []string{"log prec", "eta[1,1]", "mean eta^2", "softmax(eta[1])[1]", "z = 1", "z[t] = z[t-1]", "root time", "leaves 1, 2 siblings", "w[1] = 1", "eta[z[1], w[1]]"}

func (s *sampler) gewekeStats(dst []float64) {
	K, V := s.K, s.V
	var sq float64
	for _, x := range s.eta {
		sq += x * x
	}
	var z1, same float64
	for t, z := range s.z {
		if z == 0 {
			z1++
		}
		if t > 0 && z == s.z[t-1] {
			same++
		}
	}
	sib := 0.0
	if s.tree.Parent(0) == s.tree.Parent(1) {
		sib = 1
	}
	w1 := 0.0
	if s.w[0] == 0 {
		w1 = 1
	}
	copy(dst, []float64{math.Log(s.prec), s.eta[0], sq / float64(K*V), math.Exp(s.logEm[0]), z1, same,
		s.tree.Time(s.tree.Root()).T(), sib, w1, s.eta[s.z[0]*V+s.w[0]]})
}

// TestGeweke compares the prior (forward draws of every variable, the data
// included) with the successive-conditional chain (a sweep, then new data
// given the state): the means of ten statistics, over the precision, η,
// the states, the tree and the data, agree within 4 standard errors
// (batch means for the chain). A sampler that draws any of its blocks from
// the wrong conditional fails it.
func TestGeweke(t *testing.T) {
	const T = 5
	cfg := config{K: 3, V: 3, transPrior: 1, alpha: 0.3, beta: 0.4, c: 1, precShape: 3, precRate: 2}
	nf, nc, batches := 20000, 40000, 40
	if testing.Short() {
		nf, nc = 6000, 12000
	}
	S := len(gewekeNames)
	rng := rand.New(rand.NewPCG(7, 6))
	// Forward.
	fs, fs2 := make([]float64, S), make([]float64, S)
	st := make([]float64, S)
	w := make([]int, T)
	for range nf {
		s, err := newSampler(cfg, w, rng)
		if err != nil {
			t.Fatal(err)
		}
		s.generate(true)
		s.gewekeStats(st)
		for j, x := range st {
			fs[j] += x
			fs2[j] += x * x
		}
	}
	// Successive conditional.
	s, err := newSampler(cfg, make([]int, T), rng)
	if err != nil {
		t.Fatal(err)
	}
	s.generate(true)
	per := nc / batches
	bm := make([][]float64, batches)
	for b := range bm {
		bm[b] = make([]float64, S)
		for range per {
			if _, err := s.sweep(); err != nil {
				t.Fatal(err)
			}
			s.generate(false)
			s.gewekeStats(st)
			for j, x := range st {
				bm[b][j] += x / float64(per)
			}
		}
	}
	for j, name := range gewekeNames {
		mf := fs[j] / float64(nf)
		sef2 := (fs2[j]/float64(nf) - mf*mf) / float64(nf)
		var mc, v float64
		for b := range bm {
			mc += bm[b][j] / float64(batches)
		}
		for b := range bm {
			v += (bm[b][j] - mc) * (bm[b][j] - mc) / float64(batches-1)
		}
		se := math.Sqrt(sef2 + v/float64(batches))
		z := (mc - mf) / se
		t.Logf("%-22s prior %8.4f  chain %8.4f  z %5.2f", name, mf, mc, z)
		if !(math.Abs(z) <= 4) {
			t.Errorf("%s: prior mean %.4f, chain mean %.4f: %.1f standard errors apart", name, mf, mc, z)
		}
	}
	t.Logf("MH acceptance of the eta updates %.2f", float64(s.Accepted)/float64(s.Proposed))
}

// TestMessage: the message into a leaf from belief propagation is the
// conditional of that leaf given the others, checked against the
// closed-form Gaussian conditional of the leaves' joint law on a fixed
// three-leaf tree (covariance σ²(1 − ... ) from the shared path lengths:
// Cov(x_i, x_j) = σ² · (the length of the path from the origin to where
// their paths split), in the time scale t of the Brownian motion).
func TestMessage(t *testing.T) {
	cfg := config{K: 3, V: 2, transPrior: 1, alpha: 0.3, beta: 0.4, c: 1, precShape: 3, precRate: 2}
	s, err := newSampler(cfg, []int{0, 1}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	lca := func(a, b pydt.NodeID) float64 { return lcaTime(s.tree, a, b) }
	s2 := 1 / s.prec
	// Leaves are at time 1: Var = σ²; Cov(i, j) = σ² t_lca(i, j).
	for k := range 3 {
		if err := s.message(k); err != nil {
			t.Fatal(err)
		}
		var o []int
		for j := range 3 {
			if j != k {
				o = append(o, j)
			}
		}
		c := func(i, j int) float64 {
			if i == j {
				return s2
			}
			return s2 * lca(pydt.NodeID(i), pydt.NodeID(j))
		}
		// Conditional of x_k given x_o: Σ_ko Σ_oo⁻¹ x_o, σ² − Σ_ko Σ_oo⁻¹ Σ_ok.
		a, b, d := c(o[0], o[0]), c(o[0], o[1]), c(o[1], o[1])
		det := a*d - b*b
		inv := [2][2]float64{{d / det, -b / det}, {-b / det, a / det}}
		ko := [2]float64{c(k, o[0]), c(k, o[1])}
		g := [2]float64{ko[0]*inv[0][0] + ko[1]*inv[1][0], ko[0]*inv[0][1] + ko[1]*inv[1][1]}
		wantVar := s2 - g[0]*ko[0] - g[1]*ko[1]
		for dim := range cfg.V {
			want := g[0]*s.eta[o[0]*cfg.V+dim] + g[1]*s.eta[o[1]*cfg.V+dim]
			if !(math.Abs(s.mu[dim]-want) <= 1e-8*(1+math.Abs(want))) || !(math.Abs(1/s.mp[dim]-wantVar) <= 1e-8*(1+wantVar)) {
				t.Errorf("leaf %d dim %d: message N(%v, %v), closed form N(%v, %v)", k+1, dim, s.mu[dim], 1/s.mp[dim], want, wantVar)
			}
		}
		for d, x := range s.eta[k*cfg.V : (k+1)*cfg.V] {
			if err := s.lik.Observe(pydt.NodeID(k), d, x); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestErrors(t *testing.T) {
	good := config{K: 3, V: 3, transPrior: 1, alpha: 0.3, beta: 0.4, c: 1, precShape: 3, precRate: 2}
	for i, c := range []config{
		{K: 1, V: 3, transPrior: 1, c: 1, precShape: 1, precRate: 1},
		{K: 3, V: 3, transPrior: 0, c: 1, precShape: 1, precRate: 1},
		{K: 3, V: 3, transPrior: 1, c: 1, precShape: 1, precRate: 1, alpha: -1},
	} {
		if _, err := newSampler(c, []int{0}, rand.New(rand.NewPCG(1, 1))); err == nil {
			t.Errorf("config %d: no error", i)
		}
	}
	for _, w := range [][]int{nil, {0, 3}, {-1}} {
		if _, err := newSampler(good, w, rand.New(rand.NewPCG(1, 1))); err == nil {
			t.Errorf("words %v: no error", w)
		}
	}
	_ = fmt.Sprint
}

// TestDrawPrecCollapsed: the precision is drawn from its conditional given
// the tree and η with the internal locations integrated out, as the
// engine's gibbs(prec): Gamma(shape + K·V/2, rate + q/2), q = Σ_d η_dᵀ C⁻¹
// η_d with C_ij the time of the lowest common ancestor of leaves i and j
// (1 on the diagonal), computed here from the tree's times alone. One draw
// from a start of precision 0.01 or 100 has that law whatever the start
// (a draw given locations sampled at the start's precision, as before,
// depends on it): mean and variance within 4 standard errors.
func TestDrawPrecCollapsed(t *testing.T) {
	cfg := config{K: 3, V: 2, transPrior: 1, alpha: 0.3, beta: 0.4, c: 1, precShape: 3, precRate: 2}
	s, err := newSampler(cfg, []int{0, 1}, rand.New(rand.NewPCG(4, 1)))
	if err != nil {
		t.Fatal(err)
	}
	lca := func(a, b pydt.NodeID) float64 { return lcaTime(s.tree, a, b) }
	K, V := cfg.K, cfg.V
	c := mat.NewSymDense(K, nil)
	for i := range K {
		for j := i; j < K; j++ {
			v := 1.0
			if i != j {
				v = lca(pydt.NodeID(i), pydt.NodeID(j))
			}
			c.SetSym(i, j, v)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(c) {
		t.Fatal("C is not positive definite")
	}
	q := 0.0
	for d := range V {
		x := mat.NewVecDense(K, nil)
		for i := range K {
			x.SetVec(i, s.eta[i*V+d])
		}
		var y mat.VecDense
		if err := ch.SolveVecTo(&y, x); err != nil {
			t.Fatal(err)
		}
		q += mat.Dot(x, &y)
	}
	shape, rate := cfg.precShape+float64(K*V)/2, cfg.precRate+q/2
	wantMean, wantVar := shape/rate, shape/(rate*rate)
	const M = 4000
	for _, p0 := range []float64{0.01, 100} {
		var sum, sum2 float64
		for range M {
			s.prec = p0
			if err := s.lik.SetVariance(1 / p0); err != nil {
				t.Fatal(err)
			}
			if err := s.drawPrec(); err != nil {
				t.Fatal(err)
			}
			sum += s.prec
			sum2 += s.prec * s.prec
		}
		mean := sum / M
		v := sum2/M - mean*mean
		seMean := math.Sqrt(wantVar / M)
		// The sample variance's standard error, from the Gamma's fourth
		// central moment 3(1 + 2/shape)·var² (excess kurtosis 6/shape).
		seVar := math.Sqrt((3*(1+2/shape)*wantVar*wantVar - wantVar*wantVar) / M)
		if math.Abs(mean-wantMean) > 4*seMean || math.Abs(v-wantVar) > 4*seVar {
			t.Errorf("start %v: draws of mean %.4f, variance %.4f; the collapsed conditional Gamma(%.3f, %.3f) has %.4f ± %.4f, %.4f ± %.4f",
				p0, mean, v, shape, rate, wantMean, seMean, wantVar, seVar)
		}
	}
}

// lcaTime returns the time t in [0, 1] of the lowest common ancestor of
// nodes a and b of tr.
func lcaTime(tr *pydt.Tree, a, b pydt.NodeID) float64 {
	anc := map[pydt.NodeID]bool{}
	for v := a; v != pydt.NoNode; v = tr.Parent(v) {
		anc[v] = true
	}
	for v := b; v != pydt.NoNode; v = tr.Parent(v) {
		if anc[v] {
			return tr.Time(v).T()
		}
	}
	return 0
}
