package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/inference"
	"github.com/pydtlang/pydtlang/inference/cluster"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// table prints, per data set, the dendrogram purity of the three linkages
// on the raw and standardized columns, then that of every run under
// dir/runs whose name starts with the data set's name: the posterior mean
// over the kept trees of all chains (with the range of the chains' means),
// and the purity of the summary tree (summary.nwk, else mcc.nwk), of
// mea.nwk, consensus.nwk and map.nwk where the run wrote them.
func table(w io.Writer, dir string) error {
	runs, err := filepath.Glob(filepath.Join(dir, "runs", "*"))
	if err != nil {
		return err
	}
	for _, name := range []string{"synthetic", "stretch", "synnoise1", "synnoise2", "synnoise", "synth8", "animals", "ccle"} {
		raw, err := dataset.ReadFile(filepath.Join(dir, name+".csv"))
		if err != nil {
			return err
		}
		class, names, err := classes(name, raw.RowLabels)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "### %s: %d rows × %d columns, %d classes\n\n", name, raw.Rows, raw.Cols, len(names))
		fmt.Fprintln(w, "| data | method | columns | posterior mean purity | summary tree | MEA tree | consensus tree | MAP tree | classes that are clades | kept trees | R-hat, bulk ESS of log_joint |")
		fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
		for _, cols := range []string{"raw", "standardized"} {
			m := raw
			if cols == "standardized" {
				m = standardize(raw)
			}
			for _, l := range []linkage{average, complete, ward} {
				tr, err := agglomerate(rows(m), l)
				if err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				p, clades, err := treeScores(tr, class)
				if err != nil {
					return fmt.Errorf("%s %s: %w", name, l, err)
				}
				fmt.Fprintf(w, "| %s | %s linkage | %s | | %.3f | | | | %.2f | | |\n", name, l, cols, p, clades)
			}
		}
		for _, run := range runs {
			base := filepath.Base(run)
			if fi, err := os.Stat(run); err != nil || !fi.IsDir() || !strings.HasPrefix(base, name+"-") {
				continue // the runs' logs sit beside them
			}
			if _, err := os.Stat(filepath.Join(run, "summary.json")); err != nil {
				fmt.Fprintf(w, "| %s | %s | (not finished) | | | | | | | | |\n", name, base)
				continue
			}
			cols := "raw"
			model := strings.TrimPrefix(base, name+"-")
			if m, ok := strings.CutPrefix(model, "z-"); ok {
				cols, model = "standardized", m
			}
			if _, err := os.Stat(filepath.Join(run, "kbest.nwk")); err == nil {
				// An EM run: one tree, map.nwk.
				p, clades, note, err := emPurity(run, raw.RowLabels, class)
				if err != nil {
					return fmt.Errorf("%s: %w", base, err)
				}
				fmt.Fprintf(w, "| %s | PYDT %s | %s | – | | | | %.3f | %.2f | 1 | %s |\n", name, model, cols, p, clades, note)
				continue
			}
			r, err := runPurity(run, raw.RowLabels, class)
			if err != nil {
				return fmt.Errorf("%s: %w", base, err)
			}
			if r.standardized {
				cols = "standardized"
			}
			fmt.Fprintf(w, "| %s | PYDT %s | %s | %s | %.3f%s | %s | %s | %s | %.2f | %d | %s |\n",
				name, model, cols, r.mean, r.summary, r.summaryNote, num(r.mea), num(r.consensus), num(r.mapTree), r.clades, r.trees, r.conv)
		}
		fmt.Fprintf(w, "\nClasses: %s.\n\n", strings.Join(names, ", "))
	}
	return nil
}

func rows(m *dataset.Matrix) [][]float64 {
	out := make([][]float64, m.Rows)
	for i := range out {
		out[i] = m.Data[i*m.Cols : (i+1)*m.Cols]
	}
	return out
}

type runResult struct {
	mean                             string // posterior mean and the range of the chains' means
	summary, mea, consensus, mapTree float64
	summaryNote                      string // " (mcc.nwk)" for a run made before summary.nwk
	trees                            int
	clades                           float64 // mean over kept trees of cladeFraction
	conv                             string  // R-hat and bulk ESS of log_joint
	standardized                     bool    // run --standardize
}

func num(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmt.Sprintf("%.3f", x)
}

