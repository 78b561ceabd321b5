package em

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"

	"github.com/pydtlang/pydtlang/internal/densetest"
	"github.com/pydtlang/pydtlang/stdlib"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
	"github.com/pydtlang/pydtlang/stdlib/pydt/sim"
)

// TestProbitTilted checks the tilted moments against quadrature of
// N(z; m, v) Φ(±z).
func TestProbitTilted(t *testing.T) {
	for _, c := range []struct{ y, m, v float64 }{
		{1, 0, 1}, {0, 0, 1}, {1, 2, 0.5}, {0, 2, 0.5}, {1, -3, 2}, {0, -1, 10}, {1, -8, 0.3}, {1, 0.1, 1e-4},
	} {
		sd := math.Sqrt(c.v)
		lo, hi := c.m-14*sd, c.m+14*sd
		w := func(z float64) float64 {
			d := (z - c.m) / sd
			lik := stdlib.LogNormCDF(z)
			if c.y == 0 {
				lik = stdlib.LogNormCDF(-z)
			}
			return math.Exp(-0.5*d*d-0.5*log2Pi-math.Log(sd)) * math.Exp(lik)
		}
		z0 := quad.Fixed(w, lo, hi, 4000, nil, 0)
		z1 := quad.Fixed(func(z float64) float64 { return z * w(z) }, lo, hi, 4000, nil, 0) / z0
		z2 := quad.Fixed(func(z float64) float64 { return (z - z1) * (z - z1) * w(z) }, lo, hi, 4000, nil, 0) / z0
		lz, mean, vr, err := Probit{}.Tilted(0, c.y, c.m, c.v)
		if err != nil {
			t.Fatal(err)
		}
		if !(math.Abs(lz-math.Log(z0)) <= 1e-8*(1+math.Abs(lz))) || !(math.Abs(mean-z1) <= 1e-7*(1+math.Abs(z1))) ||
			!(math.Abs(vr-z2) <= 1e-7*z2) {
			t.Errorf("%+v: (logZ, mean, var) = (%v, %v, %v), quadrature (%v, %v, %v)", c, lz, mean, vr, math.Log(z0), z1, z2)
		}
	}
	if _, _, _, err := (Probit{}).Tilted(0, 2, 0, 1); err == nil {
		t.Error("y = 2 accepted")
	}
	if _, _, _, err := (Probit{}).Tilted(0, 1, 0, 0); err == nil {
		t.Error("zero cavity variance accepted")
	}
}

// orthant returns P(u_i s_i > 0 for all i) for u ~ N(0, Σ), N = 2 or 3,
// signs s_i = ±1, by the closed forms (Sheppard; for N = 3, 1/8 + Σ_{i<j}
// asin ρ_ij / (4π)).
func orthant(cov [][]float64, sign []float64) float64 {
	rho := func(i, j int) float64 {
		return sign[i] * sign[j] * cov[i][j] / math.Sqrt(cov[i][i]*cov[j][j])
	}
	switch len(sign) {
	case 2:
		return 0.25 + math.Asin(rho(0, 1))/(2*math.Pi)
	case 3:
		return 0.125 + (math.Asin(rho(0, 1))+math.Asin(rho(0, 2))+math.Asin(rho(1, 2)))/(4*math.Pi)
	}
	panic("orthant: N must be 2 or 3")
}

