// Package graph compiles a parsed model (package lang) into a typed factor
// graph: variables with shapes, supports and roles (constant, observed,
// clamped, latent, deterministic), and factors that tie each stochastic
// variable to the distribution and parameter expressions that define it.
//
// Compilation resolves names (with "did you mean" hints), binds dimensions
// from data files and --set values, checks types and supports at compile
// time (naming the offending data row and column), separates observed from
// latent variables, and rejects cycles. Every error is reported, with its
// position, not just the first. CompileProgram checks a model without data
// and Program.Bind binds it, as often as needed; Compile does both.
//
// A compiled Graph is queryable: Readers lists the factors and
// deterministic variables that read a variable. Expressions are evaluated
// in an Env; evaluation never panics: a bad index is an error, reported by
// Eval, (*Factor).ForEach and (*Graph).EvalDeterministic.
package graph

import (
	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/lang"
	"github.com/pydtlang/pydtlang/stdlib"
)

// Role says where a variable's value comes from.
type Role int

// The roles of variables.
const (
	// Constant: a const declaration or a bound dimension.
	Constant Role = iota
	// Observed: a data variable bound to a file. Entries may be missing
	// (NaN); they are then latent and marginalised or imputed.
	Observed
	// Clamped: a stochastic variable fixed to a value with --set.
	Clamped
	// Latent: a stochastic variable inference must sample.
	Latent
	// Deterministic: a function of other variables, defined with "=".
	Deterministic
)

var roleNames = [...]string{"constant", "observed", "clamped", "latent", "deterministic"}

func (r Role) String() string { return roleNames[r] }

// Var is a variable of the model.
type Var struct {
	ID      int // index into Graph.Vars and Env.Values
	Name    string
	Pos     lang.Position
	Kind    lang.Kind
	Support stdlib.Support
	Dims    []int // nil for a scalar
	Role    Role
	// Value holds the fixed values of constant, observed and clamped
	// variables, row-major; missing data are NaN.
	Value []float64
	// Data is the file an observed variable was read from.
	Data *dataset.Matrix
	// Def is the factor that defines a stochastic variable: the first of
	// Defs.
	Def *Factor
	// Defs are the factors that define it, in statement order: one, or
	// several for an array defined part by part (z[1] ~ ... and z[t] ~ ...
	// for t in 2:T), which together cover each element exactly once.
	Defs []*Factor
	// Categories is K for a variable declared categorical(K): its values
	// are the categories 1..K. 0 otherwise.
	Categories int
	// Expr defines a deterministic variable.
	Expr Expr
	// Declared is set for variables introduced by data or param.
	Declared bool
	// IsData is set for variables declared with data, bound or not.
	IsData bool
}

// Len returns the number of scalar elements of v.
func (v *Var) Len() int {
	n := 1
	for _, d := range v.Dims {
		n *= d
	}
	return n
}

// Scalar reports whether v is a scalar.
func (v *Var) Scalar() bool { return len(v.Dims) == 0 }

// Loop is one index of a plate: Name runs over Lo..Hi inclusive.
type Loop struct {
	Name   string
	Slot   int
	Lo, Hi int
	// unknown is set when a bound is unknown (an unbound dimension in
	// partial mode, or an invalid bound, reported): Lo..Hi is then 1..-1.
	unknown bool
}

// Factor ties a stochastic variable to its distribution.
type Factor struct {
	Pos    lang.Position
	Target *Var
	// Type is the node type: a stdlib.Scalar, or stdlib.PYDT.
	Type stdlib.NodeType
	// Args are the distribution's parameters in declaration order, with
	// defaults filled in. For the PYDT: alpha, beta, divergence (the c of
	// c/(1-t) when Divergence is nil), variance.
	Args []Expr
	// Divergence is the PYDT's divergence function when given by a
	// constructor such as DivInvSq(c); its Args are then its parameters.
	Divergence *DivergenceExpr
	// Loops is the plate over which an elementwise factor applies.
	Loops []Loop
	// Index gives the target element for each plate position; nil means
	// the whole (scalar or matrix) target, or elementwise without loops.
	Index []Expr
	// Elementwise is set when the factor applies to every element of an
	// array target independently. A factor that covers part of its target
	// (one of several statements defining it) has Index set but not
	// Elementwise.
	Elementwise bool
	// VecLen is, for a node type whose value is a vector (a
	// stdlib.Vector with VectorValue, such as Dirichlet), the length of
	// that vector: the target's last dimension. Index then gives the
	// target's leading indices (a row), and ForEach the offset of the
	// row's first element. 0 for every other factor.
	VecLen int
	// DimLoop is set for a PYDT whose variance argument is a vector of
	// length D, one diffusion variance per dimension (e.g. 1 / prec with
	// prec : positive[D]): the argument's array references are then
	// elements indexed by this loop over the dimensions 1..D, and the
	// argument is evaluated by Variances, never by Eval alone. Nil when the
	// variance is one scalar shared by every dimension.
	DimLoop *Loop
	// Omitted is set for the factor of a scalar clamped with --set to a
	// value outside its distribution's support (alpha = 0 under a Gamma
	// prior, for Neal's DDT): the value need only be valid for the factors
	// that read it, and this factor is not evaluated; it adds nothing to
	// the joint density. Its parameters are then all fixed.
	Omitted bool

	// meta is what Program.Bind needs of the factor's source (nil
	// outside CompileProgram).
	meta *factorMeta
}

// IsPYDT reports whether f is a PYDT factor.
func (f *Factor) IsPYDT() bool {
	_, ok := f.Type.(stdlib.PYDT)
	return ok
}

// Scalar returns f's node type when it is an elementwise scalar
// distribution.
func (f *Factor) Scalar() (stdlib.Scalar, bool) {
	s, ok := f.Type.(stdlib.Scalar)
	return s, ok
}

// Vector returns f's node type when it is a vector node type
// (stdlib.Vector: Categorical, Dirichlet).
func (f *Factor) Vector() (stdlib.Vector, bool) {
	v, ok := f.Type.(stdlib.Vector)
	return v, ok
}

// TypeName is the node type's name.
func (f *Factor) TypeName() string { return f.Type.Name() }

// DivergenceExpr is a divergence-function constructor applied to
// parameter expressions.
type DivergenceExpr struct {
	Type *stdlib.DivergenceType
	Args []Expr
}

// Graph is a compiled model.
type Graph struct {
	File *lang.File
	Vars []*Var
	// ByName finds variables, constants and dimensions by name.
	ByName map[string]*Var
	// Dims lists the dimension variables in declaration order.
	Dims []*Var
	// Factors are in an order in which every factor's parameters are
	// defined before it (a topological order).
	Factors []*Factor
	// Deterministic variables in an order that evaluates each after its
	// inputs.
	Deterministic []*Var
	// Trees are the PYDT factors, in statement order.
	Trees []*Factor
	// PYDT is Trees[0], the model's first tree factor, or nil.
	PYDT *Factor

	maxLoops int
	readers  *readerIndex // see Readers
}

// Lookup returns the variable called name.
func (g *Graph) Lookup(name string) (*Var, bool) {
	v, ok := g.ByName[name]
	return v, ok
}
