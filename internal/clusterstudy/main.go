// Command clusterstudy is the study of docs/clustering.md: it prepares the
// labelled data sets, computes the dendrogram purity of average, complete
// and Ward linkage on them, and the posterior mean and summary-tree purity
// of pydtlang runs. scripts/clustering.sh drives it:
//
//	go run ./internal/clusterstudy data DIR      # write DIR/*.csv
//	go run ./internal/clusterstudy table DIR     # purity table of DIR/runs/*
//	go run ./internal/clusterstudy purity DATA.csv TREE.nwk
//	go run ./internal/clusterstudy linkage [-z] DATA.csv METHOD OUT.nwk
//	go run ./internal/clusterstudy classtree DATA.csv OUT.nwk
//
// purity prints the dendrogram purity of one tree over the rows of a data
// set written by examples/gen-synthetic (the class is the row label's
// letter), for data sets too large for the linkages (docs/em.md, "Scale").
//
// linkage writes the tree of average, complete or ward linkage (METHOD) of
// the rows of DATA.csv (with -z, of its columns standardized, as run
// --standardize fits them) as Newick with the rows' labels, the tree of the
// table's rows (the k-th merge at t = 1 − k/N: only the topology means
// anything), so that `pydtlang run --method em --init-tree OUT.nwk` can
// fit the linkage tree itself (docs/clustering.md, "EM trees").
// classtree writes the tree of the classes: one flat branch point (t =
// 0.75) per class holding its rows, all of them children of the root (t =
// 0.25) with the unlabelled rows, the tree a model that recovers the
// classes exactly and nothing more would give.
//
// The data sets (labels in parentheses): synthetic.csv, the paper's four
// clusters (the row label's letter); stretch.csv, the same with the first
// column multiplied by 10; synnoise.csv, the same with four more columns of
// independent N(0, 1) noise (synnoise1.csv, synnoise2.csv: one, two);
// synth8.csv, 1000 points of eight overlapping Gaussians in two dimensions
// (the letter); animals.csv, 33 animals (five groups,
// see animalGroup); ccle.csv, 504 cell lines × 24 drugs (the tissue in the
// cell name). NAME-z.csv is NAME.csv with every column standardized to mean
// 0 and sample standard deviation 1.
package main

import (
	"bufio"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/internal/synth"
)

func main() {
	if len(os.Args) == 4 && os.Args[1] == "purity" {
		if err := purity(os.Stdout, os.Args[2], os.Args[3]); err != nil {
			fmt.Fprintln(os.Stderr, "clusterstudy:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) >= 5 && os.Args[1] == "linkage" {
		args, z := os.Args[2:], false
		if args[0] == "-z" {
			args, z = args[1:], true
		}
		err := fmt.Errorf("usage: clusterstudy linkage [-z] DATA.csv average|complete|ward OUT.nwk")
		if len(args) == 3 {
			err = writeLinkage(args[0], linkage(args[1]), args[2], z)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "clusterstudy:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) == 4 && os.Args[1] == "classtree" {
		if err := writeClassTree(os.Args[2], os.Args[3]); err != nil {
			fmt.Fprintln(os.Stderr, "clusterstudy:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) != 3 || (os.Args[1] != "data" && os.Args[1] != "table") {
		fmt.Fprintln(os.Stderr, "usage: clusterstudy data DIR | clusterstudy table DIR | clusterstudy purity DATA.csv TREE.nwk | clusterstudy linkage [-z] DATA.csv average|complete|ward OUT.nwk | clusterstudy classtree DATA.csv OUT.nwk")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "data":
		err = writeData(os.Args[2])
	case "table":
		err = table(os.Stdout, os.Args[2])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "clusterstudy:", err)
		os.Exit(1)
	}
}

// repoFile finds a file of the repository from the working directory or
// its parents.
func repoFile(rel string) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, rel), nil
}

// moduleRoot is the nearest folder at or above the working directory that
// holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("run from inside the repository (no go.mod above the working directory)")
		}
		dir = up
	}
}

// sharedData is where the ccle data live: shared/data beside the
// repository's checkout, as in CI, found from the module root: its
// ../shared/data, or, when the module root is a git worktree, the
// ../shared/data of the main checkout it belongs to (mainCheckout).
// CLUSTERSTUDY_SHARED overrides it.
func sharedData() (string, error) {
	if s := os.Getenv("CLUSTERSTUDY_SHARED"); s != "" {
		return s, nil
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	tried := []string{filepath.Join(root, "..", "shared", "data")}
	if main, ok := mainCheckout(root); ok {
		tried = append(tried, filepath.Join(main, "..", "shared", "data"))
	}
	for _, p := range tried {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return p, nil
		}
	}
	return "", fmt.Errorf("no shared data folder (looked in %s); set CLUSTERSTUDY_SHARED", strings.Join(tried, ", "))
}

