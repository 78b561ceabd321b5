package pydt

// Linear is the capability of a divergence function that is a multiple of
// a fixed function of t, a(t) = C·u(t), C its only parameter: the PYDT
// prior is then, in C, C^|I| exp(−C·S) with S = CStatsFor's sum for the
// unit function u, so a Gamma prior on C is conjugate (the engine's
// gibbs(c) update). Unit returns u, the function with C = 1.
type Linear interface {
	Divergence
	Unit() Divergence
}

// Unit returns 1/(1-t): DivInv is Linear.
func (DivInv) Unit() Divergence { return DivInv{C: 1} }

// Unit returns 1/(1-t)²: DivInvSq is Linear.
func (DivInvSq) Unit() Divergence { return DivInvSq{C: 1} }
