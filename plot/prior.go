package plot

import (
	"encoding/csv"
	"errors"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/inference"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// PriorDraw is one draw of 2-D data from the prior.
type PriorDraw struct {
	// Title names the draw, e.g. with its parameter values.
	Title string
	// X holds the points row-major, two values a row.
	X []float64
	// Group numbers each point's subtree below the root (its top-level
	// cluster), to colour it; nil draws every point black.
	Group []int
}

// ReadPrior reads a directory that "pydtlang sample" wrote: the draws of
// the data variable name (NAME.csv, long format; "" for the only CSV file
// other than params.csv), titled with their parameter values from
// params.csv, and grouped by the subtrees below the root of each draw's
// tree in trees.nwk when that file is there. The variable must have two
// columns. A run directory (one with run.json) is refused with a hint.
func ReadPrior(dir, name string) ([]PriorDraw, error) {
	if _, err := os.Stat(filepath.Join(dir, inference.RunFile)); err == nil {
		return nil, fmt.Errorf("%s is a run directory (it has %s), not the output of pydtlang sample: draw it without --prior", dir, inference.RunFile)
	}
	if name == "" {
		files, err := filepath.Glob(filepath.Join(dir, "*.csv"))
		if err != nil {
			return nil, err
		}
		var vars []string
		for _, f := range files {
			if b := filepath.Base(f); b != "params.csv" {
				vars = append(vars, strings.TrimSuffix(b, ".csv"))
			}
		}
		switch len(vars) {
		case 0:
			return nil, fmt.Errorf("%s holds no data file (NAME.csv) of pydtlang sample", dir)
		case 1:
			name = vars[0]
		default:
			return nil, fmt.Errorf("%s holds several data variables (%s): choose one", dir, strings.Join(vars, ", "))
		}
	}
	path := filepath.Join(dir, name+".csv")
	m, err := dataset.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var ks []int
	if m.IsLong() {
		if ks, err = m.Draws(); err != nil {
			return nil, err
		}
	}
	params, err := readParams(filepath.Join(dir, "params.csv"))
	if err != nil {
		return nil, err
	}
	var trees []*pydt.Tree
	if f, err := os.Open(filepath.Join(dir, "trees.nwk")); err == nil {
		trees, err = pydt.ReadNewickTrees(f, nil)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "trees.nwk"), err)
		}
	}
	var draws []PriorDraw
	one := func(k int, x *dataset.Matrix) error {
		if x.Cols != 2 {
			return fmt.Errorf("%s: %d columns; prior pictures are of 2-D data", path, x.Cols)
		}
		d := PriorDraw{Title: fmt.Sprintf("draw %d", k), X: x.Data}
		if p, ok := params[k]; ok {
			d.Title += "\n" + p
		}
		if k-1 < len(trees) {
			tr := trees[k-1]
			if tr.NumLeaves() != x.Rows {
				return fmt.Errorf("%s: draw %d has %d rows but its tree %d leaves", path, k, x.Rows, tr.NumLeaves())
			}
			d.Group = topGroups(tr)
		}
		draws = append(draws, d)
		return nil
	}
	if ks == nil {
		if err := one(1, m); err != nil {
			return nil, err
		}
	}
	for _, k := range ks {
		x, err := m.Draw(k)
		if err != nil {
			return nil, err
		}
		if err := one(k, x); err != nil {
			return nil, err
		}
	}
	return draws, nil
}

// readParams reads params.csv (draw,NAME,...) into one "name=value, ..."
// string per draw; a missing file gives none.
func readParams(path string) (map[int]string, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := map[int]string{}
	if len(recs) == 0 || len(recs[0]) < 2 || recs[0][0] != "draw" {
		return out, nil
	}
	for _, rec := range recs[1:] {
		k, err := strconv.Atoi(rec[0])
		if err != nil {
			return nil, fmt.Errorf("%s: draw %q is not a number", path, rec[0])
		}
		var parts []string
		for j := 1; j < len(rec) && j < len(recs[0]); j++ {
			s := rec[j]
			if x, err := strconv.ParseFloat(s, 64); err == nil {
				s = strconv.FormatFloat(x, 'g', 3, 64)
			}
			parts = append(parts, recs[0][j]+"="+s)
		}
		out[k] = strings.Join(parts, ", ")
	}
	return out, nil
}

