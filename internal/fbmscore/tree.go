package main

import (
	"fmt"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
)

// buildTree returns the tree of an fbm state with n cases: fbm's case i
// (1 … n) is leaf i-1 (the data's row i-1), its non-terminal node -j a
// branch point at time Divt[j-1]. It returns an error, not a panic, if the
// parents do not form one binary tree over the cases with times increasing
// from the root down.
func buildTree(s *state, n int) (*pydt.Tree, error) {
	if n < 2 || len(s.Parents) != 2*n || len(s.Divt) != n-1 {
		return nil, fmt.Errorf("iteration %d: %w (%d parents, %d times for %d cases)", s.Index, errNotTree, len(s.Parents), len(s.Divt), n)
	}
	tr := pydt.New(n)
	id := make([]pydt.NodeID, n) // id[j] is the branch point of fbm's node -j
	for j := 1; j < n; j++ {
		t := s.Divt[j-1]
		if !(t > 0 && t < 1) {
			return nil, fmt.Errorf("iteration %d: node -%d has divergence time %g, not in (0, 1)", s.Index, j, t)
		}
		id[j] = tr.NewInternal(pydt.TimeAt(t))
	}
	node := func(k int) pydt.NodeID { // fbm node k ≠ 0
		if k > 0 {
			return pydt.NodeID(k - 1)
		}
		return id[-k]
	}
	kids := make([]int, n)
	root := 0
	for slot, p := range s.Parents {
		k := slot - (n - 1) // the fbm node whose parent this is
		if k == 0 {
			continue
		}
		switch {
		case p == 0:
			if k > 0 || root != 0 {
				return nil, fmt.Errorf("iteration %d: %w (node %d has no parent)", s.Index, errNotTree, k)
			}
			root = k
			continue
		case p > 0 || int(-p) >= n || int(-p) == -k:
			return nil, fmt.Errorf("iteration %d: %w (node %d has parent %d)", s.Index, errNotTree, k, p)
		}
		if kids[-p]++; kids[-p] > 2 {
			return nil, fmt.Errorf("iteration %d: %w (node %d has more than two children)", s.Index, errNotTree, p)
		}
		tr.AddChild(id[-p], node(k))
	}
	if root == 0 {
		return nil, fmt.Errorf("iteration %d: %w (no root)", s.Index, errNotTree)
	}
	tr.SetRoot(node(root))
	tr.Recount()
	if tr.Count(tr.Root()) != n {
		return nil, fmt.Errorf("iteration %d: %w (the root has %d cases below it, want %d)", s.Index, errNotTree, tr.Count(tr.Root()), n)
	}
	if err := tr.Validate(); err != nil {
		return nil, fmt.Errorf("iteration %d: %w", s.Index, err)
	}
	return tr, nil
}

// logLik returns log p(X | tree, σ²) with the locations of the branch
// points integrated out (bp.Model.LogLik: the root's location starts at the
// origin at t = 0, as in fbm and in pydtlang's PYDT), for x the n×d data,
// row-major.
func logLik(tr *pydt.Tree, x []float64, d int, sigma2 float64) (float64, error) {
	m := bp.New(tr, d)
	if err := m.SetVariance(sigma2); err != nil {
		return 0, err
	}
	if err := m.ObserveMatrix(x); err != nil {
		return 0, err
	}
	if err := m.Recompute(); err != nil {
		return 0, err
	}
	return m.LogLik(), nil
}
