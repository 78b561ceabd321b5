package inference

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/pydtlang/pydtlang/inference/cluster"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// CutOptions tell CutRun how to cut a run's trees.
type CutOptions struct {
	// K asks for K clusters (at least K where a multifurcation or tied
	// branch points make exactly K impossible); zero cuts at Time instead.
	K int
	// Time is the time of the cut when K is zero, in [0, 1].
	Time float64
	// Tree is the summary tree file to cut, in the run directory:
	// SummaryTreeFile when empty.
	Tree string
	// Posterior also cuts every kept tree of the run and chooses, among
	// those cuts and the summary tree's, the partition that optimises Loss.
	Posterior bool
	// Loss is the posterior criterion (cluster.Binder or cluster.ARI).
	Loss cluster.Loss
	// Of names the PYDT whose trees to cut, by its variable, in a run of
	// a model with several (Result.PYDTs): its files are FileOf(name, Of)
	// and TreesFileOf(Of, k). Empty, or the first PYDT's variable, cuts
	// the first PYDT's trees.
	Of string
	// Labels, when not nil, are the data's row names, which the tree's
	// leaf names are matched to (so that leaf i is data row i); otherwise
	// they are read from coclust.csv.
	Labels []string
	// RowNames, when not nil, names the rows of a run made without row
	// names (cut --names FILE), row i by RowNames[i], in the output
	// (RunCut.Rows). There must be one name per row, and the run's rows
	// must be unnamed (their numbers).
	RowNames []string
}

// RunCut is the result of CutRun.
type RunCut struct {
	// Rows names the data rows, in the order of the data when the run
	// wrote coclust.csv, and otherwise in the order of the tree file.
	Rows []string
	// Tree is the file cut, and Partition its cut (Rows' clusters).
	Tree      string
	Partition cluster.Partition
	// CutTime is the time of the summary tree's cut, and Exact whether it
	// has exactly the K clusters asked (always true for a cut at a time).
	CutTime float64
	Exact   bool
	// SummaryTree is the tree cut, and At the time of its cut.
	SummaryTree *pydt.Tree
	At          pydt.Time
	// PYDTs lists the run's PYDTs when it has several (Result.PYDTs), and
	// Of the one whose trees were cut.
	PYDTs []string
	Of    string
	// Posterior is the partition chosen from the kept trees' cuts, when
	// asked for; Trees is the number of kept trees cut.
	Posterior *cluster.Choice
	Trees     int
	// SummaryBinder and SummaryARI are the summary tree cut's posterior
	// expected Binder loss (per pair) and adjusted Rand index, when
	// Posterior is set.
	SummaryBinder, SummaryARI float64
}

// RunPYDTs returns the variables of the PYDTs of the run in dir, from its
// summary.json (Result.PYDTs), when its model has several, and nil for one.
func RunPYDTs(dir string) ([]string, error) {
	var res struct {
		PYDTs []string `json:"pydts"`
	}
	if err := readJSONFile(filepath.Join(dir, SummaryFile), &res); err != nil {
		return nil, err
	}
	return res.PYDTs, nil
}

// cutFileVar resolves opt.Of against the run's PYDTs: the variable that
// names the files to cut ("" for the first PYDT's), and the PYDTs.
func cutFileVar(dir, of string) (string, []string, error) {
	pydts, err := RunPYDTs(dir)
	if err != nil && of != "" {
		return "", nil, fmt.Errorf("cut --tree-of %s: %w (the run's summary names its PYDTs)", of, err)
	}
	switch {
	case of == "":
		return "", pydts, nil
	case len(pydts) == 0:
		return "", nil, fmt.Errorf("cut --tree-of %s: the run in %s has one PYDT; leave --tree-of out", of, dir)
	case of == pydts[0]:
		return "", pydts, nil
	case !slices.Contains(pydts, of):
		return "", nil, fmt.Errorf("cut --tree-of %s: %s is not a PYDT of the run in %s (its PYDTs: %s)", of, of, dir, strings.Join(pydts, ", "))
	}
	return of, pydts, nil
}

// RowNamesFromFile returns names, row names read from a file (cut and
// plot --names FILE), as the names of a run's n rows, which the run itself
// names have (as its file from does: a tree or coclust.csv). A run made
// without row names has have nil or each row's number 1..n; names equal to
// have are accepted too. A run that names its rows otherwise is an error
// (names from a file are for a run made without them), as is a count of
// names other than n; both errors name from.
func RowNamesFromFile(have, names []string, n int, from string) ([]string, error) {
	if slices.Equal(have, names) {
		return names, nil
	}
	for i, s := range have {
		if s != strconv.Itoa(i+1) {
			return nil, fmt.Errorf("the run already names its rows (row %d of %s is %q): row names from a file are for a run made without them", i+1, from, s)
		}
	}
	if len(names) != n {
		return nil, fmt.Errorf("%d row names for the %d rows (leaves) of %s", len(names), n, from)
	}
	return names, nil
}

