package plot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pydtlang/pydtlang/inference"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// Named is a figure and the base name of its file (without extension).
type Named struct {
	Name   string
	Figure *Figure
}

// RunOptions controls RunFigures.
type RunOptions struct {
	// Tree names the tree to draw: "summary" (summary.nwk, the default),
	// "mea", "consensus" or "map". With the default, a run without
	// summary.nwk (above 2000 rows without --coclust) falls back to
	// mea.nwk.
	Tree string
	// Classes colours the leaves.
	Classes Classes
	// Model is the run's model with its data bound (as the run had them);
	// with two data columns it adds the tree drawn over the data. nil
	// leaves that picture out.
	Model *inference.Model
	// RowNames, when not nil, names the run's rows for the pictures, row
	// i by RowNames[i] (plot --names FILE, for a run made without row
	// names, such as the animals' animals_33x102.txt with
	// animal_names.txt): the leaves, the data points and the heat map's
	// rows. There must be one name per row.
	RowNames []string
	// Axis is the dendrogram's time axis (DendrogramOptions.Axis):
	// AxisAuto, the zero value, draws s = -log(1 - t) when the branch
	// points crowd near t = 1, t otherwise.
	Axis Axis
}

// nameRows renames the leaves of tr (read from file), the rows of opt's
// model and, when not nil, those of the co-clustering matrix cm by
// opt.RowNames, if set: leaf i is data row i. The run's rows must be
// unnamed (the tree's leaves their numbers).
func nameRows(tr *pydt.Tree, file string, opt *RunOptions, cm *Matrix) error {
	names := opt.RowNames
	if names == nil {
		return nil
	}
	names, err := inference.RowNamesFromFile(tr.Labels, names, tr.NumLeaves(), file)
	if err != nil {
		return err
	}
	tr.Labels = names
	if opt.Model != nil {
		opt.Model.Labels = names
	}
	if cm != nil {
		if len(cm.Names) != len(names) {
			return fmt.Errorf("%d row names for the %d rows of coclust.csv", len(names), len(cm.Names))
		}
		cm.Names = names
	}
	return nil
}

// TreeFiles maps RunOptions.Tree to file names.
var TreeFiles = map[string]string{"summary": "summary.nwk", "mea": "mea.nwk", "consensus": "consensus.nwk", "map": "map.nwk"}

// treeTitles describes each tree.
var treeTitles = map[string][2]string{
	"summary":   {"Summary tree", "The average-linkage tree of the posterior mean LCA times"},
	"mea":       {"Maximum expected clade accuracy tree", "The kept tree with the greatest sum of 2p - 1 over its clades"},
	"consensus": {"Majority-rule consensus tree", "The clades in more than half of the kept trees"},
	"map":       {"Highest log-joint tree seen", ""},
}

