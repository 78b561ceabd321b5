package plot

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	gplot "gonum.org/v1/plot"
)

// Axis is the scale of a dendrogram's time axis.
type Axis int

const (
	// AxisAuto chooses AxisS when the tree's branch points crowd near
	// t = 1 (Layout.Crowded) and AxisT otherwise.
	AxisAuto Axis = iota
	// AxisT draws divergence time t linearly, from 0 to the leaves at 1.
	AxisT
	// AxisS draws s = -log(1 - t), the coordinate in which the PYDT's
	// times are kept: it spreads the times near t = 1 (each tick
	// 0.9, 0.99, 0.999, ... as far from the last). The leaves, at t = 1
	// (s = +Inf), are drawn at the axis's right end, a little beyond
	// the latest branch point.
	AxisS
)

// String returns "auto", "t" or "s".
func (a Axis) String() string {
	switch a {
	case AxisAuto:
		return "auto"
	case AxisT:
		return "t"
	case AxisS:
		return "s"
	}
	return fmt.Sprintf("Axis(%d)", int(a))
}

// ParseAxis reads "auto" (or ""), "t" or "s".
func ParseAxis(s string) (Axis, error) {
	switch strings.TrimSpace(s) {
	case "", "auto":
		return AxisAuto, nil
	case "t":
		return AxisT, nil
	case "s":
		return AxisS, nil
	}
	return AxisAuto, fmt.Errorf("axis %q: want auto, t or s", s)
}

// CrowdedMedian is the threshold of Layout.Crowded: the axis is s when the
// median branch point is within this much of t = 1, i.e. when more than
// half of the branch points share the last tenth of a linear t axis
// (t > 0.9; with an even count, the mean 1 - t of the middle two decides).
const CrowdedMedian = 0.1

// Crowded reports whether the branch points crowd near t = 1: whether the
// median of 1 - t over the branch points is below CrowdedMedian. A tree
// without branch points is not crowded.
func (l *Layout) Crowded() bool {
	var u []float64
	for v, s := range l.S {
		if !math.IsNaN(s) && !math.IsInf(s, 1) && l.isBranch(v) {
			u = append(u, math.Exp(-s))
		}
	}
	if len(u) == 0 {
		return false
	}
	slices.Sort(u)
	n := len(u)
	med := u[n/2]
	if n%2 == 0 {
		med = (u[n/2-1] + u[n/2]) / 2
	}
	return med < CrowdedMedian
}

// isBranch reports whether node v is a branch point of the layout.
func (l *Layout) isBranch(v int) bool { return !math.IsNaN(l.Span[v][0]) }

// SetAxis places the nodes along axis a (AxisAuto resolved by Crowded):
// it sets Axis, X and XMax. On the t axis X is Time and XMax is 1. On
// the s axis X is s = -log(1 - t) for the branch points and XMax, the
// axis's end, for the leaves (t = 1, s = +Inf) and for any branch point at
// t = 1 (which float64 t cannot tell from a leaf); XMax is 1.1 times the
// latest branch point's s (1 when every branch point is at t = 0), so the
// leaves' edges show. Every X is finite.
func (l *Layout) SetAxis(a Axis) error {
	if a == AxisAuto {
		a = AxisT
		if l.Crowded() {
			a = AxisS
		}
	}
	switch a {
	case AxisT:
		l.X = slices.Clone(l.Time)
		l.XMax = 1
	case AxisS:
		last := 0.0
		for v, s := range l.S {
			if l.isBranch(v) && !math.IsInf(s, 1) {
				last = max(last, s)
			}
		}
		l.XMax = 1.1 * last
		if l.XMax == 0 {
			l.XMax = 1
		}
		l.X = make([]float64, len(l.S))
		for v, s := range l.S {
			switch {
			case math.IsNaN(s):
				l.X[v] = nan // not in the tree
			case s >= l.XMax:
				l.X[v] = l.XMax
			default:
				l.X[v] = s
			}
		}
	default:
		return fmt.Errorf("plot: unknown axis %v", a)
	}
	l.Axis = a
	return nil
}

// sOfT is how every picture writes the s coordinate: Unicode minus signs
// and spaces around the operators, as the dendrogram's axis writes it.
const sOfT = "s = −log(1 − t)"

// axisLabel names the dendrogram's axis a.
func axisLabel(a Axis) string {
	if a == AxisS {
		return "divergence time t, spaced as " + sOfT + "; leaves (t = 1) at the right end"
	}
	return "divergence time t"
}

// sTicks returns the ticks of an s axis from 0 to end, placed at times
// t and labelled by t: 0, 0.9, 0.99, ... (1 − t = 10^-k) always; with a
// few decades, also 0.5, 0.8, 0.95, 0.98, ... (1 − t = 5·10^-k, 2·10^-k),
// labelled up to three decades, unlabelled to ten; with one decade or
// less also 0.1 to 0.7. With more than eight decades only every k-th
// decade is labelled. The end is marked "1", the leaves' time, and a label
// too close to it is left out.
func sTicks(end float64) []gplot.Tick {
	const ln10 = math.Ln10
	dec := end / ln10 // the decades of 1 - t the axis spans
	type cand struct {
		s     float64
		label string
		major bool // 1 - t a power of ten
	}
	var cs []cand
	// Decade k holds 1 - t = 10^-k and, below it, 5·10^-k and 2·10^-k.
	for k := 0; float64(k-1)*ln10 <= end; k++ {
		if s := float64(k) * ln10; s <= end {
			cs = append(cs, cand{s, tLabel(1, k), true})
		}
		if k == 0 || dec >= 10 {
			continue
		}
		for _, m := range []float64{5, 2} {
			// 1 - t = m·10^-k.
			s := float64(k)*ln10 - math.Log(m)
			if s <= end {
				cs = append(cs, cand{s, tLabel(m, k), false})
			}
		}
	}
	if dec <= 1 {
		for _, t := range []float64{0.1, 0.2, 0.3, 0.4, 0.6, 0.7} {
			if s := -math.Log1p(-t); s <= end {
				cs = append(cs, cand{s, fmt.Sprintf("%.1f", t), false})
			}
		}
	}
	step := 1 // label every step-th decade
	for dec/float64(step) > 8 {
		step++
	}
	var ticks []gplot.Tick
	for _, c := range cs {
		label := ""
		k := int(math.Round(c.s / ln10))
		switch {
		case c.major && k%step == 0:
			label = c.label
		case !c.major && dec <= 3:
			label = c.label
		}
		// Leave room for the end's label.
		if end-c.s < 0.06*end {
			label = ""
		}
		ticks = append(ticks, gplot.Tick{Value: c.s, Label: label})
	}
	ticks = append(ticks, gplot.Tick{Value: end, Label: "1"})
	slices.SortFunc(ticks, func(a, b gplot.Tick) int { return cmp.Compare(a.Value, b.Value) })
	return ticks
}

// tLabel writes t = 1 - m·10^-k (m 1, 2 or 5; k = 0 for t = 0 only):
// 0.9, 0.95, 0.998, ..., and 1 − 1e-k from k = 5 (the typeface has no
// superscript minus or zero).
func tLabel(m float64, k int) string {
	if k == 0 {
		return "0"
	}
	if m == 1 && k >= 5 {
		return fmt.Sprintf("1 − 1e-%d", k)
	}
	return "0." + strings.Repeat("9", k-1) + fmt.Sprint(10-int(m))
}