// TestEPLogLikExact compares EP's estimate of log p(Y | tree) for probit
// data on trees of 2 and 3 leaves (D = 1) with the exact value: the leaf
// locations are N(0, σ² C), C_ij the time of the lowest common ancestor,
// so y is the sign pattern of u = z + ε ~ N(0, σ² C + I), an orthant
// probability in closed form. For the star tree a one-dimensional
// quadrature over the branch point's location gives it too.
//
// EP is an approximation; its error on these problems, measured, is at
// most 0.0013 in log p for σ² = 1 and 0.0085 for σ² = 4 (strong
// correlation between leaves); the test allows 0.003 and 0.015.
func TestEPLogLikExact(t *testing.T) {
	trees := []string{
		"(1:0.5,2:0.5):0.5;",
		"(1:0.1,2:0.1):0.9;",
		"((1:0.2,2:0.2):0.4,3:0.6):0.4;",
		"(1:0.3,2:0.3,3:0.3):0.7;",
	}
	worst := map[float64]float64{}
	for _, nwk := range trees {
		tr, err := pydt.ParseNewick(nwk, nil)
		if err != nil {
			t.Fatal(err)
		}
		n := tr.NumLeaves()
		for _, s2 := range []float64{1, 4} {
			cov := make([][]float64, n)
			for i := range n {
				cov[i] = make([]float64, n)
				for j := range n {
					if i == j {
						cov[i][j] = s2 + 1
					} else {
						cov[i][j] = s2 * densetest.LCATime(tr, pydt.NodeID(i), pydt.NodeID(j)).T()
					}
				}
			}
			for pat := range 1 << n {
				y := make([]float64, n)
				sign := make([]float64, n)
				for i := range n {
					y[i], sign[i] = float64(pat>>i&1), float64(2*(pat>>i&1)-1)
				}
				want := math.Log(orthant(cov, sign))
				if tr.NumInternal() == 1 {
					// One branch point at t: given its location x, the
					// leaves are independent, u_i ~ N(x, σ²(1-t) + 1).
					tb := tr.Time(tr.Root()).T()
					sx, su := math.Sqrt(s2*tb), math.Sqrt(s2*(1-tb)+1)
					q := quad.Fixed(func(x float64) float64 {
						p := math.Exp(-0.5*x*x/(sx*sx)) / (sx * math.Sqrt(2*math.Pi))
						for i := range n {
							p *= math.Exp(stdlib.LogNormCDF(sign[i] * x / su))
						}
						return p
					}, -12*sx, 12*sx, 2000, nil, 0)
					if !(math.Abs(math.Log(q)-want) <= 1e-9) {
						t.Fatalf("%s σ²=%v y=%v: orthant %v, quadrature %v", nwk, s2, y, want, math.Log(q))
					}
				}
				got, err := EPLogLik(tr, s2, y, 1, Probit{})
				if err != nil {
					t.Fatal(err)
				}
				diff := math.Abs(got - want)
				worst[s2] = math.Max(worst[s2], diff)
				tol := 0.003
				if s2 > 1 {
					tol = 0.015
				}
				if !(diff <= tol) {
					t.Errorf("%s σ²=%v y=%v: EP log p = %v, exact %v", nwk, s2, y, got, want)
				}
			}
		}
	}
	t.Logf("largest |EP - exact| in log p: %v", worst)
}

// probitFixture draws a tree and binary data y = 1{x + ε > 0} from the
// PYDT, with a fraction of values missing.
func probitFixture(t testing.TB, seed uint64, n, d int, s2 float64) (*pydt.Tree, []float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 79))
	tr, x, err := sim.Draw(rng, n, sim.Params{Alpha: 1, Beta: 0.2, Div: pydt.DivInv{C: 1}, Variance: s2, Dims: d})
	if err != nil {
		t.Fatal(err)
	}
	y := make([]float64, n*d)
	for i := range y {
		if x[i]+rng.NormFloat64() > 0 {
			y[i] = 1
		}
		if rng.IntN(10) == 0 {
			y[i] = math.NaN()
		}
	}
	return tr, y
}

