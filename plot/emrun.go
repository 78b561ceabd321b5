package plot

import (
	"fmt"
	"path/filepath"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/pydtlang/pydtlang/inference"
)

// emFigures makes the pictures of an EM run (see RunFigures).
func emFigures(dir string, opt RunOptions) (figs []Named, notes []string, err error) {
	if opt.Tree != "" && opt.Tree != "map" {
		return nil, nil, fmt.Errorf("%s holds an EM run, which has one tree to draw, map.nwk (the best tree by the value it is ranked by): --tree map, or leave --tree out", dir)
	}
	res, err := inference.ReadEMResult(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w (did the EM run stop before its end?)", dir, err)
	}
	kind := emValueKind(res)
	// The short name of the ranked value (summary.json's ranked_by, which
	// ReadEMResult supplies for runs written before it).
	short := res.RankedBy
	file := inference.MapFile
	var labels []string
	if opt.Model != nil {
		labels = opt.Model.Labels
	}
	path := filepath.Join(dir, file)
	tr, _, err := ReadLabeledNewick(path, labels)
	if err != nil && labels != nil {
		notes = append(notes, fmt.Sprintf("no tree-over-data picture: the data's rows do not match the leaves of %s: %v", file, err))
		opt.Model = nil
		tr, _, err = ReadLabeledNewick(path, nil)
	}
	if err != nil {
		return nil, nil, err
	}
	if err := nameRows(tr, file, &opt, nil); err != nil {
		return nil, nil, err
	}
	dg, err := Dendrogram(tr, DendrogramOptions{
		Title:    "Best EM tree (" + file + ")",
		Subtitle: fmt.Sprintf("The K-best search's tree with the highest EM objective, %s: %s", kind, minusSign(fmt.Sprintf("%.6g", res.Bound))),
		Classes:  opt.Classes,
		Axis:     opt.Axis,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("dendrogram of %s: %w", file, err)
	}
	figs = append(figs, Named{"dendrogram", dg})
	if opt.Model != nil {
		sc, note, err := treeOverData(opt.Model, tr, file, nil, opt.Classes, res.Value,
			"the EM estimates of the hyperparameters (variational posterior means; point estimates of alpha and beta)")
		if err != nil {
			return nil, nil, err
		}
		if sc != nil {
			figs = append(figs, Named{"tree-data", sc})
		} else {
			notes = append(notes, note)
		}
	}
	bp, err := BoundPlot(res.BoundTrace, res.BoundTime, "Best "+short+" of the EM search ("+inference.SummaryFile+")", kind, "best "+short, res.LaplaceFallbacks)
	if err != nil {
		return nil, nil, err
	}
	figs = append(figs, Named{"bound", bp})
	return figs, notes, nil
}

// emValueKind describes the value an EM run ranked its trees by, for the
// pictures' subtitles. (g, not u: u also names a probit layer's
// auxiliaries.)
func emValueKind(res *inference.EMResult) string {
	switch {
	case res.Approximate:
		return "EP's approximation of log p(Y, g, alpha, beta | tree), g the log gaps of " + sOfT
	case res.TimesIntegrated:
		return "the EM bound plus the Laplace correction for the times, an approximation of log p(Y, alpha, beta | tree) (not a bound)"
	}
	return "a lower bound on log p(Y, g, alpha, beta | tree), g the log gaps of " + sOfT
}

// BoundPlot draws the best bound of an EM search against the round:
// trace[0] after the initial tree, trace[r] after round r; and, when
// times holds the wall time of each entry (summary.json's
// bound_time_seconds), in a second panel against the wall time, the curve
// the benchmarks ask for. what names the value (the bound, or
// bound + Laplace correction, or EP's value) and ylabel is its short name.
// fallbacks (summary.json's laplace_fallbacks) are the trees whose Laplace
// correction failed at first: each round with one is marked on the curve
// (a ring where a tree was refitted from perturbed times, a cross where
// one was kept without the correction, ranked by its bound alone), and the
// subtitle counts them. A mark sits at the round's best value, on the
// curve, not at the tree's own value: laplace_fallbacks records the round,
// not the value, and the tree need not have made the K-best list.
func BoundPlot(trace, times []float64, title, what, ylabel string, fallbacks []inference.LaplaceFallback) (*Figure, error) {
	if len(trace) == 0 {
		return nil, fmt.Errorf("no bound to draw")
	}
	// The rounds with a fallback of each kind (an initial tree's is round
	// 0); a round past the trace (a damaged summary) is not drawn.
	var refit, kept []int
	nRefit := 0
	for _, f := range fallbacks {
		r := 0
		if f.Start == "candidate" {
			r = f.Round
		}
		if f.Refitted() {
			nRefit++
		}
		if r < 0 || r >= len(trace) {
			continue
		}
		if f.Refitted() {
			refit = append(refit, r)
		} else {
			kept = append(kept, r)
		}
	}
	marks := []struct {
		rounds []int
		label  string
		shape  draw.GlyphDrawer
	}{
		{refit, "Laplace correction failed, tree refitted", draw.RingGlyph{}},
		{kept, "Laplace correction unavailable, ranked by bound", draw.CrossGlyph{}},
	}
	// The legend of the marks is drawn under the subtitle, not in a
	// panel, where it covered the marks of the first rounds.
	var lg legend
	for i, m := range marks {
		if len(m.rounds) > 0 {
			lg.entries = append(lg.entries, legendEntry{m.label, glyphThumb(qualitative[1+i], m.shape)})
		}
	}
	lo, hi := padRange(trace)
	panel := func(xlabel string, x func(r int) float64) (*gplot.Plot, error) {
		p := newPlot()
		p.X.Label.Text = xlabel
		p.Y.Label.Text = ylabel
		// The curve stays clear of the panel's edges (the last value
		// was drawn on the top edge, against the subtitle).
		p.Y.Min, p.Y.Max = lo, hi
		xys := make(plotter.XYs, len(trace))
		for r, b := range trace {
			xys[r].X, xys[r].Y = x(r), b
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("bound: %w", err)
		}
		l.Color = qualitative[0]
		l.Width = 0.7
		p.Add(l)
		for i, m := range marks {
			if len(m.rounds) == 0 {
				continue
			}
			pts := make(plotter.XYs, len(m.rounds))
			for j, r := range m.rounds {
				pts[j].X, pts[j].Y = x(r), trace[r]
			}
			sc, err := plotter.NewScatter(pts)
			if err != nil {
				return nil, fmt.Errorf("bound: %w", err)
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: qualitative[1+i], Radius: vg.Points(3.5), Shape: m.shape}
			p.Add(sc)
		}
		return p, nil
	}
	rounds, err := panel("search round (0: the initial tree)", func(r int) float64 { return float64(r) })
	if err != nil {
		return nil, err
	}
	var wall *gplot.Plot
	sub := "the best tree's objective, " + what + ", after each round"
	if len(times) == len(trace) {
		if wall, err = panel("wall time (s)", func(r int) float64 { return times[r] }); err != nil {
			return nil, err
		}
		sub += "; right: against the wall time of the run"
	}
	cut := 0
	for _, f := range fallbacks {
		if f.CutShort() {
			cut++
		}
	}
	plural := func(n int) string {
		if n == 1 {
			return "tree"
		}
		return "trees"
	}
	if n := len(fallbacks) - cut; n > 0 {
		sub += fmt.Sprintf(". The Laplace correction failed at first for %d %s (summary.json laplace_fallbacks): %d refitted from perturbed times, %d kept without it, ranked by the bound alone after every tree with it",
			n, plural(n), nRefit, n-nRefit)
	}
	if cut > 0 {
		sub += fmt.Sprintf(". %d %s cut short by --time, kept without the correction, ranked likewise", cut, plural(cut))
	}
	if len(fallbacks) > 0 {
		sub += "; marked on the curve at their round (not at their own value)"
	}
	width := 7 * vg.Inch
	if wall != nil {
		width = 10 * vg.Inch
	}
	height := headerHeight(title, sub, width) + lg.height(width-2*margin) + 3*vg.Inch + 2*margin
	f := &Figure{Width: width, Height: height}
	f.draw = func(c draw.Canvas) {
		c = header(c, title, sub)
		c = lg.draw(draw.Crop(c, margin, -margin, 0, 0))
		c = draw.Crop(c, margin, -margin, margin, 0)
		if wall == nil {
			rounds.Draw(c)
			return
		}
		half := (c.Max.X - c.Min.X) / 2
		rounds.Draw(draw.Crop(c, 0, -half-margin/2, 0, 0))
		wall.Draw(draw.Crop(c, half+margin/2, 0, 0, 0))
	}
	return f, nil
}

// padRange is the range of the y axis of a curve of the values v: their
// range widened by 6% of it on each side (by 1 when the values are all
// equal), so that no value is drawn on the panel's edge.
func padRange(v []float64) (lo, hi float64) {
	lo, hi = v[0], v[0]
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	pad := 0.06 * (hi - lo)
	if !(pad > 0) {
		pad = 1
	}
	return lo - pad, hi + pad
}
