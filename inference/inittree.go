package inference

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pydtlang/pydtlang/internal/atomicfile"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// InitTreeFile is the copy, in a run's directory, of the tree its chains
// started from (Config.InitTrees), so that a resume before the first
// checkpoint starts from it again; FileOf(InitTreeFile, V) for a further
// PYDT of variable V.
const InitTreeFile = "init-tree.nwk"

// errFirstTree stops ReadTree's reader after the first tree.
var errFirstTree = errors.New("first tree read")

// ReadTree reads the first tree of the Newick file at path as a tree for
// the PYDT of variable v of m ("" for the model's first PYDT): its leaves
// must be that PYDT's rows, matched by label (Model.MatchTree's rules).
func (m *Model) ReadTree(path, v string) (*pydt.Tree, error) {
	b, err := m.binding(v)
	if err != nil {
		return nil, err
	}
	// Only the first tree is read: the file may be a long trees-K.nwk,
	// or end in a line cut short by a killed run.
	var tr *pydt.Tree
	err = forEachTreeInFile(path, b.Labels(), func(t *pydt.Tree) error {
		tr = t
		return errFirstTree
	})
	if err != nil && !errors.Is(err, errFirstTree) {
		return nil, err
	}
	if tr == nil {
		return nil, fmt.Errorf("%s: no tree", path)
	}
	if err := checkTree(b, tr); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return tr, nil
}

// ForEachTree calls fn on each tree of the Newick file at path, one per
// line, with its number n from 1, each read and checked as ReadTree reads
// its one tree: bounded by bounded.MaxNewickBytes, a tree of the PYDT of
// variable v of m ("" for the first) whose leaves are that PYDT's rows,
// valid. An error names path and the tree; a file of no trees is one.
func (m *Model) ForEachTree(path, v string, fn func(n int, tr *pydt.Tree) error) error {
	b, err := m.binding(v)
	if err != nil {
		return err
	}
	n, err := forEachCheckedTree(path, b.N, b.Labels(), "the data "+b.Leaves.Name, fn)
	if err == nil && n == 0 {
		err = fmt.Errorf("%s: no trees", path)
	}
	return err
}

// checkTree checks that tr, read with the row labels of b, has b's rows as
// its leaves and is a valid tree.
func checkTree(b *TreeBinding, tr *pydt.Tree) error {
	return checkTreeRows(tr, b.N, b.Labels(), "the data "+b.Leaves.Name)
}

// checkTreeRows checks that tr has the n rows of data (named so in the
// error; labels their labels as ParseNewick takes them) as its leaves and
// is a valid tree.
func checkTreeRows(tr *pydt.Tree, n int, labels []string, data string) error {
	if err := tr.MatchRows(n, labels, data); err != nil {
		return err
	}
	return tr.Validate()
}

// forEachCheckedTree calls fn on each tree of the Newick file at path, one
// a line, with its number k from 1, each read with labels and checked by
// checkTreeRows (an error names path and k), and returns how many trees it
// read. fn's error is returned as it is.
func forEachCheckedTree(path string, n int, labels []string, data string, fn func(k int, tr *pydt.Tree) error) (int, error) {
	k := 0
	err := forEachTreeInFile(path, labels, func(tr *pydt.Tree) error {
		k++
		if err := checkTreeRows(tr, n, labels, data); err != nil {
			return fmt.Errorf("%s tree %d: %w", path, k, err)
		}
		return fn(k, tr)
	})
	return k, err
}

// binding returns the PYDT of variable v ("" for the first).
func (m *Model) binding(v string) (*TreeBinding, error) {
	if err := m.needTree("a tree"); err != nil {
		return nil, err
	}
	if v == "" {
		return m.Trees[0], nil
	}
	var names []string
	for _, b := range m.Trees {
		if b.Leaves.Name == v {
			return b, nil
		}
		names = append(names, b.Leaves.Name)
	}
	return nil, fmt.Errorf("%s is not a PYDT of the model (its PYDTs: %s)", v, strings.Join(names, ", "))
}

