package graph

import (
	"slices"
	"sync"
)

// readerIndex is the reverse of the graph's read relation, built once when
// the graph is compiled: for every variable, the deterministic variables
// and the factors whose expressions read it directly. Readers follows it
// through deterministic variables and keeps each answer.
//
// The transitive answers are made on first use rather than for every
// variable at compile time: for a chain of k deterministic variables they
// hold k(k+1)/2 entries, which for the longest model file would not fit in
// memory, while the engine asks only about the variables it updates.
type readerIndex struct {
	dets    [][]*Var    // dets[v.ID]: deterministic variables whose Expr reads v
	factors [][]*Factor // factors[v.ID]: factors whose expressions read v
	detPos  []int       // detPos[d.ID]: d's position in Graph.Deterministic
	facPos  map[*Factor]int

	mu   sync.Mutex
	memo map[*Var]readers
}

type readers struct {
	factors []*Factor
	dets    []*Var
}

// Reads reports whether the expression x, which may be nil, reads any of
// the variables vs, in a value or in an index.
func Reads(x Expr, vs ...*Var) bool {
	if x == nil {
		return false
	}
	found := false
	x.walk(func(w *Var) {
		if !found && slices.Contains(vs, w) {
			found = true
		}
	})
	return found
}

// Exprs returns every expression of f: its parameters (Args), the
// parameters of a PYDT's divergence function, and the indices of its
// target (Index). Entries may be nil in a graph that failed to compile.
func (f *Factor) Exprs() []Expr {
	out := slices.Clone(f.Args)
	if f.Divergence != nil {
		out = append(out, f.Divergence.Args...)
	}
	return append(out, f.Index...)
}

// Reads reports whether any expression of f (see Exprs) reads any of vs.
func (f *Factor) Reads(vs ...*Var) bool {
	return slices.ContainsFunc(f.Exprs(), func(x Expr) bool { return Reads(x, vs...) })
}

// index builds the reader index of a compiled graph; order must have
// sorted Factors and Deterministic.
func (g *Graph) index() *readerIndex {
	n := len(g.Vars)
	ix := &readerIndex{
		dets:    make([][]*Var, n),
		factors: make([][]*Factor, n),
		detPos:  make([]int, n),
		facPos:  make(map[*Factor]int, len(g.Factors)),
		memo:    map[*Var]readers{},
	}
	for i, d := range g.Deterministic {
		ix.detPos[d.ID] = i
		for _, w := range Vars(d.Expr) {
			ix.dets[w.ID] = append(ix.dets[w.ID], d)
		}
	}
	for i, f := range g.Factors {
		ix.facPos[f] = i
		seen := map[*Var]bool{}
		for _, x := range f.Exprs() {
			if x == nil {
				continue
			}
			x.walk(func(w *Var) {
				if !seen[w] {
					seen[w] = true
					ix.factors[w.ID] = append(ix.factors[w.ID], f)
				}
			})
		}
	}
	return ix
}

// Readers returns the factors and the deterministic variables that read v,
// directly or through deterministic variables (in a parameter, a
// divergence parameter or an index). Factors are in the order of
// g.Factors and deterministic variables in the order of g.Deterministic.
// v's own factor (v.Def) is not listed, even when an elementwise factor
// such as x[t] ~ Normal(x[t-1], 1) reads other elements of v. The slices
// belong to g and must not be modified. A variable not of g has no
// readers.
func (g *Graph) Readers(v *Var) (factors []*Factor, dets []*Var) {
	if v == nil || v.ID < 0 || v.ID >= len(g.Vars) || g.Vars[v.ID] != v {
		return nil, nil
	}
	ix := g.readers
	if ix == nil { // a Graph not made by Compile: answer without keeping
		ix = g.index()
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	r, ok := ix.memo[v]
	if !ok {
		r = ix.closure(v)
		ix.memo[v] = r
	}
	return r.factors[:len(r.factors):len(r.factors)], r.dets[:len(r.dets):len(r.dets)]
}

// closure follows the index from v through deterministic variables.
func (ix *readerIndex) closure(v *Var) readers {
	var r readers
	seenV := map[*Var]bool{v: true}
	seenF := map[*Factor]bool{}
	stack := []*Var{v}
	for len(stack) > 0 {
		w := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, f := range ix.factors[w.ID] {
			if f.Target != v && !seenF[f] {
				seenF[f] = true
				r.factors = append(r.factors, f)
			}
		}
		for _, d := range ix.dets[w.ID] {
			if !seenV[d] {
				seenV[d] = true
				r.dets = append(r.dets, d)
				stack = append(stack, d)
			}
		}
	}
	slices.SortFunc(r.dets, func(a, b *Var) int { return ix.detPos[a.ID] - ix.detPos[b.ID] })
	slices.SortFunc(r.factors, func(a, b *Factor) int { return ix.facPos[a] - ix.facPos[b] })
	return r
}
