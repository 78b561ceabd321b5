package plot

import (
	"encoding/csv"
	"errors"
	"fmt"
	"image"
	"image/color"
	"io"
	"math"
	"strconv"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Matrix is a square matrix with named rows, such as a run's coclust.csv.
type Matrix struct {
	// Names are the rows' (and columns') names.
	Names []string
	// Values holds the entries row-major.
	Values []float64
}

// At returns entry (i, j).
func (m *Matrix) At(i, j int) float64 { return m.Values[i*len(m.Names)+j] }

// ReadCoclust reads a coclust.csv: a header of an empty cell and N names,
// then N rows, each its name and N numbers.
func ReadCoclust(r io.Reader) (*Matrix, error) {
	cr := csv.NewReader(r)
	head, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty file")
		}
		return nil, err
	}
	n := len(head) - 1
	if n < 1 {
		return nil, errors.New("the header names no rows")
	}
	m := &Matrix{Names: head[1:], Values: make([]float64, 0, n*n)}
	for i := range n {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%d rows, want %d", i, n)
		}
		if err != nil {
			return nil, err
		}
		if rec[0] != m.Names[i] {
			return nil, fmt.Errorf("line %d names row %q, want %q (the header's order)", i+2, rec[0], m.Names[i])
		}
		for j, s := range rec[1:] {
			x, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d, column %d: %q is not a number", i+2, j+2, s)
			}
			m.Values = append(m.Values, x)
		}
	}
	if _, err := cr.Read(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("more than the %d rows the header names", n)
	}
	return m, nil
}

// ReadCoclustFile reads a file with ReadCoclust.
func ReadCoclustFile(path string) (*Matrix, error) {
	return readFile(path, ReadCoclust)
}

// HeatmapOptions controls Heatmap.
type HeatmapOptions struct {
	// Title is drawn above the map.
	Title string
	// Order lists the rows to draw, top to bottom (and the columns, left to
	// right), by name; nil keeps the matrix's order. Every name must be a
	// row of the matrix, each once.
	Order []string
	// Classes adds a strip of class colours left of the rows and above the
	// columns.
	Classes Classes
	// OrderNote says what the order is, for the subtitle ("the order of
	// the summary tree's leaves").
	OrderNote string
	// Label is the meaning of the values, written under the colour scale.
	Label string
	// Min and Max fix the ends of the colour scale; nil takes the
	// smallest entry rounded down to a tenth and the largest rounded up.
	Min, Max *float64
}

// maxTickLabels is the largest N for which rows are named on the axes.
const maxTickLabels = 80