// topGroups numbers each leaf by the child of the root it descends from.
func topGroups(tr *pydt.Tree) []int {
	g := make([]int, tr.NumLeaves())
	k := 0
	root := tr.Root()
	if tr.IsLeaf(root) {
		return g
	}
	var buf []pydt.NodeID
	for c := range tr.Children(root) {
		buf = tr.PostOrderFrom(c, buf[:0])
		for _, v := range buf {
			if tr.IsLeaf(v) {
				g[v] = k
			}
		}
		k++
	}
	return g
}

// PriorOptions controls PriorScatter.
type PriorOptions struct {
	// Title is drawn above the panels.
	Title string
	// XLabel and YLabel name the two columns.
	XLabel, YLabel string
}

// PriorScatter draws each draw's points in a panel of its own (the paper's
// Figure 4), coloured by top-level cluster when the draws have groups.
func PriorScatter(draws []PriorDraw, opt PriorOptions) (*Figure, error) {
	if len(draws) == 0 {
		return nil, errors.New("no draws")
	}
	var plots [][]*gplot.Plot
	cols := min(len(draws), 2)
	if len(draws) > 4 {
		cols = 3
	}
	rows := (len(draws) + cols - 1) / cols
	maxN := 0
	for _, d := range draws {
		maxN = max(maxN, len(d.X)/2)
	}
	radius := vg.Length(2)
	if maxN > 300 {
		radius = 1.2
	}
	for r := range rows {
		var row []*gplot.Plot
		for c := range cols {
			i := r*cols + c
			if i >= len(draws) {
				row = append(row, nil)
				continue
			}
			d := draws[i]
			if len(d.X)%2 != 0 || (d.Group != nil && len(d.Group) != len(d.X)/2) {
				return nil, fmt.Errorf("%s: %d values and %d groups for 2-D points", d.Title, len(d.X), len(d.Group))
			}
			p := newPlot()
			p.Title.Text = d.Title
			p.Title.TextStyle.Font.Size = 9
			p.X.Label.Text, p.Y.Label.Text = opt.XLabel, opt.YLabel
			ngroups := 1
			for _, g := range d.Group {
				ngroups = max(ngroups, g+1)
			}
			for g := range ngroups {
				var xys plotter.XYs
				for j := range len(d.X) / 2 {
					if (d.Group == nil && g == 0) || (d.Group != nil && d.Group[j] == g) {
						xys = append(xys, plotter.XY{X: d.X[2*j], Y: d.X[2*j+1]})
					}
				}
				if len(xys) == 0 {
					continue
				}
				sc, err := plotter.NewScatter(xys)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", d.Title, err)
				}
				sc.GlyphStyle = draw.GlyphStyle{Color: color.Black, Radius: radius, Shape: draw.CircleGlyph{}}
				if d.Group != nil {
					clr, _ := classColor(g)
					sc.GlyphStyle.Color = clr
				}
				p.Add(sc)
			}
			// Equal scales.
			xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
			for j := range len(d.X) / 2 {
				xmin, xmax = min(xmin, d.X[2*j]), max(xmax, d.X[2*j])
				ymin, ymax = min(ymin, d.X[2*j+1]), max(ymax, d.X[2*j+1])
			}
			// At least a thousandth of the scale of the values, so that the
			// ticks of a draw whose points all but coincide still differ.
			span := max(xmax-xmin, ymax-ymin, 1e-3*max(1, math.Abs(xmin), math.Abs(ymin), math.Abs(xmax), math.Abs(ymax))) * 1.05
			p.X.Min, p.X.Max = (xmin+xmax)/2-span/2, (xmin+xmax)/2+span/2
			p.Y.Min, p.Y.Max = (ymin+ymax)/2-span/2, (ymin+ymax)/2+span/2
			row = append(row, p)
		}
		plots = append(plots, row)
	}
	panel := vg.Length(3.3 * vg.Inch)
	width := vg.Length(cols)*panel + 2*margin
	sub := "each panel one draw of the data; colours: the subtrees below the root of the draw's tree"
	if draws[0].Group == nil {
		sub = "each panel one draw of the data"
	}
	if slices.ContainsFunc(draws, func(d PriorDraw) bool { return d.Group == nil }) {
		sub = "each panel one draw of the data"
	}
	height := headerHeight(opt.Title, sub, width) + vg.Length(rows)*panel + 2*margin
	f := &Figure{Width: width, Height: height}
	f.draw = func(c draw.Canvas) {
		c = header(c, opt.Title, sub)
		c = draw.Crop(c, margin, -margin, margin, 0)
		tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: 10, PadY: 10}
		canvases := gplot.Align(plots, tiles, c)
		for r := range plots {
			for k, p := range plots[r] {
				if p != nil {
					p.Draw(canvases[r][k])
				}
			}
		}
	}
	return f, nil
}
