package graph

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Eval evaluates x in env and reports an evaluation error (an IndexError),
// wrapped with the expression, instead of a NaN. An error already recorded
// in env (see Env.Err) is reported as it is.
func Eval(x Expr, env *Env) (float64, error) {
	pending := env.err
	y := x.Eval(env)
	if err := env.failed(pending, func(err error) error { return fmt.Errorf("%s: %w", x, err) }); err != nil {
		return math.NaN(), err
	}
	return y, nil
}

// EvalDeterministic evaluates every deterministic variable of g into env,
// in dependency order. An error names the variable whose definition could
// not be evaluated; an error already recorded in env is reported as it is.
func (g *Graph) EvalDeterministic(env *Env) error {
	return EvalDeterministicVars(env, g.Deterministic)
}

// EvalDeterministicVars evaluates the deterministic variables vs into env,
// in the order given, which must evaluate each after its inputs (a
// subsequence of Graph.Deterministic does): those that an update of some
// values reads, when the others are known to be up to date. Errors are as
// EvalDeterministic's.
func EvalDeterministicVars(env *Env, vs []*Var) error {
	if env.err != nil {
		return env.err
	}
	for _, v := range vs {
		env.Values[v.ID][0] = v.Expr.Eval(env)
		if env.err != nil {
			return env.failed(nil, func(err error) error {
				return fmt.Errorf("%s: %s = %s: %w", v.Pos, v.Name, v.Expr, err)
			})
		}
	}
	return nil
}

// ForEach calls fn with the row-major offset in f.Target of every element
// that f covers, in row-major order of its loops, with the loop indices
// set in env: once with offset 0 for a factor without loops. It stops at
// the first error fn returns. An evaluation error (an IndexError) in the
// target's indices or in any expression fn evaluated with env is returned
// wrapped with the factor and the loop indices, in preference to fn's own
// error, which the NaN it gave may explain; an error already recorded in
// env is returned at once. ForEach allocates nothing unless it fails.
func (f *Factor) ForEach(env *Env, fn func(off int) error) error {
	if env.err != nil {
		return env.err
	}
	if len(f.Loops) == 0 {
		return f.visit(env, fn) // one element (at constant indices, or the whole target)
	}
	for _, l := range f.Loops {
		if l.Lo > l.Hi {
			return nil // an empty range: no elements
		}
		env.Loop[l.Slot] = l.Lo
	}
	for {
		if err := f.visit(env, fn); err != nil {
			return err
		}
		if !nextLoops(env, f.Loops) {
			return nil
		}
	}
}

// visit calls fn with the offset of the factor's element at the current
// loop position (f.Index evaluated in env, 0 without one), returning the
// error of an index or value env recorded (evalErr) before fn's own.
func (f *Factor) visit(env *Env, fn func(off int) error) error {
	off := 0
	if f.Index != nil {
		var ok bool
		if off, ok = (Elem{V: f.Target, Idx: f.Index}).offset(env); !ok {
			return f.evalErr(env)
		}
		off *= max(f.VecLen, 1)
	}
	err := fn(off)
	if env.err != nil {
		return f.evalErr(env)
	}
	return err
}

// VecArgs is scratch space for the parameters of a vector factor
// (Factor.Vector), reused across evaluations.
type VecArgs struct {
	p      [][]float64
	scalar []float64
}

// Eval evaluates the parameters of the vector factor f at the loop
// indices set in env: a view for each vector argument (Row), a single
// value for each scalar one. The slices are valid until the next call.
// An evaluation error is recorded in env and returned.
func (a *VecArgs) Eval(f *Factor, env *Env) ([][]float64, error) {
	n := len(f.Args)
	if cap(a.p) < n {
		a.p = make([][]float64, n)
		a.scalar = make([]float64, n)
	}
	p := a.p[:n]
	for i, x := range f.Args {
		if r, ok := x.(Row); ok {
			v, ok := r.view(env)
			if !ok {
				return p, env.err
			}
			p[i] = v
			continue
		}
		a.scalar[i] = x.Eval(env)
		p[i] = a.scalar[i : i+1 : i+1]
	}
	return p, env.err
}

// Value returns the value of the vector factor f's element at offset
// off (as ForEach passes it): a view of the target's VecLen values, or of
// the one value of a scalar-valued type (Categorical).
func (f *Factor) Value(env *Env, off int) []float64 {
	n := max(f.VecLen, 1)
	return env.Values[f.Target.ID][off : off+n : off+n]
}

// evalErr wraps the error just recorded in env with the factor and, inside
// loops, the loop indices at which it happened, records the result in its
// place and returns it.
func (f *Factor) evalErr(env *Env) error {
	return env.failed(nil, func(err error) error {
		if len(f.Loops) == 0 {
			return fmt.Errorf("%s: %s: %w", f.Pos, f, err)
		}
		var b strings.Builder
		if strings.HasPrefix(f.Loops[0].Name, "_") { // vectorised: an element
			b.WriteString("element [")
			for k, l := range f.Loops {
				if k > 0 {
					b.WriteString(", ")
				}
				b.WriteString(strconv.Itoa(env.Loop[l.Slot]))
			}
			b.WriteString("]")
		} else {
			for k, l := range f.Loops {
				if k > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "%s = %d", l.Name, env.Loop[l.Slot])
			}
		}
		return fmt.Errorf("%s: %s: at %s: %w", f.Pos, f, b.String(), err)
	})
}

// Positions of a PYDT factor's parameters among its Args.
const (
	// PYDTAlpha is the position of alpha.
	PYDTAlpha = 0
	// PYDTBeta is the position of beta.
	PYDTBeta = 1
	// PYDTDivergence is the position of the divergence argument (the
	// function itself is in Factor.Divergence).
	PYDTDivergence = 2
	// PYDTVariance is the position of the variance.
	PYDTVariance = 3
)

// Variances evaluates the variance argument of a PYDT factor in env for
// every dimension d into dst[d] (len(dst) must be D, the target's number
// of columns): the one value of a scalar argument in every entry, or, for
// a vector argument (DimLoop set), its element d+1. It does not check the
// values; an evaluation error is returned wrapped with the factor and the
// dimension.
func (f *Factor) Variances(env *Env, dst []float64) error {
	if !f.IsPYDT() {
		return fmt.Errorf("%s: %s is not a PYDT", f.Pos, f)
	}
	if d := f.Target.Dims[1]; len(dst) != d {
		return fmt.Errorf("%s: %d variances asked of a PYDT with %d dimensions", f.Pos, len(dst), d)
	}
	x := f.Args[PYDTVariance]
	if f.DimLoop == nil {
		y, err := Eval(x, env)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", f.Pos, f, err)
		}
		for d := range dst {
			dst[d] = y
		}
		return nil
	}
	slot := f.DimLoop.Slot
	saved := env.Loop[slot]
	defer func() { env.Loop[slot] = saved }()
	for d := range dst {
		env.Loop[slot] = d + 1
		y, err := Eval(x, env)
		if err != nil {
			return fmt.Errorf("%s: %s: variance of dimension %d: %w", f.Pos, f, d+1, err)
		}
		dst[d] = y
	}
	return nil
}

// nextLoops moves env's loop indices to the next position of loops (the
// innermost loop runs fastest) and reports false, with every index back at
// its Lo, when the last position was passed.
func nextLoops(env *Env, loops []Loop) bool {
	for k := len(loops) - 1; k >= 0; k-- {
		l := loops[k]
		if env.Loop[l.Slot] < l.Hi {
			env.Loop[l.Slot]++
			return true
		}
		env.Loop[l.Slot] = l.Lo
	}
	return false
}
