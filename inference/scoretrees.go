package inference

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/internal/bounded"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// MatchTree checks that a tree read with the model's row labels (m.Labels,
// as ParseNewick and ForEachNewick take them) has the data's rows as its
// leaves (pydt.Tree.MatchRows).
func (m *Model) MatchTree(tr *pydt.Tree) error {
	if err := m.needTree("matching a tree"); err != nil {
		return err
	}
	return tr.MatchRows(m.N, m.Labels, "the data "+m.Leaves.Name)
}

// ScoreTreeFile scores the trees of the Newick file at path, one per line,
// with the model's current values (Score): tree k of the file (from 1),
// when k > 0, or every tree. Each tree of the file, scored or not, must
// have the data's rows as its leaves (MatchTree) and be valid. Trees are scored as they are read, so that a large file is
// never held in memory; the file is bounded all the same
// (bounded.MaxNewickBytes).
func (m *Model) ScoreTreeFile(path string, k int) ([]Scores, error) {
	return m.ScoreTreeFileIn(path, k, nil)
}

// ScoreTreeFileIn is ScoreTreeFile with the values of env (which it does
// not change): those of latent arrays, set with SetArrays, which the
// model's values (its clamped scalars) cannot hold. A nil env is
// NewState's.
func (m *Model) ScoreTreeFileIn(path string, k int, env *graph.Env) ([]Scores, error) {
	return m.ScoreTreeFilesIn([]string{path}, k, env)
}

// ScoreTreeFilesIn is ScoreTreeFileIn for a model with several PYDTs:
// paths holds a Newick file for each, in the order of Model.Trees, and
// the n-th trees of the files are scored together. The further files are
// read whole (bounded.MaxNewickBytes each) and must hold as many trees as
// the first.
func (m *Model) ScoreTreeFilesIn(paths []string, k int, env *graph.Env) ([]Scores, error) {
	if k < 0 {
		return nil, fmt.Errorf("tree %d: trees are numbered from 1", k)
	}
	if err := m.needTree("score"); err != nil {
		return nil, err
	}
	if len(paths) != len(m.Trees) {
		var names []string
		for _, b := range m.Trees {
			names = append(names, b.Leaves.Name)
		}
		return nil, fmt.Errorf("%w: the model has the PYDTs %s and needs a tree file of each; %d given", ErrInputs, strings.Join(names, ", "), len(paths))
	}
	further := make([][]*pydt.Tree, len(paths))
	for j := 1; j < len(paths); j++ {
		b := m.Trees[j]
		_, err := forEachCheckedTree(paths[j], b.N, b.Labels(), "the data "+b.Leaves.Name, func(_ int, tr *pydt.Tree) error {
			further[j] = append(further[j], tr)
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(further[j]) == 0 {
			return nil, fmt.Errorf("%s: no trees", paths[j])
		}
	}
	path := paths[0]
	var out []Scores
	n, err := forEachCheckedTree(path, m.N, m.Labels, "the data "+m.Leaves.Name, func(n int, tr *pydt.Tree) error {
		if k > 0 && n != k {
			return nil
		}
		st := m.NewState()
		if env != nil {
			st.Env = env.Clone()
		}
		st.Trees = []*pydt.Tree{tr}
		for j := 1; j < len(paths); j++ {
			if n > len(further[j]) {
				return fmt.Errorf("%s has %d trees, fewer than %s (tree %d)", paths[j], len(further[j]), path, n)
			}
			st.Trees = append(st.Trees, further[j][n-1])
		}
		s, err := m.Score(st)
		if err != nil {
			return fmt.Errorf("%s tree %d: %w", path, n, err)
		}
		out = append(out, s)
		return nil
	})
	switch {
	case err != nil:
		return nil, err
	case n == 0:
		return nil, fmt.Errorf("%s: no trees", path)
	case k > n:
		return nil, fmt.Errorf("--draw %d takes tree %d of %s, but it has %d", k, k, path, n)
	}
	for j := 1; j < len(paths); j++ {
		if k == 0 && len(further[j]) != n {
			return nil, fmt.Errorf("%s has %d trees and %s %d: the trees of the PYDTs are scored in pairs", path, n, paths[j], len(further[j]))
		}
	}
	return out, nil
}

// forEachTreeInFile calls fn on each tree of the Newick file at path
// (bounded by bounded.MaxNewickBytes), read with the row labels labels, as
// pydt.ForEachNewick; a Newick syntax error is prefixed with path.
func forEachTreeInFile(path string, labels []string, fn func(*pydt.Tree) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	in := bounded.NewReader(f, bounded.Options{Name: path, What: "Newick file", Max: bounded.MaxNewickBytes})
	err = pydt.ForEachNewick(in, labels, fn)
	if ne := (*pydt.NewickError)(nil); errors.As(err, &ne) {
		return fmt.Errorf("%s: %w", path, err)
	}
	return err
}
