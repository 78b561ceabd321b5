package stdlib

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/pydtlang/pydtlang/internal/logsumexp"
)

// Categorical is the node type Categorical(p): a category 1..K drawn with
// probabilities p, a probability vector of length K (a vector variable or
// a matrix row, e.g. trans[z[t - 1]]).
type Categorical struct{}

func init() { builtin(Categorical{}) }

var categoricalParams = []Param{
	{Name: "p", Support: Unit, Vector: true, Doc: "the probabilities of categories 1..K: a vector of length K, non-negative, summing to 1"},
}

// Name returns "Categorical".
func (Categorical) Name() string { return "Categorical" }

// Doc describes the type.
func (Categorical) Doc() string {
	return "Categorical(p): a category 1..K with probabilities p, a probability vector of length K."
}

// Params is the probability vector p.
func (Categorical) Params() []Param { return categoricalParams }

// Support is that of each value: a whole number (1..K, K = len(p)).
func (Categorical) Support() Support { return Count }

// VectorValue reports false: the value is one category.
func (Categorical) VectorValue() bool { return false }

// ProbsParam implements CategoryProbs: p is parameter 0.
func (Categorical) ProbsParam() int { return 0 }

// Fuse implements Fuser: Categorical(softmax(eta)) is CategoricalLogits
// with the logits eta.
func (Categorical) Fuse(param int, fn *VectorFunc) (Vector, bool) {
	if param == 0 && fn == Softmax {
		return CategoricalLogits{}, true
	}
	return nil, false
}

// probTol is the tolerance of the sum of a probability vector, per
// component.
const probTol = 1e-9

// CheckVector checks that p has length k >= 1, components in [0, 1] and
// sum 1 within 1e-9 per component.
func (Categorical) CheckVector(p [][]float64, k int) error {
	if len(p) != 1 {
		return fmt.Errorf("Categorical takes 1 parameter, got %d", len(p))
	}
	return CheckProbs(p[0], k)
}

// CheckProbs checks that p is a probability vector of length k >= 1:
// components in [0, 1] summing to 1 within 1e-9 per component.
func CheckProbs(p []float64, k int) error {
	if k < 1 || len(p) != k {
		return fmt.Errorf("Categorical parameter p has length %d, want %d >= 1", len(p), k)
	}
	var sum float64
	for j, x := range p {
		if !(x >= 0 && x <= 1) {
			return fmt.Errorf("Categorical parameter p[%d] = %v is not a probability", j+1, x)
		}
		sum += x
	}
	if math.Abs(sum-1) > probTol*float64(k) {
		return fmt.Errorf("Categorical parameter p sums to %v, not 1", sum)
	}
	return nil
}

// LogProbVector is log p[x-1] for a category x in 1..K, and -Inf for any
// other value.
func (Categorical) LogProbVector(x []float64, p [][]float64) float64 {
	c, probs := x[0], p[0]
	if c != math.Trunc(c) || c < 1 || c > float64(len(probs)) {
		return math.Inf(-1)
	}
	return math.Log(probs[int(c)-1])
}

// RandVector draws a category into x[0] by inversion of the cumulative
// probabilities.
func (Categorical) RandVector(rng *rand.Rand, x []float64, p [][]float64) {
	x[0] = float64(DrawCategory(rng, p[0]))
}

// DrawCategory draws a category 1..len(p) with probabilities p (which
// need not be normalised).
func DrawCategory(rng *rand.Rand, p []float64) int {
	var tot float64
	for _, x := range p {
		tot += x
	}
	u := rng.Float64() * tot
	for j, x := range p {
		if u -= x; u < 0 && x > 0 {
			return j + 1
		}
	}
	for j := len(p) - 1; j >= 0; j-- { // rounding: the last positive one
		if p[j] > 0 {
			return j + 1
		}
	}
	return len(p)
}

