package plot

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Trace is a run's trace.csv: for every chain, the kept iterations and the
// value of every column at each.
type Trace struct {
	// Names are the traced quantities: log_joint, log_lik and every latent
	// scalar, in the file's order.
	Names []string
	// Chains are the chains' numbers, in order of first appearance.
	Chains []int
	// Iter[k] are the iterations of chain Chains[k]; Values[k][j][i] is
	// quantity Names[j] at Iter[k][i].
	Iter   [][]float64
	Values [][][]float64
}

// ReadTrace reads a trace.csv: a header chain,iteration,NAME,... and one
// row per kept iteration per chain.
func ReadTrace(r io.Reader) (*Trace, error) {
	cr := csv.NewReader(r)
	head, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty trace: no header")
		}
		return nil, err
	}
	if len(head) < 3 || head[0] != "chain" || head[1] != "iteration" {
		return nil, fmt.Errorf("header %q: want chain,iteration,NAME,...", head)
	}
	t := &Trace{Names: slices.Clone(head[2:])}
	chain := map[int]int{}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		row := make([]float64, len(rec))
		for j, s := range rec {
			x, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d, column %q: %q is not a number", line, head[j], s)
			}
			row[j] = x
		}
		id := int(row[0])
		k, ok := chain[id]
		if !ok {
			k = len(t.Chains)
			chain[id] = k
			t.Chains = append(t.Chains, id)
			t.Iter = append(t.Iter, nil)
			t.Values = append(t.Values, make([][]float64, len(t.Names)))
		}
		t.Iter[k] = append(t.Iter[k], row[1])
		for j := range t.Names {
			t.Values[k][j] = append(t.Values[k][j], row[2+j])
		}
	}
	if len(t.Chains) == 0 {
		return nil, errors.New("the trace has no rows (no iteration was kept yet)")
	}
	return t, nil
}

// ReadTraceFile reads a trace.csv with ReadTrace.
func ReadTraceFile(path string) (*Trace, error) {
	return readFile(path, ReadTrace)
}

// Mean returns the mean of quantity name over every chain, and false if
// the trace has no such column.
func (t *Trace) Mean(name string) (float64, bool) {
	j := slices.Index(t.Names, name)
	if j < 0 {
		return 0, false
	}
	sum, n := 0.0, 0
	for k := range t.Chains {
		for _, x := range t.Values[k][j] {
			sum += x
			n++
		}
	}
	return sum / float64(n), n > 0
}

// TraceOptions controls TracePlot.
type TraceOptions struct {
	// Title is drawn above the panels.
	Title string
	// Names selects the quantities to draw, in order; nil draws every one.
	Names []string
}

// TracePlot draws one panel per quantity, stacked, with iteration across
// and one colour per chain.
func TracePlot(t *Trace, opt TraceOptions) (*Figure, error) {
	names := opt.Names
	if names == nil {
		names = t.Names
	}
	cols := make([]int, len(names))
	for i, name := range names {
		cols[i] = slices.Index(t.Names, name)
		if cols[i] < 0 {
			return nil, fmt.Errorf("the trace has no column %q", name)
		}
	}
	if len(names) == 0 {
		return nil, errors.New("no quantities to plot")
	}
	var plots [][]*gplot.Plot
	for i, j := range cols {
		p := newPlot()
		p.Y.Label.Text = names[i]
		if i == len(cols)-1 {
			p.X.Label.Text = "iteration"
		}
		for k := range t.Chains {
			xys := make(plotter.XYs, len(t.Iter[k]))
			for r := range xys {
				xys[r].X, xys[r].Y = t.Iter[k][r], t.Values[k][j][r]
			}
			l, err := plotter.NewLine(xys)
			if err != nil {
				return nil, fmt.Errorf("%s, chain %d: %w", names[i], t.Chains[k], err)
			}
			l.Color = qualitative[k%len(qualitative)]
			l.Width = 0.7
			p.Add(l)
		}
		plots = append(plots, []*gplot.Plot{p})
	}
	// The same iteration range in every panel.
	xmin, xmax := plots[0][0].X.Min, plots[0][0].X.Max
	for _, row := range plots {
		xmin, xmax = min(xmin, row[0].X.Min), max(xmax, row[0].X.Max)
	}
	for _, row := range plots {
		row[0].X.Min, row[0].X.Max = xmin, xmax
	}
	var es []legendEntry
	for k, id := range t.Chains {
		es = append(es, legendEntry{label: fmt.Sprintf("chain %d", id), thumb: lineThumb(qualitative[k%len(qualitative)])})
	}
	lg := legend{entries: es}
	width := 7 * vg.Inch
	panel := vg.Length(1.5 * vg.Inch)
	sub := fmt.Sprintf("%d chains, %d kept iterations each", len(t.Chains), len(t.Iter[0]))
	height := headerHeight(opt.Title, sub, width) + lg.height(width-2*margin) + vg.Length(len(cols))*panel + 2*margin
	f := &Figure{Width: width, Height: height}
	f.draw = func(c draw.Canvas) {
		c = header(c, opt.Title, sub)
		c = lg.draw(draw.Crop(c, margin, -margin, 0, 0))
		c = draw.Crop(c, margin, -margin, margin, 0)
		tiles := draw.Tiles{Rows: len(cols), Cols: 1, PadY: 4}
		canvases := gplot.Align(plots, tiles, c)
		for i := range plots {
			plots[i][0].Draw(canvases[i][0])
		}
	}
	return f, nil
}
