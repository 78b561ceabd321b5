package bp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// TestSampleLocationsMoments compares the empirical means, variances and
// covariances of joint draws with the dense posterior, within 4 standard
// errors, and checks that observed entries are reproduced exactly.
func TestSampleLocationsMoments(t *testing.T) {
	for _, vars := range [][]float64{{0.8, 0.8}, {0.07, 30}} {
		t.Run(fmt.Sprint(vars), func(t *testing.T) { sampleMoments(t, vars) })
	}
}

func sampleMoments(t *testing.T, vars []float64) {
	rng := rand.New(rand.NewPCG(11, 12))
	const D, n, draws = 2, 9, 20000
	tr := genPYDT(rng, n, 1.5, 1, 0.4)
	m := New(tr, D)
	setVariances(t, m, vars)
	randomEvidence(t, rng, m, 0.35, 0.25)
	nodes := tr.PreOrder(nil)
	K := len(nodes)
	x := make([]float64, tr.Cap()*D)
	sum := make([]float64, D*K)
	cross := make([]float64, D*K*K)
	for range draws {
		if err := m.SampleLocations(rng, x); err != nil {
			t.Fatal(err)
		}
		for d := range D {
			for a, u := range nodes {
				xa := x[int(u)*D+d]
				sum[d*K+a] += xa
				for b, w := range nodes {
					cross[(d*K+a)*K+b] += xa * x[int(w)*D+d]
				}
			}
		}
		for i := range n {
			for d := range D {
				mean, prec := m.Evidence(pydt.NodeID(i), d)
				if math.IsInf(prec, 1) && x[i*D+d] != mean {
					t.Fatalf("observed leaf %d dim %d drawn as %v, observed %v", i, d, x[i*D+d], mean)
				}
			}
		}
	}
	checked := 0
	for d := range D {
		wm, post := densePosterior(t, m, nodes, d)
		for a, u := range nodes {
			va := post.At(a, a)
			if va < 1e-12 {
				continue // observed
			}
			mean := sum[d*K+a] / draws
			if se := math.Sqrt(va / draws); !(math.Abs(mean-wm[a]) <= 4*se) {
				t.Errorf("node %d dim %d: mean %.5g, posterior %.5g (se %.2g)", u, d, mean, wm[a], se)
			}
			for b := a; b < K; b++ {
				vb := post.At(b, b)
				if vb < 1e-12 {
					continue
				}
				w := nodes[b]
				cov := cross[(d*K+a)*K+b]/draws - mean*sum[d*K+b]/draws
				want := post.At(a, b)
				se := math.Sqrt((va*vb + want*want) / draws)
				if !(math.Abs(cov-want) <= 4*se) {
					t.Errorf("nodes %d,%d dim %d: covariance %.5g, posterior %.5g (se %.2g)", u, w, d, cov, want, se)
				}
				checked++
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d moments checked", checked)
	}
}

// TestSampleFromPriorSuffStats checks, with no evidence at all, that draws
// follow the prior: E[ss] = σ² n / 2, and per dimension E[ss_d] = σ²_d n_d
// / 2 with unequal variances.
func TestSampleFromPriorSuffStats(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	const D, draws, s2 = 3, 4000, 1.7
	tr := genPYDT(rng, 15, 1, 0.5, 0.2)
	m := New(tr, D)
	if err := m.SetVariance(s2); err != nil {
		t.Fatal(err)
	}
	x := make([]float64, tr.Cap()*D)
	var tot float64
	var cnt int
	for range draws {
		if err := m.SampleLocations(rng, x); err != nil {
			t.Fatal(err)
		}
		ss, n, err := m.SuffStats(x)
		if err != nil {
			t.Fatal(err)
		}
		tot += ss
		cnt = n
	}
	// ss = (σ²/2) χ²_n: mean σ² n/2, variance σ⁴ n/2.
	mean := tot / draws
	want := s2 * float64(cnt) / 2
	se := s2 * math.Sqrt(float64(cnt)/2/draws)
	if !(math.Abs(mean-want) <= 4*se) {
		t.Errorf("E[ss] = %.5g, want %.5g (se %.2g)", mean, want, se)
	}

	vars := []float64{0.05, 1.7, 40}
	setVariances(t, m, vars)
	tots := make([]float64, D)
	ssd, nd := make([]float64, D), make([]int, D)
	for range draws {
		if err := m.SampleLocations(rng, x); err != nil {
			t.Fatal(err)
		}
		if err := m.SuffStatsDims(x, ssd, nd); err != nil {
			t.Fatal(err)
		}
		for d := range D {
			tots[d] += ssd[d]
		}
	}
	for d, s2 := range vars {
		mean := tots[d] / draws
		want := s2 * float64(nd[d]) / 2
		se := s2 * math.Sqrt(float64(nd[d])/2/draws)
		if !(math.Abs(mean-want) <= 4*se) {
			t.Errorf("dimension %d, σ² = %v: E[ss_d] = %.5g, want %.5g (se %.2g)", d, s2, mean, want, se)
		}
	}
}

func TestObserveMatMatchesObserve(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	tr := genPYDT(rng, 12, 1, 0, 0)
	const D = 3
	data := make([]float64, 12*D)
	for i := range data {
		data[i] = rng.NormFloat64()
		if rng.IntN(5) == 0 {
			data[i] = math.NaN()
		}
	}
	a, b, c := New(tr, D), New(tr, D), New(tr, D)
	if err := a.ObserveMatrix(data); err != nil {
		t.Fatal(err)
	}
	if err := b.ObserveMat(mat.NewDense(12, D, data)); err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		for d := range D {
			if err := c.Observe(pydt.NodeID(i), d, data[i*D+d]); err != nil {
				t.Fatal(err)
			}
		}
	}
	la, lb, lc := a.LogLik(), b.LogLik(), c.LogLik()
	if la != lb || la != lc || math.IsNaN(la) {
		t.Errorf("ObserveMatrix %v, ObserveMat %v, Observe %v", la, lb, lc)
	}
	if want := denseLogLik(t, a); !relClose(la, want, 1e-9) {
		t.Errorf("LogLik %v, dense %v", la, want)
	}
}