// RunFigures makes the pictures of the run in dir: "dendrogram" (the
// chosen tree, branch points shaded by clade credibility), "tree-data"
// (with a Model of two data columns: the data with the tree over it,
// branch points at their posterior mean locations given the tree at the
// posterior mean hyperparameters, by MeanLocations), "trace" (every column
// of trace.csv) and "coclust" (coclust.csv in the tree's leaf order, when
// the run wrote it). notes says what was left out and why.
//
// For an EM run (run --method em) the pictures are "dendrogram" (map.nwk,
// the best tree by its bound, the default, or "map"; no other tree),
// "tree-data" at the EM estimates of the hyperparameters (the means of
// their variational posteriors, the point estimates of alpha and beta),
// and "bound" (the best bound after the initial tree and each round).
func RunFigures(dir string, opt RunOptions) (figs []Named, notes []string, err error) {
	if ri, err := inference.ReadRun(dir); err == nil && ri.IsEM() {
		return emFigures(dir, opt)
	}
	if pydts, _ := inference.RunPYDTs(dir); len(pydts) > 1 {
		notes = append(notes, fmt.Sprintf("the run has the PYDTs %s: these pictures are of %s's tree and data (the other trees' files, such as %s, are not drawn)",
			strings.Join(pydts, ", "), pydts[0], inference.FileOf(inference.SummaryTreeFile, pydts[1])))
	}
	which := opt.Tree
	if which == "" {
		which = "summary"
		if _, err := os.Stat(filepath.Join(dir, TreeFiles[which])); errors.Is(err, fs.ErrNotExist) {
			if _, err := os.Stat(filepath.Join(dir, TreeFiles["mea"])); err == nil {
				which = "mea"
				notes = append(notes, fmt.Sprintf("%s has no summary.nwk (it is written with coclust.csv); drawing mea.nwk", dir))
			}
		}
	}
	file, ok := TreeFiles[which]
	if !ok {
		return nil, nil, fmt.Errorf("unknown tree %q: want summary, mea, consensus or map", which)
	}
	if _, err := os.Stat(filepath.Join(dir, file)); errors.Is(err, fs.ErrNotExist) {
		hint := ""
		if _, err := os.Stat(filepath.Join(dir, TreeFiles["map"])); err == nil && which != "map" {
			hint = "; --tree map draws the highest log-joint tree, map.nwk"
		}
		if _, err := os.Stat(filepath.Join(dir, TreeFiles["mea"])); err == nil && which == "map" {
			// The run wrote its summaries but no map.nwk: a Probit run.
			return nil, nil, fmt.Errorf("%s has no %s: a Probit model's run writes none; --tree summary, mea or consensus draws its other summary trees", dir, file)
		}
		return nil, nil, fmt.Errorf("%s has no %s: the run wrote no tree summaries (did it stop before its end?)%s", dir, file, hint)
	}
	var labels []string
	if opt.Model != nil {
		labels = opt.Model.Labels
	}
	tr, cred, err := ReadLabeledNewick(filepath.Join(dir, file), labels)
	if err != nil && labels != nil {
		// The model's rows are not the tree's leaves (the data have
		// changed, or the run named its rows otherwise): draw the tree
		// alone.
		notes = append(notes, fmt.Sprintf("no tree-over-data picture: the data's rows do not match the leaves of %s: %v", file, err))
		opt.Model = nil
		tr, cred, err = ReadLabeledNewick(filepath.Join(dir, file), nil)
	}
	if err != nil {
		return nil, nil, err
	}
	if err := nameRows(tr, file, &opt, nil); err != nil {
		return nil, nil, err
	}
	if which == "map" {
		cred = nil // map.nwk carries no credibilities
	}
	title := treeTitles[which][0] + " (" + file + ")"
	dg, err := Dendrogram(tr, DendrogramOptions{Title: title, Subtitle: treeTitles[which][1], Credibility: cred, Classes: opt.Classes, Axis: opt.Axis})
	if err != nil {
		return nil, nil, fmt.Errorf("dendrogram of %s: %w", file, err)
	}
	figs = append(figs, Named{"dendrogram", dg})

	trace, err := ReadTraceFile(filepath.Join(dir, "trace.csv"))
	if err != nil {
		return nil, nil, err
	}
	if opt.Model != nil {
		sc, note, err := treeOverData(opt.Model, tr, file, cred, opt.Classes, trace.Mean, "the posterior mean hyperparameters")
		if err != nil {
			return nil, nil, err
		}
		if sc != nil {
			figs = append(figs, Named{"tree-data", sc})
		} else {
			notes = append(notes, note)
		}
	}

	tp, err := TracePlot(trace, TraceOptions{Title: "Trace of " + filepath.Join(filepath.Base(dir), "trace.csv")})
	if err != nil {
		return nil, nil, err
	}
	figs = append(figs, Named{"trace", tp})

	cpath := filepath.Join(dir, "coclust.csv")
	if _, err := os.Stat(cpath); errors.Is(err, fs.ErrNotExist) {
		notes = append(notes, "no co-clustering picture: the run wrote no coclust.csv")
		return figs, notes, nil
	}
	cm, err := ReadCoclustFile(cpath)
	if err != nil {
		return nil, nil, err
	}
	if err := nameRows(tr, file, &opt, cm); err != nil {
		return nil, nil, err
	}
	lay, err := NewLayout(tr)
	if err != nil {
		return nil, nil, err
	}
	order := make([]string, len(lay.Leaves))
	for k, v := range lay.Leaves {
		order[k] = tr.Label(v)
	}
	hopt := HeatmapOptions{
		Title:     "Co-clustering (coclust.csv)",
		Order:     order,
		OrderNote: "the order of the leaves of " + file,
		Classes:   opt.Classes,
		Label:     "posterior mean time of the rows' lowest common ancestor",
	}
	hm, err := Heatmap(cm, hopt)
	if err != nil && hopt.Order != nil {
		notes = append(notes, fmt.Sprintf("coclust.csv drawn in its own row order: its rows are not the leaves of %s (%v)", file, err))
		hopt.Order, hopt.OrderNote = nil, "the order of coclust.csv"
		hm, err = Heatmap(cm, hopt)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", cpath, err)
	}
	figs = append(figs, Named{"coclust", hm})
	return figs, notes, nil
}

// treeOverData draws the data with tr over them (the paper's Figure 1),
// every latent scalar at value (what names it: at), or returns nil and a
// note saying why the picture cannot be drawn.
func treeOverData(m *inference.Model, tr *pydt.Tree, file string, cred map[pydt.NodeID]float64, classes Classes,
	value func(string) (float64, bool), at string) (*Figure, string, error) {
	if m.D != 2 {
		return nil, fmt.Sprintf("no tree-over-data picture: the data have %d columns, not 2", m.D), nil
	}
	loc, err := MeanLocations(m, tr, value)
	if err != nil {
		return nil, fmt.Sprintf("no tree-over-data picture: %v", err), nil
	}
	xl, yl := "column 1", "column 2"
	if d := m.Data.Data; d != nil && len(d.ColNames) == 2 {
		xl, yl = d.ColNames[0], d.ColNames[1]
	}
	sub := "branch points at their posterior mean locations given this tree and " + at + " (belief propagation)"
	data := Observed(m)
	if data != nil {
		sub = "branch points and leaves at their posterior mean latent locations given this tree and " + at + " (belief propagation); each data point joined to its leaf"
	}
	sc, err := TreeScatter(tr, loc, ScatterOptions{
		Title:       "Data and " + file,
		Subtitle:    sub,
		Data:        data,
		XLabel:      xl,
		YLabel:      yl,
		Credibility: cred,
		Classes:     classes,
	})
	if err != nil {
		return nil, "", fmt.Errorf("tree over data: %w", err)
	}
	return sc, "", nil
}
