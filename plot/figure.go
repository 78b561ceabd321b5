package plot

import (
	"bufio"
	"errors"
	"fmt"
	"image/color"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Figure is a picture of a fixed size, drawn on demand in SVG or PNG.
type Figure struct {
	// Width and Height are the size of the picture.
	Width, Height vg.Length
	// DPI is the resolution of PNG output in dots per inch; 0 means
	// PNGDPI.
	DPI  int
	draw func(c draw.Canvas)
}

// Draw draws the figure on c, which should be Width × Height.
func (f *Figure) Draw(c draw.Canvas) { f.draw(c) }

// PNGDPI is the default resolution of PNG output, in dots per inch.
const PNGDPI = 96

// MaxPNGPixels bounds the size of a PNG picture (4 bytes a pixel in
// memory): a dendrogram of many thousand leaves is better written as SVG.
const MaxPNGPixels = 100_000_000

// Formats lists the output formats, by their file extension.
var Formats = []string{"svg", "png"}

// FormatOf returns the format of an output file from its extension: "svg"
// or "png".
func FormatOf(path string) (string, error) {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	for _, f := range Formats {
		if ext == f {
			return f, nil
		}
	}
	if ext == "" {
		return "", fmt.Errorf("%s: no file extension: want .svg or .png", path)
	}
	return "", fmt.Errorf("%s: unknown picture format %q: want .svg or .png", path, ext)
}

// Write draws the figure in format ("svg" or "png") to w. PNG is drawn at
// DPI (default PNGDPI) and compressed as much as image/png can.
func (f *Figure) Write(w io.Writer, format string) error {
	switch format {
	case "svg":
		c := vgsvg.New(f.Width, f.Height)
		dc := draw.New(c)
		dc.FillPolygon(color.White, []vg.Point{dc.Min, {X: dc.Max.X, Y: dc.Min.Y}, dc.Max, {X: dc.Min.X, Y: dc.Max.Y}})
		f.draw(dc)
		_, err := c.WriteTo(w)
		return err
	case "png":
		dpi := f.DPI
		if dpi <= 0 {
			dpi = PNGDPI
		}
		if px := f.Width.Dots(float64(dpi)) * f.Height.Dots(float64(dpi)); px > MaxPNGPixels {
			return fmt.Errorf("a %.0f × %.0f point picture at %d dpi has %.0f million pixels, more than the %d million a PNG may have here: write SVG, or lower --dpi",
				f.Width.Points(), f.Height.Points(), dpi, px/1e6, MaxPNGPixels/1000000)
		}
		c := vgimg.NewWith(vgimg.UseWH(f.Width, f.Height), vgimg.UseDPI(dpi), vgimg.UseBackgroundColor(color.White))
		f.draw(draw.New(rasterCanvas{c}))
		enc := png.Encoder{CompressionLevel: png.BestCompression}
		return enc.Encode(w, c.Image())
	}
	return fmt.Errorf("unknown picture format %q: want svg or png", format)
}

// rasterCanvas draws each character of a text by itself, at the position
// font.Face.Width gives it (the advances and kerning of the font's own
// units, unhinted), so that a PNG's text is drawn where its width was
// measured: every centred or right-aligned label, title and legend is
// placed by that width. The raster renderer, drawing a string whole, kerns
// at hinted pixel sizes instead, which at PNG resolutions lets letters
// swallow their neighbours ("LCA times" was drawn "LCAtimes", the space
// kerned against the A; "summary.nwk" was drawn "summarynwk", the period
// under the y's tail); drawing it unkerned (before session 24) kept them
// apart but made the drawn text wider than its measure, by about 0.8
// pixels a kerning pair at 96 dpi and 10 points.
type rasterCanvas struct{ *vgimg.Canvas }

// FillString draws str one character at a time, each at its offset in the
// measured width.
func (c rasterCanvas) FillString(f font.Face, pt vg.Point, str string) {
	for i, r := range str {
		if unicode.IsSpace(r) {
			continue
		}
		// The character's bytes in str: an invalid byte is one byte,
		// though range gives it as U+FFFD, three (TestPNGTextInvalidUTF8).
		_, n := utf8.DecodeRuneInString(str[i:])
		ch := str[i : i+n]
		// The width up to and with this character less its own advance:
		// the advances before it and its kerning against its left
		// neighbour.
		x := f.Width(str[:i+n]) - f.Width(ch)
		c.Canvas.FillString(f, vg.Point{X: pt.X + x, Y: pt.Y}, string(r))
	}
}

// Save writes the figure to path, in the format its extension names (.svg
// or .png). A file that cannot be written completely is removed.
func (f *Figure) Save(path string) (err error) {
	format, err := FormatOf(path)
	if err != nil {
		return err
	}
	file, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := file.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			err = errors.Join(fmt.Errorf("writing %s: %w", path, err), os.Remove(path))
		}
	}()
	bw := bufio.NewWriter(file)
	if err := f.Write(bw, format); err != nil {
		return err
	}
	return bw.Flush()
}

