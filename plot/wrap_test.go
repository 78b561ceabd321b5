package plot

import (
	"bytes"
	"image/color"
	"image/png"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// TestWrapKeepsPhrases: a subtitle breaks between words and phrases, never
// at the spaces around an operator ("−log(1 −\nt)" was drawn), unless the
// phrase alone is wider than the line.
func TestWrapKeepsPhrases(t *testing.T) {
	sty := textStyle(subtitleSize, color.Black)
	sub := "N = 100; divergence time t across, spaced as s = −log(1 − t) to spread the times near 1 (0.9, 0.99, 0.999 equally apart); branch points at their times, leaves (t = 1, s = ∞) at the right end"
	for _, tc := range []struct {
		name  string
		s     string
		width vg.Length
	}{
		{"dendrogram-s", sub, 300},
		{"narrower", sub, 150},
		{"wide", sub, 2000},
		// The width of the dendrogram's subtitle in the synthetic data's
		// picture, which broke it inside −log(1 − t) and (t = 1, s = ∞).
		{"synthetic", sub, 5*vg.Inch + 150 - 2*margin},
		{"emrun", "the best tree's objective, the EM bound plus the Laplace correction for the times, an approximation of log p(Y, alpha, beta | tree) (not a bound), after each round", 250},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines := wrap(tc.s, sty, tc.width)
			if got := strings.Join(lines, " "); got != strings.Join(strings.Fields(tc.s), " ") {
				t.Fatalf("the lines do not hold the text: %q", got)
			}
			for i, l := range lines {
				if sty.Width(l) > tc.width && strings.Contains(l, " ") && !strings.ContainsAny(l, "=−") {
					t.Errorf("line %d %q is wider than %v", i, l, tc.width)
				}
				f := strings.Fields(l)
				for _, op := range []string{"=", "−", "|"} {
					if f[0] == op || f[len(f)-1] == op {
						t.Errorf("line %d %q begins or ends with %q: %q", i, l, op, lines)
					}
				}
			}
			if strings.Contains(tc.s, "−log(1 − t)") && !strings.Contains(strings.Join(lines, "\n"), "−log(1 − t)") {
				t.Errorf("−log(1 − t) broken: %q", lines)
			}
		})
	}
	// At every width from 100 to 600 points.
	for w := vg.Length(100); w <= 600; w += 5 {
		for _, l := range wrap(sub, sty, w) {
			if f := strings.Fields(l); f[0] == "=" || f[0] == "−" || f[len(f)-1] == "=" || f[len(f)-1] == "−" {
				t.Errorf("width %v: line %q begins or ends with an operator", w, l)
			}
		}
	}
	// A phrase wider than the line is broken at its spaces after all.
	long := "a = " + strings.Repeat("b + ", 40) + "c"
	for _, l := range wrap(long, sty, 100) {
		if sty.Width(l) > 100 && strings.Contains(l, " ") {
			t.Errorf("line %q of an over-long phrase is wider than 100", l)
		}
	}
}

// inkColumns draws s in a PNG at the subtitles' size and dpi and reports
// which pixel columns hold ink, and the first and last that do.
func inkColumns(t *testing.T, s string, dpi int) (ink []bool, first, last int) {
	t.Helper()
	f := &Figure{Width: 200, Height: 30, DPI: dpi}
	f.draw = func(c draw.Canvas) {
		c.FillText(textStyle(subtitleSize, color.Black), vg.Point{X: 10, Y: 15}, s)
	}
	var b bytes.Buffer
	if err := f.Write(&b, "png"); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	r := img.Bounds()
	for x := r.Min.X; x < r.Max.X; x++ {
		dark := false
		for y := r.Min.Y; y < r.Max.Y; y++ {
			if cr, _, _, _ := img.At(x, y).RGBA(); cr < 0xe000 {
				dark = true
			}
		}
		ink = append(ink, dark)
	}
	first, last = -1, -1
	for x, d := range ink {
		if d {
			if first < 0 {
				first = x
			}
			last = x
		}
	}
	return ink, first, last
}

// TestPNGWordSpace: in a PNG the space after "A" stays visible ("LCA times"
// was drawn "LCAtimes": the raster renderer kerns the space against the A).
// The gaps of two or more blank pixel columns in the drawn text are its
// word spaces.
func TestPNGWordSpace(t *testing.T) {
	for _, s := range []string{"LCA times", "mean LCA times", "the map tree"} {
		ink, first, last := inkColumns(t, s, PNGDPI)
		gaps, run := 0, 0
		for x := first; x <= last; x++ {
			if ink[x] {
				if run >= 2 {
					gaps++
				}
				run = 0
				continue
			}
			run++
		}
		if want := strings.Count(s, " "); gaps != want {
			t.Errorf("%q drawn with %d word gaps, want %d", s, gaps, want)
		}
	}
}

// TestPNGPeriod: in a PNG at 80 dpi (the README's pictures) the period of
// "summary.nwk" is not drawn under the y's tail ("summarynwk": the raster
// renderer kerned the pair): "y." reaches at least 1 pixel further right
// than "y".
func TestPNGPeriod(t *testing.T) {
	for _, dpi := range []int{80, PNGDPI} {
		_, _, y := inkColumns(t, "y", dpi)
		_, _, yp := inkColumns(t, "y.", dpi)
		if yp < y+1 {
			t.Errorf("%d dpi: \"y.\" ends at pixel %d, \"y\" at %d: the period is under the y", dpi, yp, y)
		}
	}
}

// TestPNGTextWhereMeasured: a PNG's text ends where its measured width
// (the one alignment and layout use) says, within a pixel and a half, for
// strings heavy in kerning pairs (AV, To, Ty) and one with none; drawn
// unkerned, "AVAV..." ran about 12 pixels past its measure at 96 dpi.
func TestPNGTextWhereMeasured(t *testing.T) {
	sty := textStyle(subtitleSize, color.Black)
	for _, s := range []string{"AVAVAVAVAVAVAVAVAV", "To Ty To Ty To Ty AV", "HHHHHHHHHH"} {
		for _, dpi := range []int{80, PNGDPI} {
			_, first, last := inkColumns(t, s, dpi)
			px := func(l vg.Length) float64 { return l.Dots(float64(dpi)) }
			// inkColumns draws at x = 10 points; the last glyph's
			// right side bearing is under a pixel for V and H.
			end := px(10 + sty.Width(s))
			if got := float64(last + 1); math.Abs(got-end) > 1.5 {
				t.Errorf("%q at %d dpi: ink from pixel %d to %d, the measured width ends at %.1f", s, dpi, first, last, end)
			}
		}
	}
}

// TestPNGTextInvalidUTF8: a label that is not valid UTF-8 (a data file's
// row names in Latin-1, "M\xfcller") is drawn, not a panic: PNG text is
// drawn a character at a time, and an invalid byte is one byte of the
// string though its replacement character U+FFFD is three, so measuring
// the string up to it by the replacement's length sliced past the end
// of "M\xfcller\xff".
func TestPNGTextInvalidUTF8(t *testing.T) {
	for _, s := range []string{"M\xfcller", "Miller\xff", "\xff", "a\xe2\x88"} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%q: panic %v", s, r)
				}
			}()
			// The font has no glyph for U+FFFD: "\xff" draws nothing.
			if _, first, _ := inkColumns(t, s, PNGDPI); first < 0 && s != "\xff" {
				t.Errorf("%q: nothing drawn", s)
			}
		}()
	}
}
