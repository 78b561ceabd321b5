package graph

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// coverage checks the statements that define each array: one statement
// must cover every element (its pending error, if any, is reported); several
// statements (z[1] ~ ... and z[t] ~ ... for t in 2:T) must each index the
// array with loop indices and constants, and together cover every element
// (every row, for a vector-valued type) exactly once. An element that
// reads other elements of its own array must read only earlier ones, in
// row-major order, at indices fixed by loop indices and constants, so
// that the array can be drawn element by element.
func (c *compiler) coverage() {
	for _, v := range c.g.Vars {
		switch {
		case len(v.Defs) == 0:
			continue
		case len(v.Defs) == 1:
			if p, ok := c.pending[v.Defs[0]]; ok {
				c.errs.Add(p.pos, p.msg)
				continue
			}
		default:
			if !c.coverSeveral(v) {
				continue
			}
		}
		c.earlier(v)
	}
}

// staticEnv returns an Env in which the expressions that read only
// constants and loop indices can be evaluated at compile time.
func (c *compiler) staticEnv() *Env {
	env := &Env{Values: make([][]float64, len(c.g.Vars)), Loop: make([]int, max(c.g.maxLoops, 1))}
	for _, v := range c.g.Vars {
		if v.Role == Constant && v.Value != nil {
			env.Values[v.ID] = v.Value
		}
	}
	return env
}

// static reports whether x reads only constants (with known values) and
// loop indices.
func static(x Expr) bool {
	ok := true
	x.walk(func(v *Var) {
		if v.Role != Constant || v.Value == nil {
			ok = false
		}
	})
	return ok
}

// known reports whether v's shape and f's loop bounds are all known, so
// that the elements f covers can be enumerated.
func known(v *Var, f *Factor) bool {
	return !slices.ContainsFunc(v.Dims, func(d int) bool { return d < 0 }) &&
		!slices.ContainsFunc(f.Loops, func(l Loop) bool { return l.unknown })
}

// coverSeveral checks that the statements defining v cover each of its
// elements (rows) exactly once. It reports false after an error.
func (c *compiler) coverSeveral(v *Var) bool {
	for _, f := range v.Defs {
		if f.Index == nil || f.Args == nil || !known(v, f) || c.badLoops {
			return false // reported, or unknown without data
		}
		for _, ix := range f.Index {
			if !static(ix) {
				c.errs.Addf(f.Pos, "%s is defined by several statements, so each indexes it with loop indices and constants only; %s reads a variable", v.Name, ix)
				return false
			}
		}
	}
	unit := max(v.Defs[0].VecLen, 1)
	by := make([]int32, v.Len()/unit) // 1 + the index in Defs of the statement covering each element
	env := c.staticEnv()
	for k, f := range v.Defs {
		err := f.ForEach(env, func(off int) error {
			i := off / unit
			if by[i] != 0 {
				prev := v.Defs[by[i]-1]
				return fmt.Errorf("%s is given a distribution twice: here and at %s; the statements defining %s must cover each element exactly once",
					elemName(v, i, unit), shortPos(prev.Pos), v.Name)
			}
			by[i] = int32(k + 1)
			return nil
		})
		if err != nil {
			c.errs.Add(f.Pos, stripPos(err, f).Error())
			return false
		}
	}
	if i := slices.Index(by, 0); i >= 0 {
		var at []string
		for _, f := range v.Defs {
			at = append(at, shortPos(f.Pos))
		}
		c.errs.Addf(v.Defs[0].Pos, "%s has no distribution: the statements defining %s (at %s) must cover each element exactly once",
			elemName(v, i, unit), v.Name, strings.Join(at, ", "))
		return false
	}
	return true
}

// stripPos returns err without the position and factor that ForEach
// prefixes, since the diagnostic carries the position.
func stripPos(err error, f *Factor) error {
	prefix := fmt.Sprintf("%s: %s: ", f.Pos, f)
	if msg := err.Error(); strings.HasPrefix(msg, prefix) {
		return fmt.Errorf("%s", strings.TrimPrefix(msg, prefix))
	}
	return err
}