// mainCheckout returns the main checkout of the git worktree at root, and
// false when root is not a worktree. A worktree's .git is a file
// "gitdir: DIR"; DIR/commondir names (relative to DIR) the repository's
// git folder, whose parent is the main checkout.
func mainCheckout(root string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(root, ".git"))
	if err != nil {
		return "", false // no .git, or a folder: not a worktree
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return "", false
	}
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(root, gitdir)
	}
	c, err := os.ReadFile(filepath.Join(gitdir, "commondir"))
	if err != nil {
		return "", false
	}
	common := strings.TrimSpace(string(c))
	if !filepath.IsAbs(common) {
		common = filepath.Join(gitdir, common)
	}
	return filepath.Dir(filepath.Clean(common)), true
}

// writeData writes the study's data sets to dir.
func writeData(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, name := range []string{"synthetic", "animals"} {
		p, err := repoFile(filepath.Join("examples", "data", name+".csv"))
		if err != nil {
			return err
		}
		m, err := dataset.ReadFile(p)
		if err != nil {
			return err
		}
		if err := writeCSV(filepath.Join(dir, name+".csv"), m); err != nil {
			return err
		}
		if err := writeCSV(filepath.Join(dir, name+"-z.csv"), standardize(m)); err != nil {
			return err
		}
	}
	syn, err := dataset.ReadFile(filepath.Join(dir, "synthetic.csv"))
	if err != nil {
		return err
	}
	if err := writeCSV(filepath.Join(dir, "stretch.csv"), stretch(syn)); err != nil {
		return err
	}
	for _, k := range []int{1, 2, 4} {
		name := "synnoise.csv"
		if k < 4 {
			name = fmt.Sprintf("synnoise%d.csv", k)
		}
		if err := writeCSV(filepath.Join(dir, name), noiseColumns(syn, k)); err != nil {
			return err
		}
	}
	if err := writeCSV(filepath.Join(dir, "synth8.csv"), synth8()); err != nil {
		return err
	}
	shared, err := sharedData()
	if err != nil {
		return err
	}
	m, err := readCCLE(filepath.Join(shared, "ccle"))
	if err != nil {
		return err
	}
	if err := writeCSV(filepath.Join(dir, "ccle.csv"), m); err != nil {
		return err
	}
	return writeCSV(filepath.Join(dir, "ccle-z.csv"), standardize(m))
}

// readCCLE joins the CCLE drug sensitivities (504 cell lines × 24 drugs,
// whitespace-separated, no header) with the cell and drug names.
func readCCLE(dir string) (*dataset.Matrix, error) {
	m, err := dataset.ReadFile(filepath.Join(dir, "sensitivity.txt"))
	if err != nil {
		return nil, err
	}
	cells, err := readLines(filepath.Join(dir, "cell_names.txt"))
	if err != nil {
		return nil, err
	}
	drugs, err := readLines(filepath.Join(dir, "drug_names.txt"))
	if err != nil {
		return nil, err
	}
	if len(cells) != m.Rows || len(drugs) != m.Cols {
		return nil, fmt.Errorf("ccle: %d×%d values, %d cell names, %d drug names", m.Rows, m.Cols, len(cells), len(drugs))
	}
	m.RowLabels, m.ColNames = cells, drugs
	return m, nil
}

func readLines(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		out = append(out, strings.TrimSpace(l))
	}
	return out, nil
}

// standardize returns m with every column shifted and scaled to mean 0 and
// sample standard deviation 1 (missing values ignored; a constant column
// is only centred).
func standardize(m *dataset.Matrix) *dataset.Matrix {
	out := *m
	out.Data = slices.Clone(m.Data)
	for j := range m.Cols {
		var s, ss float64
		k := 0
		for i := range m.Rows {
			if x := m.At(i, j); !math.IsNaN(x) {
				s += x
				k++
			}
		}
		mean := s / float64(k)
		for i := range m.Rows {
			if x := m.At(i, j); !math.IsNaN(x) {
				ss += (x - mean) * (x - mean)
			}
		}
		sd := math.Sqrt(ss / float64(k-1))
		if !(sd > 0) {
			sd = 1
		}
		for i := range m.Rows {
			out.Data[i*m.Cols+j] = (m.At(i, j) - mean) / sd
		}
	}
	return &out
}