// sans is the typeface of every text.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// textStyle returns a left-aligned, vertically centred text style.
func textStyle(size vg.Length, clr color.Color) text.Style {
	return text.Style{
		Color:   clr,
		Font:    font.From(sans, size),
		Handler: gplot.DefaultTextHandler,
		XAlign:  draw.XLeft,
		YAlign:  draw.YCenter,
	}
}

// newPlot returns a plot whose texts are in the sans-serif face.
func newPlot() *gplot.Plot {
	p := gplot.New()
	for _, s := range []*text.Style{&p.Title.TextStyle, &p.X.Label.TextStyle, &p.Y.Label.TextStyle,
		&p.X.Tick.Label, &p.Y.Tick.Label, &p.Legend.TextStyle} {
		s.Font = font.From(sans, s.Font.Size)
	}
	p.X.Label.TextStyle.Font.Size = 11
	p.Y.Label.TextStyle.Font.Size = 11
	p.X.Tick.Marker = plainTicks{}
	p.Y.Tick.Marker = plainTicks{}
	return p
}

// plainTicks are gonum's default ticks with their labels written without
// trailing zeros: 25, 2.5 and 0.25, not "25.00", "2.50" and "0.250", and
// with a minus sign, −8000, not a hyphen, as the pictures' text writes it.
type plainTicks struct{}

// Ticks implements gplot.Ticker.
func (plainTicks) Ticks(lo, hi float64) []gplot.Tick {
	ticks := gplot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		ticks[i].Label = minusSign(trimZeros(ticks[i].Label))
	}
	return ticks
}

// minusSign writes a number's leading hyphen-minus and its exponent's as
// the minus sign U+2212 ("-8000" is "−8000", "-3e-05" is "−3e−05").
func minusSign(s string) string {
	s = strings.Replace(s, "e-", "e−", 1)
	if rest, ok := strings.CutPrefix(s, "-"); ok {
		return "−" + rest
	}
	return s
}

// trimZeros removes the trailing zeros of a decimal fraction ("52.50" is
// "52.5", "25.00" is "25"); a number with an exponent is left as it is.
func trimZeros(s string) string {
	if !strings.Contains(s, ".") || strings.ContainsAny(s, "eE") {
		return s
	}
	s = strings.TrimRight(s, "0")
	s = strings.TrimSuffix(s, ".")
	if s == "-0" {
		s = "0"
	}
	return s
}

// header draws a title (and an optional smaller subtitle under it) at the top
// of c and returns the canvas below them.
func header(c draw.Canvas, title, subtitle string) draw.Canvas {
	top := c.Max.Y - margin
	if title != "" {
		sty := textStyle(titleSize, color.Black)
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		c.FillText(sty, vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: top}, title)
		top -= sty.Height(title) + 2
	}
	if subtitle != "" {
		sty := textStyle(subtitleSize, color.Gray{Y: 0x40})
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		for _, line := range wrap(subtitle, sty, c.Max.X-c.Min.X-2*margin) {
			c.FillText(sty, vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: top}, line)
			top -= sty.Height(line) + 1
		}
		top--
	}
	c.Max.Y = top
	return c
}

// headerHeight is the height header takes in a canvas of the given width.
func headerHeight(title, subtitle string, width vg.Length) vg.Length {
	h := margin
	if title != "" {
		h += textStyle(titleSize, color.Black).Height(title) + 2
	}
	if subtitle != "" {
		sty := textStyle(subtitleSize, color.Black)
		for _, line := range wrap(subtitle, sty, width-2*margin) {
			h += sty.Height(line) + 1
		}
		h++
	}
	return h
}

// wrap breaks s into lines no wider than width, at spaces, but not at the
// spaces around an operator standing alone ("s = −log(1 − t)", "N = 100"
// stay on one line) unless such a phrase is itself wider than width.
func wrap(s string, sty text.Style, width vg.Length) []string {
	var lines []string
	line := ""
	add := func(w string) {
		try := w
		if line != "" {
			try = line + " " + w
		}
		if line != "" && sty.Width(try) > width {
			lines = append(lines, line)
			line = w
			return
		}
		line = try
	}
	for _, phrase := range phrases(s) {
		if sty.Width(phrase) > width {
			for _, w := range strings.Fields(phrase) {
				add(w)
			}
			continue
		}
		add(phrase)
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// phrases splits s at its spaces into words, joining an operator that
// stands alone (operators) to the words before and after it.
func phrases(s string) []string {
	var out []string
	glue := false // the last word was an operator
	for _, w := range strings.Fields(s) {
		op := operators[w]
		if len(out) > 0 && (op || glue) {
			out[len(out)-1] += " " + w
		} else {
			out = append(out, w)
		}
		glue = op
	}
	return out
}

// operators are the words that wrap keeps with their neighbours.
var operators = map[string]bool{"=": true, "−": true, "-": true, "+": true, "×": true, "·": true, "/": true, "|": true,
	"<": true, ">": true, "≤": true, "≥": true, "≈": true, "~": true}

const (
	margin       = vg.Length(8)
	titleSize    = vg.Length(13)
	subtitleSize = vg.Length(9)
	legendSize   = vg.Length(9)
)