// elemName names element i (counted in units of unit values: rows of a
// vector-valued type) of v in 1-based indexing: z[3], trans[2].
func elemName(v *Var, i, unit int) string {
	dims := v.Dims
	if unit > 1 {
		dims = dims[:len(dims)-1]
	}
	if len(dims) == 0 {
		return v.Name
	}
	idx := make([]string, len(dims))
	for k := len(dims) - 1; k >= 0; k-- {
		idx[k] = fmt.Sprint(i%dims[k] + 1)
		i /= dims[k]
	}
	return v.Name + "[" + strings.Join(idx, ", ") + "]"
}

// earlier checks that each element of v reads only earlier elements of v
// (row-major), at indices fixed at compile time by loop indices and
// constants: z[t] ~ Categorical(trans[z[t - 1]]) reads z[t - 1].
func (c *compiler) earlier(v *Var) {
	for _, f := range v.Defs {
		var reads []Expr // the expressions of f that read v
		for _, a := range f.Args {
			if a == nil {
				continue
			}
			inspect(a, func(x Expr) {
				switch x := x.(type) {
				case Elem:
					if x.V == v {
						reads = append(reads, x)
					}
				case Row:
					if x.V == v {
						reads = append(reads, x)
					}
				case Ref:
					if x.V == v {
						reads = append(reads, x)
					}
				}
			})
		}
		if len(reads) == 0 {
			continue
		}
		if f.Index == nil {
			c.errs.Addf(f.Pos, "%s ~ %s reads %s itself", v.Name, f.TypeName(), v.Name)
			continue
		}
		if !known(v, f) {
			continue
		}
		for _, r := range reads {
			var idx []Expr
			switch r := r.(type) {
			case Elem:
				idx = r.Idx
			case Row:
				idx = r.Idx
			}
			if _, whole := r.(Ref); whole || slices.ContainsFunc(idx, func(x Expr) bool { return !static(x) }) {
				c.errs.Addf(f.Pos, "%s reads %s, an element of its own array at an index that is not fixed by loop indices and constants; an element may read only earlier elements, such as %s[t - 1]", f, r, v.Name)
				return
			}
		}
		env := c.staticEnv()
		err := f.ForEach(env, func(off int) error {
			for _, r := range reads {
				var at int
				var err error
				switch r := r.(type) {
				case Elem:
					at, err = r.Offset(env)
				case Row:
					at, err = r.Offset(env)
				}
				if err != nil {
					return err
				}
				if at >= off {
					return fmt.Errorf("%s reads %s, which is not an earlier element: an element may read only earlier elements of its array (row-major order), so that it can be drawn after them", elemName(v, off/max(f.VecLen, 1), max(f.VecLen, 1)), r)
				}
			}
			return nil
		})
		if err != nil {
			c.errs.Add(f.Pos, stripPos(err, f).Error())
			return
		}
	}
}

// checkCategories checks the observed values of a categorical(K)
// variable: each a category 1..K.
func (c *compiler) checkCategories(v *Var) {
	m, K := v.Data, v.Categories
	bad := 0
	for i := 0; i < m.Rows; i++ {
		for j := 0; j < m.Cols; j++ {
			x := m.At(i, j)
			if math.IsNaN(x) || x >= 1 && x <= float64(K) && x == math.Trunc(x) {
				continue
			}
			if bad++; bad <= 3 {
				c.errs.Addf(DataPos(v.Name), "%s: %v is not a valid value of %s (declared categorical(%d)): it must be a category from 1 to %d", m.Where(i, j), x, v.Name, K, K)
			}
		}
	}
	if bad > 3 {
		c.errs.Addf(DataPos(v.Name), "%s: %d more invalid values in %s", m.Source, bad-3, v.Name)
	}
}