// initNewick checks cfg.InitTrees against m and returns each PYDT's start
// tree as Newick text, indexed like m.Trees ("" where the chains draw
// their own).
func initNewick(m *Model, trees map[string]*pydt.Tree) ([]string, error) {
	if len(trees) == 0 {
		return nil, nil
	}
	out := make([]string, len(m.Trees))
	for v, tr := range trees {
		b, err := m.binding(v)
		if err != nil {
			return nil, fmt.Errorf("initial tree: %w", err)
		}
		if err := checkTree(b, tr); err != nil {
			return nil, fmt.Errorf("initial tree of %s: %w", b.Leaves.Name, err)
		}
		out[slices.Index(m.Trees, b)] = tr.Newick()
	}
	return out, nil
}

// writeInitTrees writes the start trees to the run directory, and
// returns the variables of the PYDTs that have one.
func writeInitTrees(m *Model, dir string, texts []string) ([]string, error) {
	var vars []string
	for k, text := range texts {
		if text == "" {
			continue
		}
		if err := atomicfile.Write(filepath.Join(dir, FileOf(InitTreeFile, m.fileVar(k))), []byte(text+"\n")); err != nil {
			return nil, err
		}
		vars = append(vars, m.Trees[k].Leaves.Name)
	}
	return vars, nil
}

// readInitTrees reads back the start trees of the run in dir, for the
// PYDTs of variables vars, as the Newick text the run's chains parsed.
func readInitTrees(m *Model, dir string, vars []string) ([]string, error) {
	if len(vars) == 0 {
		return nil, nil
	}
	out := make([]string, len(m.Trees))
	for _, v := range vars {
		b, err := m.binding(v)
		if err != nil {
			return nil, err
		}
		k := slices.Index(m.Trees, b)
		text, err := os.ReadFile(filepath.Join(dir, FileOf(InitTreeFile, m.fileVar(k))))
		if err != nil {
			return nil, err
		}
		out[k] = strings.TrimSuffix(string(text), "\n")
	}
	return out, nil
}

// startFrom replaces the state's trees by the start trees given (each
// parsed afresh from its Newick text, so that every chain, and a resumed
// run, start from the same tree), and checks that the model can start
// there: the tree's prior density under the chain's initial
// hyperparameters must be positive (a multifurcation has none when
// alpha = beta = 0, Neal's Dirichlet diffusion tree).
func (m *Model) startFrom(st *State, texts []string) error {
	for k, text := range texts {
		if text == "" {
			continue
		}
		b := m.Trees[k]
		tr, err := pydt.ParseNewick(text, b.Labels())
		if err != nil {
			return fmt.Errorf("initial tree of %s: %w", b.Leaves.Name, err)
		}
		p, err := b.Params(st.Env)
		if err != nil {
			return err
		}
		h, err := pydt.NewHarmonic(p.Alpha, p.Beta)
		if err != nil {
			return err
		}
		if lp := pydt.LogPrior(tr, p.Alpha, p.Beta, p.Div, h); math.IsNaN(lp) || math.IsInf(lp, 0) {
			return fmt.Errorf("initial tree of %s: its prior log density is %v at alpha = %g, beta = %g (with alpha = beta = 0 only binary trees are possible; a branch point at t = 0 or 1 is never)",
				b.Leaves.Name, lp, p.Alpha, p.Beta)
		}
		st.setTree(k, len(m.Trees), tr)
	}
	return nil
}

// NewChainAt is NewChain started from the given trees instead of a draw,
// by the variable of their PYDT ("" for the model's first PYDT), checked
// as Config.InitTrees are (leaves matched to the rows by label, positive
// prior density); the hyperparameters are drawn as NewChain draws them.
// An empty map starts from a draw, as NewChain.
func NewChainAt(m *Model, sched *Schedule, seed, stream uint64, trees map[string]*pydt.Tree) (*Chain, error) {
	texts, err := initNewick(m, trees)
	if err != nil {
		return nil, err
	}
	return newChainAt(m, sched, seed, stream, texts)
}

// newChainAt is NewChain with the start trees texts (initNewick; nil or
// "" entries draw the tree as NewChain does).
func newChainAt(m *Model, sched *Schedule, seed, stream uint64, texts []string) (*Chain, error) {
	pcg := rand.NewPCG(seed, stream)
	rng := rand.New(pcg)
	st, err := m.SamplePrior(rng)
	if err != nil {
		return nil, fmt.Errorf("initial state: %w", err)
	}
	if err := m.spreadInitialTree(rng, st); err != nil {
		return nil, err
	}
	if err := m.startFrom(st, texts); err != nil {
		return nil, err
	}
	return newChainFrom(m, sched, st, pcg)
}