// Heatmap draws a matrix as a square of coloured cells (light for small
// values, dark for large ones), rows top to bottom and columns left to
// right in the given order, with a colour scale under it. Rows are named
// on both axes up to 80 rows.
func Heatmap(m *Matrix, opt HeatmapOptions) (*Figure, error) {
	n := len(m.Names)
	if len(m.Values) != n*n {
		return nil, fmt.Errorf("matrix has %d values for %d rows", len(m.Values), n)
	}
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	if opt.Order != nil {
		if len(opt.Order) != n {
			return nil, fmt.Errorf("order names %d rows, the matrix has %d", len(opt.Order), n)
		}
		at := make(map[string]int, n)
		for i, name := range m.Names {
			at[name] = i
		}
		used := make([]bool, n)
		for k, name := range opt.Order {
			i, ok := at[name]
			if !ok {
				return nil, fmt.Errorf("order names %q, which is not a row of the matrix", name)
			}
			if used[i] {
				return nil, fmt.Errorf("order names %q twice", name)
			}
			used[i] = true
			perm[k] = i
		}
	}
	names := make([]string, n)
	for k, i := range perm {
		names[k] = m.Names[i]
	}
	// The colour scale runs from the smallest entry (rounded down to a
	// tenth) to the largest (rounded up), so that the map uses all colours.
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range m.Values {
		if !math.IsNaN(x) {
			lo, hi = min(lo, x), max(hi, x)
		}
	}
	if math.IsInf(lo, 0) {
		lo, hi = 0, 1
	}
	lo, hi = math.Floor(lo*10)/10, math.Ceil(hi*10)/10
	if hi <= lo {
		hi = lo + 0.1
	}
	if opt.Min != nil {
		lo = *opt.Min
	}
	if opt.Max != nil {
		hi = *opt.Max
	}
	if !(hi > lo) {
		return nil, fmt.Errorf("colour scale from %v to %v is empty", lo, hi)
	}
	scaled := func(x float64) color.RGBA { return sequential((x - lo) / (hi - lo)) }
	img := cellImage(n, func(a, b int) float64 { return m.At(perm[a], perm[b]) }, scaled)
	p := newPlot()
	p.Add(plotter.NewImage(img, 0, 0, float64(n), float64(n)))
	var idx []int
	var cnames []string
	strip := 0.0
	if opt.Classes != nil {
		idx, cnames = opt.Classes.index(names)
		strip = max(0.6, float64(n)/40)
		s := max(1, (1200+n-1)/n) // pixels a cell, as in the map
		col := image.NewRGBA(image.Rect(0, 0, 4, n*s))
		row := image.NewRGBA(image.Rect(0, 0, n*s, 4))
		for k := range n {
			clr := noClass
			if idx[k] >= 0 {
				clr, _ = classColor(idx[k])
			}
			for a := k * s; a < (k+1)*s; a++ {
				for b := range 4 {
					col.SetRGBA(b, a, clr)
					row.SetRGBA(a, b, clr)
				}
			}
		}
		gapc := strip / 3
		p.Add(plotter.NewImage(col, -strip-gapc, 0, -gapc, float64(n)))
		p.Add(plotter.NewImage(row, 0, float64(n)+gapc, float64(n), float64(n)+gapc+strip))
	}
	fs := vg.Length(0)
	if n <= maxTickLabels {
		fs = min(9, max(5, 240/vg.Length(n)))
		var xt, yt []gplot.Tick
		for k, name := range names {
			xt = append(xt, gplot.Tick{Value: float64(k) + 0.5, Label: name + "  "})
			yt = append(yt, gplot.Tick{Value: float64(n-1-k) + 0.5, Label: name})
		}
		p.X.Tick.Marker = gplot.ConstantTicks(xt)
		p.Y.Tick.Marker = gplot.ConstantTicks(yt)
		p.X.Tick.Label.Font.Size, p.Y.Tick.Label.Font.Size = fs, fs
		p.X.Tick.Label.Rotation = 1.5707963267948966
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
		p.Y.Tick.Length, p.X.Tick.Length = 2, 2
	} else {
		p.X.Tick.Marker = gplot.ConstantTicks(nil)
		p.Y.Tick.Marker = gplot.ConstantTicks(nil)
		p.X.Label.Text = fmt.Sprintf("%d columns", n)
		p.Y.Label.Text = fmt.Sprintf("%d rows", n)
	}
	p.X.Min, p.Y.Min = -strip-strip/3, 0
	p.X.Max, p.Y.Max = float64(n), float64(n)+strip+strip/3
	p.X.Padding, p.Y.Padding = 0, 0
	p.X.LineStyle.Width, p.Y.LineStyle.Width = 0, 0

	// The colour scale.
	scale := newPlot()
	grad := image.NewRGBA(image.Rect(0, 0, 256, 1))
	for x := range 256 {
		grad.SetRGBA(x, 0, sequential(float64(x)/255))
	}
	scale.Add(plotter.NewImage(grad, lo, 0, hi, 1))
	scale.X.Min, scale.X.Max, scale.Y.Min, scale.Y.Max = lo, hi, 0, 1
	scale.HideY()
	scale.X.Label.Text = opt.Label
	scale.X.Padding = 0

	var lg legend
	if idx != nil {
		lg = legend{title: "class:", entries: classLegend(idx, cnames)}
	}
	width := vg.Length(7.5 * vg.Inch)
	scaleH := vg.Length(0.8 * vg.Inch)
	sub := fmt.Sprintf("N = %d; rows top to bottom and columns left to right in the same order", n)
	if opt.OrderNote != "" {
		sub = fmt.Sprintf("N = %d; rows top to bottom and columns left to right in %s", n, opt.OrderNote)
	}
	height := headerHeight(opt.Title, sub, width) + lg.height(width-2*margin) + (width - 2*margin) + scaleH + 2*margin
	f := &Figure{Width: width, Height: height}
	f.draw = func(c draw.Canvas) {
		c = header(c, opt.Title, sub)
		c = lg.draw(draw.Crop(c, margin, -margin, 0, 0))
		bottom := draw.Crop(c, width/5, -width/5, margin, 0)
		bottom.Max.Y = bottom.Min.Y + scaleH
		scale.Draw(bottom)
		c.Min.Y += scaleH + margin
		p.Draw(draw.Crop(c, margin, -margin, 0, 0))
	}
	return f, nil
}

// maxCellPixels is the largest side of the heat map's image: above it,
// each pixel is the mean of a block of cells.
const maxCellPixels = 2000

// cellImage renders an n×n matrix: each cell s×s pixels (so that scaling
// blurs only the cells' edges) up to 1200 pixels a side, and above
// maxCellPixels rows, each pixel the mean of a k×k block of cells (NaN
// cells left out), so that the image stays within maxCellPixels a side.
func cellImage(n int, at func(a, b int) float64, clr func(float64) color.RGBA) *image.RGBA {
	if n > maxCellPixels {
		k := (n + maxCellPixels - 1) / maxCellPixels
		side := (n + k - 1) / k
		img := image.NewRGBA(image.Rect(0, 0, side, side))
		for y := range side {
			for x := range side {
				sum, cnt := 0.0, 0
				for a := y * k; a < min((y+1)*k, n); a++ {
					for b := x * k; b < min((x+1)*k, n); b++ {
						if v := at(a, b); !math.IsNaN(v) {
							sum += v
							cnt++
						}
					}
				}
				v := nan
				if cnt > 0 {
					v = sum / float64(cnt)
				}
				img.SetRGBA(x, y, clr(v))
			}
		}
		return img
	}
	s := max(1, (1200+n-1)/n)
	img := image.NewRGBA(image.Rect(0, 0, n*s, n*s))
	for a := range n {
		for b := range n {
			c := clr(at(a, b))
			for y := a * s; y < (a+1)*s; y++ {
				for x := b * s; x < (b+1)*s; x++ {
					img.SetRGBA(x, y, c)
				}
			}
		}
	}
	return img
}
