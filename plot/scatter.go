package plot

import (
	"errors"
	"fmt"
	"image/color"
	"math"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// dataColor is the colour of data points without classes, and leafColor
// that of leaves drawn apart from their data.
var (
	dataColor = qualitative[0]
	leafColor = color.Gray{Y: 0x50}
)

// ScatterOptions controls TreeScatter.
type ScatterOptions struct {
	// Title and Subtitle are drawn above the picture; the subtitle is the
	// place to say where the branch points' locations come from.
	Title, Subtitle string
	// XLabel and YLabel name the two columns.
	XLabel, YLabel string
	// Credibility shades the branch points as in Dendrogram; nil draws
	// them grey.
	Credibility map[pydt.NodeID]float64
	// Classes colours the data points.
	Classes Classes
	// Names writes each point's label next to it; it is done anyway for
	// up to 40 points unless NoNames is set.
	Names, NoNames bool
	// Data, when not nil, holds the observed points (N rows of two values)
	// where they differ from the leaves' locations, as with a noise model:
	// the points are drawn there, each joined to its leaf by a dotted
	// line, and the leaves are small grey dots.
	Data []float64
}

// TreeScatter draws 2-D data with a tree over it, as the paper's
// Figure 1: every node of tr at its location loc[2v], loc[2v+1] (the
// leaves are the data; branch points at, say, their posterior mean
// locations from MeanLocations), each edge a straight line from a node to
// its parent.
func TreeScatter(tr *pydt.Tree, loc []float64, opt ScatterOptions) (*Figure, error) {
	if tr == nil || tr.Root() == pydt.NoNode {
		return nil, errors.New("plot: the tree is empty")
	}
	if len(loc) != 2*tr.Cap() {
		return nil, fmt.Errorf("%d location values for a tree of %d nodes in 2 dimensions, want %d", len(loc), tr.Cap(), 2*tr.Cap())
	}
	post := tr.PostOrder(nil)
	for _, v := range post {
		if x, y := loc[2*v], loc[2*v+1]; math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
			what := "branch point"
			if tr.IsLeaf(v) {
				what = "leaf " + tr.Label(v)
			}
			return nil, fmt.Errorf("the location of %s is not finite (%v, %v); missing data cannot be drawn", what, x, y)
		}
	}
	n := tr.NumLeaves()
	if opt.Data != nil && len(opt.Data) != 2*n {
		return nil, fmt.Errorf("%d data values for %d leaves in 2 dimensions", len(opt.Data), n)
	}
	labels := make([]string, n)
	for i := range n {
		labels[i] = tr.Label(pydt.NodeID(i))
	}
	var idx []int
	var cnames []string
	if opt.Classes != nil {
		idx, cnames = opt.Classes.index(labels)
	}
	names := opt.Names || (n <= 40 && !opt.NoNames)

	p := newPlot()
	p.X.Label.Text, p.Y.Label.Text = opt.XLabel, opt.YLabel
	s := &treeScatter{tr: tr, loc: loc, data: opt.Data, post: post, idx: idx, cred: opt.Credibility, labels: labels, names: names}
	p.Add(s)
	// Equal scales on both axes.
	xmin, xmax, ymin, ymax := s.DataRange()
	span := max(xmax-xmin, ymax-ymin) * 1.06
	if span == 0 {
		span = 1
	}
	cx, cy := (xmin+xmax)/2, (ymin+ymax)/2
	p.X.Min, p.X.Max = cx-span/2, cx+span/2
	p.Y.Min, p.Y.Max = cy-span/2, cy+span/2

	var lg []legend
	if idx != nil {
		lg = append(lg, legend{title: "class:", entries: classLegend(idx, cnames)})
	} else {
		lg = append(lg, legend{entries: []legendEntry{{"data", glyphThumb(dataColor, draw.CircleGlyph{})}}})
	}
	if opt.Data != nil {
		lg[len(lg)-1].entries = append(lg[len(lg)-1].entries, legendEntry{"leaf (latent location)", glyphThumb(leafColor, draw.CircleGlyph{})})
	}
	if opt.Credibility != nil {
		lg = append(lg, legend{title: "branch points, by clade credibility:", entries: []legendEntry{
			{"0", credThumb(0)}, {"0.5", credThumb(0.5)}, {"1", credThumb(1)}}})
	} else {
		lg[len(lg)-1].entries = append(lg[len(lg)-1].entries, legendEntry{"branch point", credThumb(0.5)})
	}
	width := vg.Length(6.5 * vg.Inch)
	lgH := vg.Length(0)
	for _, l := range lg {
		lgH += l.height(width - 2*margin)
	}
	height := headerHeight(opt.Title, opt.Subtitle, width) + lgH + width - 30
	f := &Figure{Width: width, Height: height}
	f.draw = func(c draw.Canvas) {
		c = header(c, opt.Title, opt.Subtitle)
		for _, l := range lg {
			c = l.draw(draw.Crop(c, margin, -margin, 0, 0))
		}
		p.Draw(draw.Crop(c, margin, -margin, margin, 0))
	}
	return f, nil
}