func runPurity(dir string, labels []string, class []int) (runResult, error) {
	var r runResult
	files, err := filepath.Glob(filepath.Join(dir, "trees-*.nwk"))
	if err != nil || len(files) == 0 {
		return r, fmt.Errorf("no trees-*.nwk in %s", dir)
	}
	var means []float64
	var sum float64
	for _, f := range files {
		trees, err := readTrees(f, labels)
		if err != nil {
			return r, err
		}
		m, err := cluster.MeanDendrogramPurity(trees, class)
		if err != nil {
			return r, fmt.Errorf("%s: %w", f, err)
		}
		means = append(means, m)
		for _, tr := range trees {
			c, err := cladeFraction(tr, class)
			if err != nil {
				return r, fmt.Errorf("%s: %w", f, err)
			}
			r.clades += c
		}
		sum += m * float64(len(trees))
		r.trees += len(trees)
	}
	mean := sum / float64(r.trees)
	r.clades /= float64(r.trees)
	lo, hi := slices.Min(means), slices.Max(means)
	r.mean = fmt.Sprintf("%.3f (chains %.3f–%.3f)", mean, lo, hi)
	if len(means) == 1 {
		r.mean = fmt.Sprintf("%.3f", mean)
	}
	summary := "summary.nwk"
	if _, err := os.Stat(filepath.Join(dir, summary)); err != nil {
		summary, r.summaryNote = "mcc.nwk", " (mcc.nwk)"
	}
	if r.summary, err = treePurity(filepath.Join(dir, summary), labels, class); err != nil {
		return r, err
	}
	if r.mea, err = optionalTreePurity(filepath.Join(dir, "mea.nwk"), labels, class); err != nil {
		return r, err
	}
	if r.consensus, err = optionalTreePurity(filepath.Join(dir, "consensus.nwk"), labels, class); err != nil {
		return r, err
	}
	// Probit runs have no map.nwk.
	if r.mapTree, err = optionalTreePurity(filepath.Join(dir, inference.MapFile), labels, class); err != nil {
		return r, err
	}
	summ, err := inference.ReadResult(dir)
	if err != nil {
		return r, err
	}
	for _, s := range summ.Scalars {
		if s.Name == "log_joint" {
			r.conv = fmt.Sprintf("%.2f, %.0f", s.Rhat, s.ESSBulk)
		}
	}
	run, err := inference.ReadRun(dir)
	if err != nil {
		return r, err
	}
	r.standardized = run.Standardize != nil
	return r, nil
}

func readTrees(path string, labels []string) ([]*pydt.Tree, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	trees, err := pydt.ReadNewickTrees(f, labels)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return trees, nil
}

// readTree reads the one tree of the Newick file at path.
func readTree(path string, labels []string) (*pydt.Tree, error) {
	trees, err := readTrees(path, labels)
	if err != nil {
		return nil, err
	}
	if len(trees) != 1 {
		return nil, fmt.Errorf("%s: want one tree, got %d", path, len(trees))
	}
	return trees[0], nil
}

// treePurity is the dendrogram purity of the tree of the Newick file at
// path.
func treePurity(path string, labels []string, class []int) (float64, error) {
	p, _, err := treeFileScores(path, labels, class)
	return p, err
}

// optionalTreePurity is treePurity of a summary tree a run may not have
// written: NaN (a dash in the table) when the file does not exist, an
// error when it exists but cannot be read or scored.
func optionalTreePurity(path string, labels []string, class []int) (float64, error) {
	p, err := treePurity(path, labels, class)
	if errors.Is(err, fs.ErrNotExist) {
		return math.NaN(), nil
	}
	return p, err
}

// treeFileScores is treeScores of the one tree of the Newick file at path.
func treeFileScores(path string, labels []string, class []int) (purity, clades float64, err error) {
	tr, err := readTree(path, labels)
	if err != nil {
		return 0, 0, err
	}
	if purity, clades, err = treeScores(tr, class); err != nil {
		return 0, 0, fmt.Errorf("%s: %w", path, err)
	}
	return purity, clades, nil
}

// treeScores returns the dendrogram purity of tr and the fraction of the
// classes that are clades of it (cladeFraction).
func treeScores(tr *pydt.Tree, class []int) (purity, clades float64, err error) {
	if purity, err = cluster.DendrogramPurity(tr, class); err != nil {
		return 0, 0, err
	}
	if clades, err = cladeFraction(tr, class); err != nil {
		return 0, 0, err
	}
	return purity, clades, nil
}