// TestEPConverges runs EP on random probit trees: it must converge, a
// second Fit from the converged sites must stop at once with the same
// estimate, and the moments of every site's tilted distribution must match
// its marginal (the EP fixed-point condition).
func TestEPConverges(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		n, d := 10*int(seed), 1+int(seed)%3
		s2 := []float64{0.5, 1, 3, 8}[seed-1]
		tr, y := probitFixture(t, seed, n, d, s2)
		ep, err := NewEP(Probit{}, y, n, d)
		if err != nil {
			t.Fatal(err)
		}
		m := bp.New(tr, d)
		if err := m.SetVariance(s2); err != nil {
			t.Fatal(err)
		}
		c1, err := ep.Fit(m)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		ll1, sweeps := m.LogLik()+c1, ep.Sweeps()
		c2, err := ep.Fit(m)
		if err != nil {
			t.Fatal(err)
		}
		if ll2 := m.LogLik() + c2; ep.Sweeps() != 1 || !(math.Abs(ll2-ll1) <= 1e-7) {
			t.Errorf("seed %d: refit took %d sweeps, estimate %v then %v", seed, ep.Sweeps(), ll1, ll2)
		}
		mean, vari := make([]float64, tr.Cap()*d), make([]float64, tr.Cap()*d)
		if err := m.Marginals(mean, vari); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			for k := range d {
				j := i*d + k
				if math.IsNaN(y[j]) {
					continue
				}
				cm, cv, ok := ep.cavity(j, mean[j], vari[j])
				if !ok {
					t.Fatalf("improper cavity at %d", j)
				}
				_, tm, tv, _ := Probit{}.Tilted(j, y[j], cm, cv)
				if !(math.Abs(tm-mean[j]) <= 1e-6*(1+math.Abs(tm))) || !(math.Abs(tv-vari[j]) <= 1e-6*tv) {
					t.Errorf("seed %d site %d: tilted (%v, %v), marginal (%v, %v)", seed, j, tm, tv, mean[j], vari[j])
				}
			}
		}
		t.Logf("seed %d N %d D %d σ² %v: %d sweeps, log p ≈ %v", seed, n, d, s2, sweeps, ll1)
	}
}

func TestEPErrors(t *testing.T) {
	tr, y := probitFixture(t, 1, 5, 1, 1)
	if _, err := NewEP(Probit{}, y[:3], 5, 1); err == nil {
		t.Error("short data accepted")
	}
	y[2] = 0.5
	if _, err := EPLogLik(tr, 1, y, 1, Probit{}); err == nil {
		t.Error("y = 0.5 accepted")
	}
	y[2] = 1
	if _, err := EPLogLik(tr, -1, y, 1, Probit{}); err == nil {
		t.Error("negative variance accepted")
	}
	ep, _ := NewEP(Probit{}, y, 5, 1)
	ep.MaxIter = 1
	ep.Tol = 1e-300
	m := bp.New(tr, 1)
	if _, err := ep.Fit(m); !errors.Is(err, ErrNotConverged) {
		t.Errorf("Fit with one sweep: %v, want ErrNotConverged", err)
	}
}

// TestEMWithEP runs EM with EP sites on probit data: every E-step's EP
// converges and the fit ends on a valid tree with a finite objective.
func TestEMWithEP(t *testing.T) {
	for seed := uint64(1); seed <= 2; seed++ {
		n, d := 15, 3
		tr, y := probitFixture(t, seed, n, d, 2)
		ep, err := NewEP(Probit{}, y, n, d)
		if err != nil {
			t.Fatal(err)
		}
		m := bp.New(tr, d)
		opt := learnAll()
		opt.EP = ep
		opt.MaxIter = 30
		e, err := New(m, opt)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Run(); err != nil {
			t.Fatal(err)
		}
		if err := tr.Validate(); err != nil {
			t.Fatal(err)
		}
		for _, l := range e.Trace() {
			if math.IsNaN(l) || math.IsInf(l, 0) {
				t.Fatalf("seed %d: objective %v in trace %v", seed, l, e.Trace())
			}
		}
		t.Log(fmt.Sprintf("seed %d: %d iterations, L = %v, E[c] = %v, σ² = %v, α = %v, β = %v",
			seed, e.Iterations(), e.Bound(), e.MeanC(), e.MeanVariance(), e.Alpha(), e.Beta()))
	}
}