// runRowNames returns the row names in the header of dir's coclust.csv
// (of the PYDT of variable v: FileOf(CoclustFile, v)), or nil when there
// is no such file.
func runRowNames(dir, v string) ([]string, error) {
	name := FileOf(CoclustFile, v)
	f, err := os.Open(filepath.Join(dir, name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head, err := csv.NewReader(f).Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(head) < 2 {
		return nil, fmt.Errorf("%s: a header of %d cells", name, len(head))
	}
	return head[1:], nil
}

// RunTreeFiles returns the paths of the kept-tree files of the run in dir,
// trees-1.nwk, trees-2.nwk, ..., as many as exist; for a run with a chain
// offset K (Config.ChainOffset, recorded in run.json), trees-(K+1).nwk,
// trees-(K+2).nwk, ....
func RunTreeFiles(dir string) []string { return runTreeFilesOf(dir, "") }

// runTreeFilesOf is RunTreeFiles for the PYDT of variable v
// (TreesFileOf(v, k); "" for the first).
func runTreeFilesOf(dir, v string) []string {
	first := 1
	if ri, err := ReadRun(dir); err == nil {
		first = ri.ChainOffset + 1
	}
	var paths []string
	for k := first; ; k++ {
		p := filepath.Join(dir, TreesFileOf(v, k))
		if _, err := os.Stat(p); err != nil {
			return paths
		}
		paths = append(paths, p)
	}
}

// CutRun makes flat clusters from the run in dir: the cut of its summary
// tree (opt.Tree, summary.nwk by default) at opt.K clusters or at
// opt.Time, and, with opt.Posterior, the Bayes choice among the cuts of
// the kept trees and of the summary tree (cluster.CutSample.Best).
func CutRun(dir string, opt CutOptions) (*RunCut, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		// Not "open DIR/summary.nwk ... try --tree mea.nwk", which sent
		// the user after another tree file.
		return nil, fmt.Errorf("cut: %s is not a run directory (give the --out directory of run)", dir)
	}
	ri, riErr := ReadRun(dir)
	if opt.Tree == "" {
		opt.Tree = SummaryTreeFile
		if riErr == nil {
			opt.Tree = ri.DefaultTree()
		}
	}
	if opt.K < 0 {
		return nil, fmt.Errorf("cut: %d clusters", opt.K)
	}
	fv, pydts, err := cutFileVar(dir, opt.Of)
	if err != nil {
		return nil, err
	}
	opt.Tree = FileOf(opt.Tree, fv)
	names := opt.Labels
	if names == nil {
		var err error
		if names, err = runRowNames(dir, fv); err != nil {
			return nil, fmt.Errorf("cut: %w", err)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, opt.Tree))
	if err != nil {
		if riErr == nil && ri.IsEM() {
			return nil, fmt.Errorf("cut: %w (an EM run writes %s, its best tree, and %s; did it stop before its end?)", err, MapFile, KBestFile)
		}
		return nil, fmt.Errorf("cut: %w (a run writes summary.nwk for up to %d rows or with --coclust; try --tree %s)", err, CoclustDefaultMax, MEAFile)
	}
	tr, err := pydt.ParseNewick(string(b), names)
	if err != nil {
		return nil, fmt.Errorf("cut: %s: %w", opt.Tree, err)
	}
	if names == nil {
		names = tr.Labels
	}
	n := tr.NumLeaves()
	if names == nil {
		names = make([]string, n)
		for i := range names {
			names[i] = strconv.Itoa(i + 1)
		}
	}
	if opt.RowNames != nil {
		if names, err = RowNamesFromFile(names, opt.RowNames, n, opt.Tree); err != nil {
			return nil, fmt.Errorf("cut: %w", err)
		}
	}
	var cut cluster.Cutter
	res := &RunCut{Rows: names, Tree: opt.Tree, Exact: true, SummaryTree: tr, PYDTs: pydts, Of: opt.Of}
	if res.Of == "" && len(pydts) > 0 {
		res.Of = pydts[0]
	}
	if opt.K > 0 {
		c, err := cluster.CutK(tr, opt.K)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", opt.Tree, err)
		}
		res.Partition, res.CutTime, res.At, res.Exact = c.Partition, c.Time, c.At, c.Exact
		cut = cluster.AtK(opt.K)
	} else {
		if res.Partition, err = cluster.CutAtTime(tr, opt.Time); err != nil {
			return nil, fmt.Errorf("%s: %w", opt.Tree, err)
		}
		res.CutTime, res.At = opt.Time, pydt.TimeAt(opt.Time)
		cut = cluster.AtTime(opt.Time)
	}
	if !opt.Posterior {
		return res, nil
	}
	if riErr == nil && ri.IsEM() {
		return nil, fmt.Errorf("cut --posterior: %s holds an EM run, which has one best tree and no posterior samples to choose among", dir)
	}
	paths := runTreeFilesOf(dir, fv)
	if len(paths) == 0 {
		return nil, fmt.Errorf("cut --posterior: %s has no %s", dir, TreesFileOf(fv, 1))
	}
	src := NewickFiles(n, tr.Labels, paths...)
	s, err := cluster.CutTrees(func(fn func(*pydt.Tree) error) error { return src(fn) }, n, cut)
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = errors.New("no kept trees")
		}
		return nil, fmt.Errorf("cut --posterior: %w", err)
	}
	res.Trees = s.Trees()
	if res.Posterior, err = s.Best(opt.Loss, res.Partition); err != nil {
		return nil, fmt.Errorf("cut --posterior: %w", err)
	}
	if res.SummaryBinder, err = s.ExpectedBinder(res.Partition); err != nil {
		return nil, err
	}
	if res.SummaryARI, err = s.ExpectedARI(res.Partition); err != nil {
		return nil, err
	}
	return res, nil
}