// cladeFraction is the fraction of the classes (of two or more leaves)
// whose leaves are exactly the leaf set of a branch point of tr; an error
// when no class has two leaves, where the fraction is undefined.
func cladeFraction(tr *pydt.Tree, class []int) (float64, error) {
	if len(class) != tr.NumLeaves() {
		return 0, fmt.Errorf("classes that are clades: %d classes for a tree of %d leaves", len(class), tr.NumLeaves())
	}
	k := 0
	for _, c := range class {
		k = max(k, c+1)
	}
	size := make([]int, k)
	for _, c := range class {
		if c >= 0 {
			size[c]++
		}
	}
	counts := make(map[pydt.NodeID][]int)
	found := make([]bool, k)
	for _, v := range tr.PostOrder(nil) {
		h := make([]int, k)
		if tr.IsLeaf(v) {
			if c := class[v]; c >= 0 {
				h[c]++
			}
		} else {
			for c := range tr.Children(v) {
				for j, x := range counts[c] {
					h[j] += x
				}
				delete(counts, c)
			}
			for j, x := range h {
				if x == size[j] && x == tr.Count(v) {
					found[j] = true
				}
			}
		}
		counts[v] = h
	}
	n, hit := 0, 0
	for j := range k {
		if size[j] >= 2 {
			n++
			if found[j] {
				hit++
			}
		}
	}
	if n == 0 {
		return 0, fmt.Errorf("classes that are clades: no class has two leaves")
	}
	return float64(hit) / float64(n), nil
}

// emPurity returns the dendrogram purity and the fraction of classes that
// are clades of an EM run's tree (map.nwk), and a note of its bound,
// rounds and wall time from summary.json.
func emPurity(dir string, labels []string, class []int) (purity, clades float64, note string, err error) {
	if purity, clades, err = treeFileScores(filepath.Join(dir, inference.MapFile), labels, class); err != nil {
		return 0, 0, "", err
	}
	res, err := inference.ReadEMResult(dir)
	if err != nil {
		return 0, 0, "", err
	}
	note = fmt.Sprintf("EM: bound %.6g, %d rounds, %.0f s", res.Bound, res.Rounds, res.WallTime)
	return purity, clades, note, nil
}

// purity writes the dendrogram purity and the fraction of classes that are
// clades of the tree in treeFile over the rows of dataFile: for animals.csv
// and ccle.csv (or -z.csv) the classes of the study (classOf), for any
// other file the first letters of the row labels (examples/gen-synthetic's
// data).
func purity(w io.Writer, dataFile, treeFile string) error {
	m, class, names, err := dataClasses(dataFile)
	if err != nil {
		return err
	}
	p, clades, err := treeFileScores(treeFile, m.RowLabels, class)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: %d rows, %d classes: dendrogram purity %.3f, classes that are clades %.2f\n", treeFile, m.Rows, len(names), p, clades)
	return nil
}

// dataClasses reads dataFile and numbers its rows' classes: for
// animals.csv and ccle.csv (or -z.csv) the classes of the study (classOf),
// for any other file the first letters of the row labels (the synthetic
// sets', examples/gen-synthetic's data).
func dataClasses(dataFile string) (*dataset.Matrix, []int, []string, error) {
	m, err := dataset.ReadFile(dataFile)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(m.RowLabels) != m.Rows {
		return nil, nil, nil, fmt.Errorf("%s: the rows have no labels", dataFile)
	}
	name := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(dataFile), ".csv"), "-z")
	if name != "animals" && name != "ccle" {
		name = "synthetic"
	}
	class, names, err := classes(name, m.RowLabels)
	if err != nil {
		return nil, nil, nil, err
	}
	return m, class, names, nil
}

// writeClassTree writes to out the tree of the classes of dataFile's rows
// (dataClasses): under the root (t = 0.25) one branch point (t = 0.75) per
// class with two or more rows, holding them; the rows of one-row classes
// and unlabelled rows hang from the root.
func writeClassTree(dataFile, out string) error {
	m, class, names, err := dataClasses(dataFile)
	if err != nil {
		return err
	}
	size := make([]int, len(names))
	for _, c := range class {
		if c >= 0 {
			size[c]++
		}
	}
	tr := pydt.New(m.Rows)
	root := tr.NewInternal(pydt.TimeFromOneMinus(0.75))
	node := make([]pydt.NodeID, len(names))
	for c := range names {
		if size[c] >= 2 {
			node[c] = tr.NewInternal(pydt.TimeFromOneMinus(0.25))
			tr.AddChild(root, node[c])
		}
	}
	for i, c := range class {
		if c >= 0 && size[c] >= 2 {
			tr.AddChild(node[c], pydt.NodeID(i))
		} else {
			tr.AddChild(root, pydt.NodeID(i))
		}
	}
	tr.SetRoot(root)
	tr.Recount()
	if err := tr.Validate(); err != nil {
		return fmt.Errorf("class tree: %w", err)
	}
	tr.Labels = m.RowLabels
	return os.WriteFile(out, []byte(tr.Newick()+"\n"), 0o644)
}
