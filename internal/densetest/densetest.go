// Package densetest holds the dense form of the PYDT's diffusion on a
// fixed tree, the independent answer that tests of belief propagation, the
// samplers and the plots compare with: the locations of any nodes are
// jointly Gaussian with mean 0 and Cov(x_u, x_v) = σ² t(lca(u, v)) in each
// dimension (a leaf's time is 1, so Var x_i = σ² at a leaf). It shares no
// code with package bp; tests use it in place of their own copies.
package densetest

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// LCA returns the lowest common ancestor of the nodes u and v of tr: u
// itself when u = v or u is an ancestor of v. It panics if u and v are not
// in one tree (a bug in the calling test).
func LCA(tr *pydt.Tree, u, v pydt.NodeID) pydt.NodeID {
	u0, v0 := u, v
	du, dv := tr.Depth(u), tr.Depth(v)
	for du > dv {
		u, du = tr.Parent(u), du-1
	}
	for dv > du {
		v, dv = tr.Parent(v), dv-1
	}
	for u != v {
		u, v = tr.Parent(u), tr.Parent(v)
		if u == pydt.NoNode || v == pydt.NoNode {
			panic(fmt.Sprintf("densetest: nodes %d and %d have no common ancestor", u0, v0))
		}
	}
	return u
}

// LCATime returns the divergence time of the lowest common ancestor of u
// and v (LCA): 1 for u = v a leaf.
func LCATime(tr *pydt.Tree, u, v pydt.NodeID) pydt.Time {
	return tr.Time(LCA(tr, u, v))
}

// Cov returns the covariance, in one dimension with variance s2, of the
// locations of nodes: s2 t(lca(nodes[i], nodes[j])), plus noise[i] on the
// diagonal when noise is not nil (independent noise of the observations).
func Cov(tr *pydt.Tree, s2 float64, nodes []pydt.NodeID, noise []float64) *mat.SymDense {
	k := len(nodes)
	c := mat.NewSymDense(k, nil)
	for i := range k {
		for j := i; j < k; j++ {
			v := s2 * LCATime(tr, nodes[i], nodes[j]).T()
			if i == j && noise != nil {
				v += noise[i]
			}
			c.SetSym(i, j, v)
		}
	}
	return c
}

// CrossCov returns the matrix s2 t(lca(as[i], bs[j])): the covariance, in
// one dimension with variance s2, of the locations of as with those of bs.
func CrossCov(tr *pydt.Tree, s2 float64, as, bs []pydt.NodeID) *mat.Dense {
	c := mat.NewDense(len(as), len(bs), nil)
	for i, a := range as {
		for j, b := range bs {
			c.Set(i, j, s2*LCATime(tr, a, b).T())
		}
	}
	return c
}
