package plot

import (
	"fmt"
	"image/color"
	"math"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

var nan = math.NaN()

// noClass is the colour of a leaf without a class.
var noClass = color.RGBA{0x99, 0x99, 0x99, 0xff}

// DendrogramOptions controls Dendrogram. The zero value draws an unshaded
// tree with black labels and sizes chosen from N.
type DendrogramOptions struct {
	// Title is drawn above the tree, and Subtitle under it (before a line
	// giving N).
	Title, Subtitle string
	// Credibility shades each branch point by its clade's posterior
	// probability, from white (0) to black (1); nil draws no branch point
	// markers. Branch points missing from a non-nil map are drawn white with
	// a black rim.
	Credibility map[pydt.NodeID]float64
	// Classes colours leaf labels and marks each leaf with its class's
	// glyph; leaves whose label has no class are grey.
	Classes Classes
	// FontSize of the leaf labels; 0 chooses from N (10 points up to 40
	// leaves, 8 up to 80, 7 above).
	FontSize vg.Length
	// TreeWidth is the width of the tree, not counting its labels; 0 is
	// 5 inches.
	TreeWidth vg.Length
	// Axis is the time axis's scale: AxisAuto (the zero value) draws s =
	// -log(1 - t) when the branch points crowd near t = 1
	// (Layout.Crowded) and t otherwise.
	Axis Axis
}

// leafFont returns the label size for n leaves.
func leafFont(n int) vg.Length {
	switch {
	case n <= 40:
		return 10
	case n <= 80:
		return 8
	}
	return 7
}

// Dendrogram draws tr with divergence time across, from t = 0 at the left
// to the leaves at t = 1 (on the scale opt.Axis), one row per leaf
// (Layout): every branch point is a
// vertical bar spanning its children, so multifurcations show as such. The
// height grows with N (a row is 1.3 times the label size), so that every
// label is readable at any N.
func Dendrogram(tr *pydt.Tree, opt DendrogramOptions) (*Figure, error) {
	lay, err := NewLayout(tr)
	if err != nil {
		return nil, err
	}
	if err := lay.SetAxis(opt.Axis); err != nil {
		return nil, err
	}
	n := tr.NumLeaves()
	fs := opt.FontSize
	if fs <= 0 {
		fs = leafFont(n)
	}
	treeW := opt.TreeWidth
	if treeW <= 0 {
		treeW = 5 * vg.Inch
	}
	labels := make([]string, n)
	for i := range n {
		labels[i] = tr.Label(pydt.NodeID(i))
	}
	var idx []int
	var names []string
	if opt.Classes != nil {
		idx, names = opt.Classes.index(labels)
	}
	lsty := textStyle(fs, color.Black)
	var labelW vg.Length
	for _, l := range labels {
		labelW = max(labelW, lsty.Width(l))
	}
	labelW *= 1.06 // raster text is hinted a little wider than measured
	gap := fs*0.4 + credRadius(fs*1.3)
	if idx != nil {
		gap += fs
	}

	// The legends.
	var lg []legend
	if idx != nil {
		lg = append(lg, legend{title: "class:", entries: classLegend(idx, names)})
	}
	if opt.Credibility != nil {
		lg = append(lg, legend{title: "clade credibility:", entries: []legendEntry{
			{"0", credThumb(0)}, {"0.25", credThumb(0.25)}, {"0.5", credThumb(0.5)}, {"0.75", credThumb(0.75)}, {"1", credThumb(1)}}})
	}

	width := treeW + labelW + gap + 2*margin + 50 // 50: the axis's overhang
	width = max(width, 5*vg.Inch)
	rowH := fs * 1.3
	lgH := vg.Length(0)
	for _, l := range lg {
		lgH += l.height(width - 2*margin)
	}
	sub := fmt.Sprintf("N = %d; divergence time t across; branch points at their times", n)
	if lay.Axis == AxisS {
		sub = fmt.Sprintf("N = %d; divergence time t across, spaced as "+sOfT+" to spread the times near 1 (0.9, 0.99, 0.999 equally apart); branch points at their times, leaves (t = 1, s = ∞) at the right end", n)
	}
	if opt.Subtitle != "" {
		sub = opt.Subtitle + ". " + sub
	}
	width = max(width, textStyle(titleSize, color.Black).Width(opt.Title)*1.06+2*margin)
	height := headerHeight(opt.Title, sub, width) + lgH + vg.Length(n)*rowH + 50 + 2*margin

	d := &dendro{tr: tr, lay: lay, labels: labels, idx: idx, cred: opt.Credibility, font: fs, gap: gap, labelW: labelW, rowH: rowH}
	f := &Figure{Width: width, Height: height}
	f.draw = func(c draw.Canvas) {
		c = header(c, opt.Title, sub)
		for _, l := range lg {
			c = l.draw(draw.Crop(c, margin, -margin, 0, 0))
		}
		p := newPlot()
		p.X.Min, p.X.Max = 0, lay.XMax
		p.X.Label.Text = axisLabel(lay.Axis)
		if lay.Axis == AxisS {
			p.X.Tick.Marker = gplot.ConstantTicks(sTicks(lay.XMax))
		}
		p.Y.Min, p.Y.Max = -0.5, float64(n)-0.5
		p.HideY()
		p.Y.Padding = 0
		p.Add(d)
		p.Draw(draw.Crop(c, margin, -margin, margin, 0))
	}
	return f, nil
}

// credRadius is the radius of a branch point's disc for rows of height h.
func credRadius(h vg.Length) vg.Length { return min(h*0.38, 3.5) }

// dendro is the gplot.Plotter of a dendrogram.
type dendro struct {
	tr     *pydt.Tree
	lay    *Layout
	labels []string
	idx    []int
	cred   map[pydt.NodeID]float64
	font   vg.Length
	gap    vg.Length
	labelW vg.Length
	rowH   vg.Length
}

// y converts a row (0 at the top) to the plot's y.
func (d *dendro) y(row float64) float64 { return float64(d.tr.NumLeaves()) - 1 - row }

// Plot implements gplot.Plotter.
func (d *dendro) Plot(c draw.Canvas, p *gplot.Plot) {
	trX, trY := p.Transforms(&c)
	tr, lay := d.tr, d.lay
	line := draw.LineStyle{Color: color.Black, Width: vg.Length(math.Min(1, float64(d.font)/8))}
	post := tr.PostOrder(nil)
	for _, v := range post {
		y := trY(d.y(lay.Row[v]))
		x := trX(lay.X[v])
		px := trX(0) // the root's stem starts at t = 0
		if p := tr.Parent(v); p != pydt.NoNode {
			px = trX(lay.X[p])
		}
		c.StrokeLines(line, []vg.Point{{X: px, Y: y}, {X: x, Y: y}})
		if !tr.IsLeaf(v) {
			s := lay.Span[v]
			c.StrokeLines(line, []vg.Point{{X: x, Y: trY(d.y(s[0]))}, {X: x, Y: trY(d.y(s[1]))}})
		}
	}
	if d.cred != nil {
		r := credRadius(d.rowH)
		for _, v := range post {
			if tr.IsLeaf(v) {
				continue
			}
			p, ok := d.cred[v]
			if !ok {
				p = nan
			}
			drawCredGlyph(&c, vg.Point{X: trX(lay.X[v]), Y: trY(d.y(lay.Row[v]))}, r, p)
		}
	}
	for _, v := range lay.Leaves {
		pt := vg.Point{X: trX(lay.XMax), Y: trY(d.y(lay.Row[v]))}
		sty := textStyle(d.font, color.Black)
		if d.idx != nil {
			clr, shape := color.Color(noClass), shapes[0]
			if k := d.idx[v]; k >= 0 {
				clr, shape = classColor(k)
			}
			c.DrawGlyphNoClip(draw.GlyphStyle{Color: clr, Radius: d.font * 0.4, Shape: shape}, vg.Point{X: pt.X + d.gap - d.font*0.7, Y: pt.Y})
		}
		c.FillText(sty, vg.Point{X: pt.X + d.gap, Y: pt.Y}, d.labels[v])
	}
}

// GlyphBoxes implements gplot.GlyphBoxer: room for the labels right of the
// leaves.
func (d *dendro) GlyphBoxes(*gplot.Plot) []gplot.GlyphBox {
	h := d.rowH / 2
	return []gplot.GlyphBox{{X: 1, Y: 0.5, Rectangle: vg.Rectangle{Min: vg.Point{X: 0, Y: -h}, Max: vg.Point{X: d.gap + d.labelW + 2, Y: h}}}}
}