func writeCSV(path string, m *dataset.Matrix) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	cols := m.ColNames
	if cols == nil {
		for j := range m.Cols {
			cols = append(cols, fmt.Sprintf("V%d", j+1))
		}
	}
	fmt.Fprintf(w, "name,%s\n", strings.Join(cols, ","))
	for i := range m.Rows {
		w.WriteString(m.RowLabels[i])
		for j := range m.Cols {
			fmt.Fprintf(w, ",%.10g", m.At(i, j))
		}
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// animalGroup is the paper's five groups of the animals data (Knowles &
// Ghahramani 2011, Section 7, Figure "animals": land mammals, aquatic
// mammals, reptiles, birds and insects). The paper names the groups but not
// their members; the members follow the obvious taxonomy, with the two fish
// (salmon, trout) in the aquatic group, the only one that fits them, and
// the penguin among the birds.
var animalGroup = map[string]string{
	"Elephant": "land mammal", "Rhino": "land mammal", "Horse": "land mammal", "Cow": "land mammal",
	"Camel": "land mammal", "Giraffe": "land mammal", "Chimp": "land mammal", "Gorilla": "land mammal",
	"Mouse": "land mammal", "Squirrel": "land mammal", "Tiger": "land mammal", "Lion": "land mammal",
	"Cat": "land mammal", "Dog": "land mammal", "Wolf": "land mammal", "Deer": "land mammal",
	"Seal": "aquatic", "Dolphin": "aquatic", "Whale": "aquatic", "Salmon": "aquatic", "Trout": "aquatic",
	"Iguana": "reptile", "Alligator": "reptile",
	"Robin": "bird", "Eagle": "bird", "Chicken": "bird", "Finch": "bird", "Penguin": "bird", "Ostrich": "bird",
	"Bee": "insect", "Butterfly": "insect", "Ant": "insect", "Cockroach": "insect",
}

// classOf returns the class of a row label of data set name, "" when the
// row is unlabelled.
func classOf(name, label string) (string, error) {
	switch name {
	case "synthetic", "stretch", "synnoise1", "synnoise2", "synnoise", "synth8":
		return label[:1], nil // a1, b2, ...: the cluster is the letter
	case "animals":
		g, ok := animalGroup[label]
		if !ok {
			return "", fmt.Errorf("animals: no group for %q", label)
		}
		return g, nil
	case "ccle":
		// The tissue is the part after the first underscore. The names were
		// exported by a tool that turned every "NA" into "NaN"
		// (URINaNRY_TRACT); undo that. Three cells have no tissue.
		_, tissue, ok := strings.Cut(label, "_")
		if !ok {
			return "", nil
		}
		return strings.ReplaceAll(tissue, "NaN", "NA"), nil
	}
	return "", fmt.Errorf("unknown data set %q", name)
}

// classes numbers the classes of the row labels; unlabelled rows get -1.
func classes(name string, labels []string) ([]int, []string, error) {
	ids := map[string]int{}
	var names []string
	out := make([]int, len(labels))
	for i, l := range labels {
		c, err := classOf(name, l)
		if err != nil {
			return nil, nil, err
		}
		if c == "" {
			out[i] = -1
			continue
		}
		id, ok := ids[c]
		if !ok {
			id = len(names)
			ids[c] = id
			names = append(names, c)
		}
		out[i] = id
	}
	return out, names, nil
}

// synth8 is 1000 points in two dimensions from an equal mixture of eight
// Gaussians (variance 1/8, centres drawn from N(0, I), seed 8;
// internal/synth, as `go run ./examples/gen-synthetic -n 1000 -k 8 -seed 8`
// writes it): overlapping clusters, the row label's letter is the class.
func synth8() *dataset.Matrix {
	x, cl, err := synth.Mixture(1000, 2, 8, 8)
	if err != nil {
		panic(err) // fixed, valid arguments
	}
	m := &dataset.Matrix{Rows: 1000, Cols: 2, Data: x, ColNames: []string{"x", "y"}, Source: "synth8"}
	for i, c := range cl {
		m.RowLabels = append(m.RowLabels, fmt.Sprintf("%c%d", 'a'+c, i+1))
	}
	return m
}

// stretch returns m with its first column multiplied by 10: the clusters
// are as separated as before, but the columns' scales differ tenfold.
func stretch(m *dataset.Matrix) *dataset.Matrix {
	out := *m
	out.Data = slices.Clone(m.Data)
	for i := range m.Rows {
		out.Data[i*m.Cols] *= 10
	}
	return &out
}

// noiseColumns returns m with k more columns of independent N(0, 1) noise
// (a fixed seed), which carry no information about the clusters.
func noiseColumns(m *dataset.Matrix, k int) *dataset.Matrix {
	rng := rand.New(rand.NewPCG(2005, 1))
	out := &dataset.Matrix{Rows: m.Rows, Cols: m.Cols + k, RowLabels: m.RowLabels, Source: m.Source}
	out.ColNames = slices.Clone(m.ColNames)
	for j := range k {
		out.ColNames = append(out.ColNames, fmt.Sprintf("noise%d", j+1))
	}
	for i := range m.Rows {
		out.Data = append(out.Data, m.Data[i*m.Cols:(i+1)*m.Cols]...)
		for range k {
			out.Data = append(out.Data, rng.NormFloat64())
		}
	}
	return out
}
