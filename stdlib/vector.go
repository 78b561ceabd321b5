package stdlib

import (
	"math/rand/v2"
)

// Vector is a node type whose value or parameters are vectors, as Scalar
// is for elementwise scalar types: Dirichlet(a), whose value is a
// probability vector (the whole of a vector variable, pi ~ Dirichlet(1), or
// a row of a matrix, trans[k] ~ Dirichlet(1)), and Categorical(p), whose
// value is one category and whose parameter is a probability vector.
//
// Parameter values are passed as p[i], one slice per parameter in Params
// order: for a parameter marked Param.Vector the vector itself (a view of
// the variable's values, never a copy), or a single value where the model
// wrote a scalar and the parameter allows it (Param.Broadcast: the value
// is then shared by every component); for other parameters a single
// value. x is the value: a vector for a VectorValue type, else a single
// value. The vectors' common length k is passed to CheckVector.
type Vector interface {
	NodeType
	// Support is the support of each element of the value.
	Support() Support
	// VectorValue reports whether the value is a vector (its length that
	// of the target's last dimension) rather than a single value.
	VectorValue() bool
	// CheckVector validates parameter values for vectors of length k.
	CheckVector(p [][]float64, k int) error
	// LogProbVector is the log density (or mass) of x, given parameters
	// checked with CheckVector.
	LogProbVector(x []float64, p [][]float64) float64
	// RandVector draws a value into x (of length 1 for a single value).
	RandVector(rng *rand.Rand, x []float64, p [][]float64)
}

// CategoryProbs is the capability of a type whose value is a category
// 1..K drawn with the probabilities of one vector parameter
// (Categorical): ProbsParam returns that parameter's index. The engine
// uses it for forward-filtering backward-sampling of a Markov chain over
// categories and for conjugate Dirichlet updates from counts.
type CategoryProbs interface {
	Vector
	ProbsParam() int
}

// DirichletPrior is the capability of a type whose value is a probability
// vector with a Dirichlet density (Dirichlet): Concentration returns the
// concentration of component j (0-based) of a vector of length k given the
// parameters. It is a conjugate prior for the probability vector of
// CategoryProbs readers: given counts n_j, the conditional is
// Dirichlet(a_j + n_j).
type DirichletPrior interface {
	Vector
	Concentration(p [][]float64, j int) float64
}

// at returns element j of a parameter given as a vector or broadcast from
// a single value.
func at(v []float64, j int) float64 {
	if len(v) == 1 {
		return v[0]
	}
	return v[j]
}

// CategoryLogits is the capability of a type whose value is a category
// 1..K drawn with probabilities softmax(η), η the vector parameter
// LogitsParam (the logits, any real numbers): Categorical(softmax(eta)),
// the form the compiler makes of Categorical(p) with p written softmax(η)
// (see Fuser). The log mass of category c is η_c − log Σ_j exp(η_j), so
// the engine may compute the normaliser once per vector and sweep rather
// than once per datum (ffbs emissions, the log density of the data), and
// a PYDT whose leaves are the logits takes the counts of the categories
// each leaf row emits (the exact softmax-leaf update, stdlib/softmaxleaf).
type CategoryLogits interface {
	Vector
	LogitsParam() int
}

// VectorFunc is a function from a vector to a vector that a model may
// apply to a vector argument of a node type: softmax(eta[k]). It has no
// value of its own in an expression: a node type that accepts it at a
// parameter says so by implementing Fuser, and the compiler replaces the
// statement's node type with the fused one, which reads the function's
// argument directly (no vector is computed per datum).
type VectorFunc struct {
	Name string
	// Doc is one line for the language reference.
	Doc string
}

// Softmax is the vector function softmax(η)_j = exp(η_j) / Σ_i exp(η_i):
// a probability vector from a vector of logits.
var Softmax = &VectorFunc{Name: "softmax", Doc: "softmax(v): the probability vector exp(v_j) / Σ_i exp(v_i) of a vector of logits v"}

// Fuser is the capability of a vector node type that accepts a vector
// function at one of its vector parameters: Fuse returns the node type
// that takes the function's argument there instead (Categorical with
// softmax at p gives CategoricalLogits), or false when it does not accept
// fn at parameter param.
type Fuser interface {
	Vector
	Fuse(param int, fn *VectorFunc) (Vector, bool)
}

// FusedFunc is implemented by a node type that a Fuser returned: FuncOf
// returns the vector function fused into parameter param (to print the
// statement as written, Categorical(softmax(eta[k]))), or nil.
type FusedFunc interface {
	FuncOf(param int) *VectorFunc
}