// CategoricalLogits is the node type that Categorical(softmax(eta))
// compiles to (Categorical.Fuse): a category 1..K with probabilities
// softmax(eta), eta a vector of K logits (a vector variable or a matrix
// row, e.g. eta[z[t]]). It is not registered under a name of its own: a
// model writes Categorical(softmax(eta)), and Name is "Categorical".
type CategoricalLogits struct{}

var categoricalLogitsParams = []Param{
	{Name: "eta", Support: Real, Vector: true, Doc: "the logits of categories 1..K: a vector of length K; the probabilities are softmax(eta)"},
}

// Name returns "Categorical": the type is Categorical with its
// probabilities written softmax(eta).
func (CategoricalLogits) Name() string { return "Categorical" }

// Doc describes the type.
func (CategoricalLogits) Doc() string {
	return "Categorical(softmax(eta)): a category 1..K with probabilities softmax(eta), eta a vector of K logits."
}

// Params is the logit vector eta.
func (CategoricalLogits) Params() []Param { return categoricalLogitsParams }

// Support is that of each value: a whole number (1..K, K = len(eta)).
func (CategoricalLogits) Support() Support { return Count }

// VectorValue reports false: the value is one category.
func (CategoricalLogits) VectorValue() bool { return false }

// LogitsParam implements CategoryLogits: eta is parameter 0.
func (CategoricalLogits) LogitsParam() int { return 0 }

// FuncOf reports the vector function the compiler fused into parameter
// param, for printing the statement as written: softmax at eta.
func (CategoricalLogits) FuncOf(param int) *VectorFunc {
	if param == 0 {
		return Softmax
	}
	return nil
}

// CheckVector checks that eta has length k >= 1 and finite components.
func (CategoricalLogits) CheckVector(p [][]float64, k int) error {
	if len(p) != 1 {
		return fmt.Errorf("Categorical takes 1 parameter, got %d", len(p))
	}
	if k < 1 || len(p[0]) != k {
		return fmt.Errorf("Categorical parameter softmax(eta) has length %d, want %d >= 1", len(p[0]), k)
	}
	for j, x := range p[0] {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("Categorical parameter softmax(eta): eta[%d] = %v is not finite", j+1, x)
		}
	}
	return nil
}

// LogSoftmaxNorm is log Σ_j exp(eta_j), computed stably
// (internal/logsumexp.Of): the log normaliser of softmax(eta). It is -Inf
// for an empty eta.
func LogSoftmaxNorm(eta []float64) float64 {
	return logsumexp.Of(eta)
}

// LogProbVector is eta[x-1] − log Σ exp(eta) for a category x in 1..K,
// and -Inf for any other value.
func (CategoricalLogits) LogProbVector(x []float64, p [][]float64) float64 {
	c, eta := x[0], p[0]
	if c != math.Trunc(c) || c < 1 || c > float64(len(eta)) {
		return math.Inf(-1)
	}
	return eta[int(c)-1] - LogSoftmaxNorm(eta)
}

// RandVector draws a category into x[0] with probabilities softmax(eta),
// by inversion of the cumulative probabilities: DrawCategory of the
// weights exp(eta − max eta), each computed once, in a buffer reused
// across calls (softmaxWeights).
func (CategoricalLogits) RandVector(rng *rand.Rand, x []float64, p [][]float64) {
	eta := p[0]
	m := math.Inf(-1)
	for _, e := range eta {
		m = max(m, e)
	}
	bp := softmaxWeights.Get().(*[]float64)
	w := append((*bp)[:0], eta...)
	for j, e := range w {
		w[j] = math.Exp(e - m)
	}
	// DrawCategory never draws a weight that underflowed to 0 (a logit
	// far below the largest), rounding included.
	x[0] = float64(DrawCategory(rng, w))
	*bp = w
	softmaxWeights.Put(bp)
}

// softmaxWeights holds the buffers of CategoricalLogits.RandVector, which
// may be called from several goroutines (chains) at once.
var softmaxWeights = sync.Pool{New: func() any { return new([]float64) }}
