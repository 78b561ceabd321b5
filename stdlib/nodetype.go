package stdlib

import (
	"fmt"
	"math/rand/v2"
)

// Param describes one parameter of a node type.
type Param struct {
	Name    string
	Support Support
	// Default is used when the argument is omitted; HasDefault says
	// whether there is one.
	Default    float64
	HasDefault bool
	Doc        string
	// Vector marks a parameter that is a vector (of a Vector node type):
	// a vector variable or a matrix row. Broadcast allows a single value
	// in its place, shared by every component.
	Vector, Broadcast bool
}

// NodeType is anything that may follow "~" in a model: a scalar
// distribution (Scalar), the PYDT, or a user's own type registered in a
// Library. Capabilities beyond these methods are further interfaces that
// the compiler and the inference engine find by type assertion
// (LogProber, Rander, GammaPrior, ...), never by comparing names.
type NodeType interface {
	// Name is the name a model file writes after "~".
	Name() string
	// Doc is a one-line description for the language reference.
	Doc() string
	// Params are the parameters in declaration order. The slice is
	// shared: callers must not modify it.
	Params() []Param
}

// LogProber is the log density (or log mass) of a scalar value x given the
// parameters p, in Params order and already checked with CheckParams.
type LogProber interface {
	LogProb(x float64, p []float64) float64
}

// Rander draws a scalar value given the parameters p, in Params order and
// already checked with CheckParams.
type Rander interface {
	Rand(rng *rand.Rand, p []float64) float64
}

// Scalar is an elementwise scalar node type: the type of "x ~ Name(params)"
// where x is a scalar or, inside a for-loop or elementwise, an array of
// conditionally independent scalars.
type Scalar interface {
	NodeType
	// Support is the support of each value.
	Support() Support
	// CheckParams validates parameter values: each against its
	// parameter's support (CheckSupports does that part) and any
	// combination the type requires.
	CheckParams(p []float64) error
	LogProber
	Rander
}

// LowerShape is the capability of a scalar type whose density behaves as
// (x - lo)^(a-1) near the lower end lo of its support, with a one of its
// parameters: LowerShapeParam returns that parameter's index. Gamma(shape,
// rate) and Beta(a, b) have it (index 0). The engine's propriety check
// (inference.CheckProper) uses it; a type without it is taken to have a
// density bounded away from 0 and ∞ at lo (a = 1).
type LowerShape interface {
	LowerShapeParam() int
}

// CheckSupports checks the number of parameter values against t.Params()
// and each value against its parameter's support. A Scalar's CheckParams
// usually starts with it.
func CheckSupports(t NodeType, p []float64) error {
	params := t.Params()
	if len(p) != len(params) {
		return fmt.Errorf("%s takes %d parameters, got %d", t.Name(), len(params), len(p))
	}
	for i, prm := range params {
		if !prm.Support.Contains(p[i]) {
			return fmt.Errorf("%s parameter %s = %v is outside its support, %v", t.Name(), prm.Name, p[i], prm.Support)
		}
	}
	return nil
}
