package stdlib

import (
	"fmt"
	"math"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// PYDTName is the node-type name of the Pitman-Yor diffusion tree.
const PYDTName = "PYDT"

// PYDT is the node type PYDT(alpha, beta, divergence, variance): the
// Pitman-Yor diffusion tree, a distribution over an N×D matrix of leaf
// locations whose tree is a latent part of the node. The compiler and the
// inference engine recognise it by type assertion.
type PYDT struct{}

func init() { builtin(PYDT{}) }

// Name returns PYDTName.
func (PYDT) Name() string { return PYDTName }

// Doc describes the type.
func (PYDT) Doc() string {
	return "PYDT(alpha, beta, divergence, variance): the Pitman-Yor diffusion tree over the rows of an N×D real matrix."
}

// Params returns PYDTParams; the divergence parameter may also be a
// divergence constructor call such as DivInvSq(c).
func (PYDT) Params() []Param { return PYDTParams }

// PYDTParams are the parameters of PYDT(alpha, beta, divergence, variance),
// a distribution over an N×D matrix of leaf locations whose tree is a latent
// part of the node.
var PYDTParams = []Param{
	{Name: "alpha", Support: Real, Doc: "concentration, alpha >= -2 beta; larger values give flatter trees"},
	{Name: "beta", Support: UnitLeft, Default: 0, HasDefault: true, Doc: "discount, 0 <= beta < 1; alpha = beta = 0 is Neal's Dirichlet diffusion tree"},
	{Name: "divergence", Support: Positive, Doc: "c in a(t) = c/(1-t), or a divergence function: DivInv(c), DivInvSq(c), DivNeal(c0, c1, c2)"},
	{Name: "variance", Support: Positive, Default: 1, HasDefault: true, Doc: "diffusion variance sigma^2 per unit time: a scalar, or a vector of length D (one per dimension)"},
}

// CheckPYDT validates the Pitman-Yor parameters: 0 <= beta < 1 and
// alpha >= -2 beta.
func CheckPYDT(alpha, beta float64) error {
	if !(beta >= 0 && beta < 1) {
		return fmt.Errorf("PYDT beta = %v: need 0 <= beta < 1", beta)
	}
	if !(alpha >= -2*beta) || math.IsInf(alpha, 1) {
		return fmt.Errorf("PYDT alpha = %v: need finite alpha >= -2 beta = %v", alpha, -2*beta)
	}
	return nil
}

// DivergenceType is a named divergence function constructor, such as
// DivInvSq(c).
type DivergenceType struct {
	Name   string
	Doc    string
	Params []Param
	New    func(p []float64) pydt.Divergence
	// Tail, if not nil, names the parameters that are the coefficients of
	// 1/(1-t) and of 1/(1-t)² in a(t) as t -> 1, which decide whether
	// exact duplicates make the posterior improper (inference.CheckProper
	// reads it). Nil declares nothing, and that check is not made.
	Tail *DivergenceTail
}

// DivergenceTail is the behaviour of a divergence function near t = 1,
// a(t) ≈ p[Inv]/(1-t) + p[InvSq]/(1-t)², given as parameter indices (-1:
// no such term).
type DivergenceTail struct {
	Inv, InvSq int
}

// stdDivergences are the standard library's divergence constructors.
func stdDivergences() []*DivergenceType {
	return []*DivergenceType{
		{
			Name: "DivInv", Doc: "a(t) = c/(1-t), the paper's choice and the default",
			Params: []Param{{Name: "c", Support: Positive}},
			New:    func(p []float64) pydt.Divergence { return pydt.DivInv{C: p[0]} },
			Tail:   &DivergenceTail{Inv: 0, InvSq: -1},
		},
		{
			Name: "DivInvSq", Doc: "a(t) = c/(1-t)^2, smoother densities",
			Params: []Param{{Name: "c", Support: Positive}},
			New:    func(p []float64) pydt.Divergence { return pydt.DivInvSq{C: p[0]} },
			Tail:   &DivergenceTail{Inv: -1, InvSq: 0},
		},
		{
			Name: "DivNeal", Doc: "a(t) = c0 + c1/(1-t) + c2/(1-t)^2, Neal's family; c1 + c2 > 0",
			Params: []Param{{Name: "c0", Support: NonNegative}, {Name: "c1", Support: NonNegative}, {Name: "c2", Support: NonNegative}},
			New:    func(p []float64) pydt.Divergence { return pydt.DivNeal{C0: p[0], C1: p[1], C2: p[2]} },
			Tail:   &DivergenceTail{Inv: 1, InvSq: 2},
		},
	}
}
