package plot

import (
	"image/color"
	"math"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// qualitative is a palette of distinguishable colours (Tableau 10, then
// the darker halves of Tableau 20's lighter tones).
var qualitative = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x2c, 0xa0, 0x2c, 0xff}, {0xd6, 0x27, 0x28, 0xff},
	{0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff}, {0xe3, 0x77, 0xc2, 0xff}, {0x7f, 0x7f, 0x7f, 0xff},
	{0xbc, 0xbd, 0x22, 0xff}, {0x17, 0xbe, 0xcf, 0xff}, {0x39, 0x3b, 0x79, 0xff}, {0x63, 0x79, 0x39, 0xff},
	{0x8c, 0x6d, 0x31, 0xff}, {0x84, 0x3c, 0x39, 0xff}, {0x7b, 0x41, 0x73, 0xff}, {0x52, 0x54, 0xa3, 0xff},
}

// shapes are the glyphs that tell classes apart once the colours are used
// up.
var shapes = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}, draw.PyramidGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}}

// classColor returns the colour and shape of class number k.
func classColor(k int) (color.RGBA, draw.GlyphDrawer) {
	return qualitative[k%len(qualitative)], shapes[(k/len(qualitative))%len(shapes)]
}

// credColor returns the fill of a branch point of clade credibility p: white
// for 0, black for 1; NaN (unknown) is white.
func credColor(p float64) color.Gray {
	if math.IsNaN(p) {
		return color.Gray{Y: 0xff}
	}
	p = min(max(p, 0), 1)
	return color.Gray{Y: uint8(math.Round(255 * (1 - p)))}
}

// drawCredGlyph draws a branch point of credibility p at pt: a disc filled
// by credColor with a black rim.
func drawCredGlyph(c *draw.Canvas, pt vg.Point, r vg.Length, p float64) {
	c.DrawGlyphNoClip(draw.GlyphStyle{Color: credColor(p), Radius: r, Shape: draw.CircleGlyph{}}, pt)
	c.DrawGlyphNoClip(draw.GlyphStyle{Color: color.Black, Radius: r, Shape: draw.RingGlyph{}}, pt)
}

// viridis anchors, interpolated by sequential.
var viridis = []color.RGBA{
	{0x44, 0x01, 0x54, 0xff}, {0x48, 0x28, 0x78, 0xff}, {0x3e, 0x4a, 0x89, 0xff}, {0x31, 0x68, 0x8e, 0xff},
	{0x26, 0x82, 0x8e, 0xff}, {0x1f, 0x9e, 0x89, 0xff}, {0x35, 0xb7, 0x79, 0xff}, {0x6d, 0xcd, 0x59, 0xff},
	{0xb4, 0xde, 0x2c, 0xff}, {0xfd, 0xe7, 0x25, 0xff},
}

// sequential maps v in [0, 1] to a colour of the viridis scale (reversed:
// 0 is light, 1 is dark, so that strong co-clustering stands out). NaN is
// light grey.
func sequential(v float64) color.RGBA {
	if math.IsNaN(v) {
		return color.RGBA{0xdd, 0xdd, 0xdd, 0xff}
	}
	v = 1 - min(max(v, 0), 1)
	x := v * float64(len(viridis)-1)
	i := min(int(x), len(viridis)-2)
	f := x - float64(i)
	a, b := viridis[i], viridis[i+1]
	mix := func(p, q uint8) uint8 { return uint8(math.Round(float64(p)*(1-f) + float64(q)*f)) }
	return color.RGBA{mix(a.R, b.R), mix(a.G, b.G), mix(a.B, b.B), 0xff}
}

// legendEntry is one item of a horizontal legend: a thumbnail drawn in a
// square and a text.
type legendEntry struct {
	label string
	thumb func(c *draw.Canvas, center vg.Point, size vg.Length)
}

// glyphThumb draws a glyph as a legend thumbnail.
func glyphThumb(clr color.Color, shape draw.GlyphDrawer) func(*draw.Canvas, vg.Point, vg.Length) {
	return func(c *draw.Canvas, pt vg.Point, size vg.Length) {
		c.DrawGlyphNoClip(draw.GlyphStyle{Color: clr, Radius: size / 3, Shape: shape}, pt)
	}
}

// lineThumb draws a line segment as a legend thumbnail.
func lineThumb(clr color.Color) func(*draw.Canvas, vg.Point, vg.Length) {
	return func(c *draw.Canvas, pt vg.Point, size vg.Length) {
		c.StrokeLine2(draw.LineStyle{Color: clr, Width: 2}, pt.X-size/2, pt.Y, pt.X+size/2, pt.Y)
	}
}

// credThumb draws a branch point of credibility p as a legend thumbnail.
func credThumb(p float64) func(*draw.Canvas, vg.Point, vg.Length) {
	return func(c *draw.Canvas, pt vg.Point, size vg.Length) { drawCredGlyph(c, pt, size/3, p) }
}

// legend lays entries out left to right in rows no wider than width, after
// an optional leading title.
type legend struct {
	title   string
	entries []legendEntry
}

const legendGap = vg.Length(10)

// rows splits the legend into rows of entries that fit in width, with the
// title (if any) leading the first row.
func (l legend) rows(width vg.Length) [][]int {
	width *= 0.94 // raster text is hinted a little wider than measured
	sty := textStyle(legendSize, color.Black)
	th := legendSize
	x := vg.Length(0)
	if l.title != "" {
		x = sty.Width(l.title) + legendGap/2
	}
	var rows [][]int
	var row []int
	for i, e := range l.entries {
		w := th + 3 + sty.Width(e.label)
		if len(row) > 0 && x+w > width {
			rows = append(rows, row)
			row, x = nil, 0
		}
		row = append(row, i)
		x += w + legendGap
	}
	if len(row) > 0 || l.title != "" {
		rows = append(rows, row)
	}
	return rows
}

// height returns the height of the legend laid out in width.
func (l legend) height(width vg.Length) vg.Length {
	n := len(l.rows(width))
	if n == 0 {
		return 0
	}
	return vg.Length(n)*legendSize*1.5 + 4
}

// draw draws the legend at the top of c, centred, and returns the canvas
// below it.
func (l legend) draw(c draw.Canvas) draw.Canvas {
	width := c.Max.X - c.Min.X
	rows := l.rows(width)
	if len(rows) == 0 {
		return c
	}
	sty := textStyle(legendSize, color.Black)
	th := legendSize
	lh := legendSize * 1.5
	y := c.Max.Y - lh/2
	for r, row := range rows {
		// Row width, to centre it.
		w := vg.Length(0)
		if r == 0 && l.title != "" {
			w += sty.Width(l.title) + legendGap/2
		}
		for k, i := range row {
			if k > 0 {
				w += legendGap
			}
			w += th + 3 + sty.Width(l.entries[i].label)
		}
		x := c.Min.X + (width-w)/2
		if r == 0 && l.title != "" {
			c.FillText(sty, vg.Point{X: x, Y: y}, l.title)
			x += sty.Width(l.title) + legendGap/2
		}
		for _, i := range row {
			e := l.entries[i]
			e.thumb(&c, vg.Point{X: x + th/2, Y: y}, th)
			x += th + 3
			c.FillText(sty, vg.Point{X: x, Y: y}, e.label)
			x += sty.Width(e.label) + legendGap
		}
		y -= lh
	}
	c.Max.Y -= l.height(width)
	return c
}
