package stdlib

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// Dirichlet is the node type Dirichlet(a): a probability vector of length
// K (positive components summing to 1) with density
// Γ(Σa) / ΠΓ(a_j) · Π x_j^(a_j−1). The concentration a is a vector of
// length K or one positive value shared by every component.
type Dirichlet struct{}

func init() { builtin(Dirichlet{}) }

var dirichletParams = []Param{
	{Name: "a", Support: Positive, Vector: true, Broadcast: true, Doc: "concentration > 0: a vector of length K, or one value for every component"},
}

// Name returns "Dirichlet".
func (Dirichlet) Name() string { return "Dirichlet" }

// Doc describes the type.
func (Dirichlet) Doc() string {
	return "Dirichlet(a): a probability vector of length K (a vector variable or a matrix row); a is a vector of length K or one value for all."
}

// Params is the concentration a.
func (Dirichlet) Params() []Param { return dirichletParams }

// Support is that of each component: (0, 1).
func (Dirichlet) Support() Support { return Unit }

// VectorValue reports true: the value is a vector.
func (Dirichlet) VectorValue() bool { return true }

// CheckVector checks that a has length k (or 1) and positive finite
// components, and that k >= 1.
func (Dirichlet) CheckVector(p [][]float64, k int) error {
	if len(p) != 1 {
		return fmt.Errorf("Dirichlet takes 1 parameter, got %d", len(p))
	}
	if k < 1 {
		return fmt.Errorf("Dirichlet: a vector of length %d", k)
	}
	if a := p[0]; len(a) != 1 && len(a) != k {
		return fmt.Errorf("Dirichlet parameter a has length %d but the value has length %d", len(a), k)
	}
	for j, a := range p[0] {
		if !Positive.Contains(a) {
			return fmt.Errorf("Dirichlet parameter a[%d] = %v is outside its support, %v", j+1, a, Positive)
		}
	}
	return nil
}

// Concentration implements DirichletPrior.
func (Dirichlet) Concentration(p [][]float64, j int) float64 { return at(p[0], j) }

// LogProbVector is the log density of x; -Inf unless x's components are
// non-negative and sum to 1 within 1e-9 per component.
func (Dirichlet) LogProbVector(x []float64, p [][]float64) float64 {
	var sumA, sumX, lp float64
	for j, xj := range x {
		a := at(p[0], j)
		if !(xj >= 0) {
			return math.Inf(-1)
		}
		sumA += a
		sumX += xj
		lg, _ := math.Lgamma(a)
		lp -= lg
		if a != 1 { // x^0 = 1, also at x = 0 (0·log 0 would be NaN)
			lp += (a - 1) * math.Log(xj)
		}
	}
	if math.Abs(sumX-1) > 1e-9*float64(len(x)) {
		return math.Inf(-1)
	}
	lg, _ := math.Lgamma(sumA)
	return lp + lg
}

// RandVector draws x as normalised Gamma(a_j, 1) variables (gonum's
// distuv.Gamma, as gonum's distmv.Dirichlet draws).
func (Dirichlet) RandVector(rng *rand.Rand, x []float64, p [][]float64) {
	DrawDirichlet(rng, x, func(j int) float64 { return at(p[0], j) })
}

// DrawDirichlet draws x from Dirichlet(a(0), ..., a(len(x)-1)) as
// normalised Gamma(a_j, 1) draws (gonum's distuv.Gamma). A draw whose
// components all underflow to 0 (every a_j tiny) puts mass 1 on the
// component with the largest draw on the log scale instead.
func DrawDirichlet(rng *rand.Rand, x []float64, a func(j int) float64) {
	var sum float64
	for j := range x {
		x[j] = distuv.Gamma{Alpha: a(j), Beta: 1, Src: rng}.Rand()
		sum += x[j]
	}
	if sum > 0 {
		for j := range x {
			x[j] /= sum
		}
		return
	}
	// Every draw underflowed: keep the distribution's limit, one vertex,
	// chosen with probabilities proportional to a_j.
	var tot float64
	for j := range x {
		tot += a(j)
	}
	u := rng.Float64() * tot
	pick := len(x) - 1
	for j := range x {
		if u -= a(j); u < 0 {
			pick = j
			break
		}
	}
	for j := range x {
		x[j] = 0
	}
	x[pick] = 1
}