// treeScatter is the gplot.Plotter of TreeScatter.
type treeScatter struct {
	tr     *pydt.Tree
	loc    []float64
	data   []float64
	post   []pydt.NodeID
	idx    []int
	cred   map[pydt.NodeID]float64
	labels []string
	names  bool
}

// DataRange implements gplot.DataRanger.
func (s *treeScatter) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, ymin = math.Inf(1), math.Inf(1)
	xmax, ymax = math.Inf(-1), math.Inf(-1)
	for _, v := range s.post {
		x, y := s.loc[2*v], s.loc[2*v+1]
		xmin, xmax = min(xmin, x), max(xmax, x)
		ymin, ymax = min(ymin, y), max(ymax, y)
	}
	for i := 0; i+1 < len(s.data); i += 2 {
		xmin, xmax = min(xmin, s.data[i]), max(xmax, s.data[i])
		ymin, ymax = min(ymin, s.data[i+1]), max(ymax, s.data[i+1])
	}
	return
}

// Plot implements gplot.Plotter.
func (s *treeScatter) Plot(c draw.Canvas, p *gplot.Plot) {
	trX, trY := p.Transforms(&c)
	pt := func(v pydt.NodeID) vg.Point { return vg.Point{X: trX(s.loc[2*v]), Y: trY(s.loc[2*v+1])} }
	edge := draw.LineStyle{Color: color.Gray{Y: 0x70}, Width: 0.7}
	for _, v := range s.post {
		if q := s.tr.Parent(v); q != pydt.NoNode {
			c.StrokeLines(edge, []vg.Point{pt(q), pt(v)})
		}
	}
	point := pt
	if s.data != nil {
		point = func(v pydt.NodeID) vg.Point { return vg.Point{X: trX(s.data[2*v]), Y: trY(s.data[2*v+1])} }
		dots := draw.LineStyle{Color: color.Gray{Y: 0x90}, Width: 0.5, Dashes: []vg.Length{1, 1.5}}
		for _, v := range s.post {
			if s.tr.IsLeaf(v) {
				c.StrokeLines(dots, []vg.Point{pt(v), point(v)})
			}
		}
		for _, v := range s.post {
			if s.tr.IsLeaf(v) {
				c.DrawGlyph(draw.GlyphStyle{Color: leafColor, Radius: 1.2, Shape: draw.CircleGlyph{}}, pt(v))
			}
		}
	}
	for _, v := range s.post {
		if !s.tr.IsLeaf(v) {
			continue
		}
		clr, shape := color.Color(dataColor), draw.GlyphDrawer(draw.CircleGlyph{})
		if s.idx != nil {
			clr, shape = noClass, shapes[0]
			if k := s.idx[v]; k >= 0 {
				clr, shape = classColor(k)
			}
		}
		c.DrawGlyph(draw.GlyphStyle{Color: clr, Radius: 2.6, Shape: shape}, point(v))
	}
	for _, v := range s.post {
		if s.tr.IsLeaf(v) {
			continue
		}
		pr := 0.5
		if s.cred != nil {
			var ok bool
			if pr, ok = s.cred[v]; !ok {
				pr = nan
			}
		}
		drawCredGlyph(&c, pt(v), 2.6, pr)
	}
	if s.names {
		sty := textStyle(7, color.Gray{Y: 0x30})
		for _, v := range s.post {
			if s.tr.IsLeaf(v) {
				q := point(v)
				c.FillText(sty, vg.Point{X: q.X + 3.5, Y: q.Y + 3}, s.labels[v])
			}
		}
	}
}
