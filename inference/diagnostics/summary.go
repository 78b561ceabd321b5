package diagnostics

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Summary holds the posterior summary and convergence diagnostics of one
// scalar. Undefined values are NaN; in JSON they are null (see MarshalJSON).
type Summary struct {
	// Name is the scalar's name, e.g. "alpha" or "theta[3]".
	Name string `json:"name"`
	// Mean and SD are the sample mean and standard deviation (divisor N−1)
	// of all N draws.
	Mean float64 `json:"mean"`
	SD   float64 `json:"sd"`
	// Q5, Q50 and Q95 are the type-7 quantiles of all draws.
	Q5  float64 `json:"q5"`
	Q50 float64 `json:"q50"`
	Q95 float64 `json:"q95"`
	// Rhat is SplitRhat: max of the rank-normalised bulk and folded split
	// R-hats, as posterior::rhat.
	Rhat float64 `json:"rhat"`
	// ESSBulk and ESSTail are posterior::ess_bulk and posterior::ess_tail.
	ESSBulk float64 `json:"ess_bulk"`
	ESSTail float64 `json:"ess_tail"`
	// N is the number of draws used: chains × the shortest chain's length.
	N int `json:"n"`
}

// Summarize computes the Summary of one scalar from its draws chains[c][i].
// Chains are truncated to the shortest one; see the package documentation
// for the exact definitions and for when results are NaN. It never panics.
func Summarize(name string, chains [][]float64) Summary {
	w := getWorkspace()
	defer putWorkspace(w)
	m, L := w.load(chains)
	s := Summary{Name: name, N: m * L}
	nan := math.NaN()
	if s.N == 0 {
		s.Mean, s.SD, s.Q5, s.Q50, s.Q95 = nan, nan, nan, nan, nan
		s.Rhat, s.ESSBulk, s.ESSTail = nan, nan, nan
		return s
	}
	var v float64
	s.Mean, v = meanVar(w.raw)
	s.SD = math.Sqrt(v)
	if hasNaN(w.raw) {
		s.Q5, s.Q50, s.Q95 = nan, nan, nan
	} else {
		sorted := w.sortRaw()
		s.Q5 = quantileSorted(sorted, 0.05)
		s.Q50 = quantileSorted(sorted, 0.5)
		s.Q95 = quantileSorted(sorted, 0.95)
	}
	bulk, m2, n, zok := w.rhatBulk(m, L)
	s.ESSBulk = nan
	if zok {
		s.ESSBulk = w.ess(w.z, m2, n)
	}
	s.Rhat = maxNaN(bulk, w.rhatTail(m, L))
	s.ESSTail = minNaN(w.essQuantile(m, L, 0.05), w.essQuantile(m, L, 0.95))
	return s
}

type summaryJSON struct {
	Name    string   `json:"name"`
	Mean    *float64 `json:"mean"`
	SD      *float64 `json:"sd"`
	Q5      *float64 `json:"q5"`
	Q50     *float64 `json:"q50"`
	Q95     *float64 `json:"q95"`
	Rhat    *float64 `json:"rhat"`
	ESSBulk *float64 `json:"ess_bulk"`
	ESSTail *float64 `json:"ess_tail"`
	N       int      `json:"n"`
}

func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func orNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// MarshalJSON encodes s with snake_case keys (name, mean, sd, q5, q50, q95,
// rhat, ess_bulk, ess_tail, n). JSON has no NaN or Inf, so every non-finite
// field is written as null.
func (s Summary) MarshalJSON() ([]byte, error) {
	return json.Marshal(summaryJSON{
		Name: s.Name, Mean: finite(s.Mean), SD: finite(s.SD),
		Q5: finite(s.Q5), Q50: finite(s.Q50), Q95: finite(s.Q95),
		Rhat: finite(s.Rhat), ESSBulk: finite(s.ESSBulk), ESSTail: finite(s.ESSTail),
		N: s.N,
	})
}

// UnmarshalJSON decodes the format written by MarshalJSON; null (or a
// missing field) becomes NaN.
func (s *Summary) UnmarshalJSON(b []byte) error {
	var j summaryJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("diagnostics: decoding summary: %w", err)
	}
	*s = Summary{
		Name: j.Name, Mean: orNaN(j.Mean), SD: orNaN(j.SD),
		Q5: orNaN(j.Q5), Q50: orNaN(j.Q50), Q95: orNaN(j.Q95),
		Rhat: orNaN(j.Rhat), ESSBulk: orNaN(j.ESSBulk), ESSTail: orNaN(j.ESSTail),
		N: j.N,
	}
	return nil
}

// WriteJSON writes sums as an indented JSON array (the summary.json format).
func WriteJSON(w io.Writer, sums []Summary) error {
	if sums == nil {
		sums = []Summary{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(sums); err != nil {
		return fmt.Errorf("diagnostics: writing summary JSON: %w", err)
	}
	return nil
}

// WriteTable writes sums as an aligned text table in the style of
// posterior's summarise_draws and Stan's stansummary: the name left-aligned,
// then mean, sd, q5, q50, q95 to 3 significant digits (scientific notation
// outside [0.001, 1e6)), rhat with 3 decimals, and ess_bulk, ess_tail
// rounded to integers. Undefined values print as NA.
func WriteTable(w io.Writer, sums []Summary) error {
	header := []string{"variable", "mean", "sd", "q5", "q50", "q95", "rhat", "ess_bulk", "ess_tail"}
	rows := make([][]string, 0, len(sums)+1)
	rows = append(rows, header)
	for _, s := range sums {
		rows = append(rows, []string{
			s.Name,
			formatSig(s.Mean, 3), formatSig(s.SD, 3),
			formatSig(s.Q5, 3), formatSig(s.Q50, 3), formatSig(s.Q95, 3),
			formatFixed(s.Rhat, 3), formatFixed(s.ESSBulk, 0), formatFixed(s.ESSTail, 0),
		})
	}
	width := make([]int, len(header))
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-len([]rune(c)))
			switch {
			case i == 0:
				b.WriteString(c)
				if len(r) > 1 {
					b.WriteString(pad)
				}
			default:
				b.WriteString("  ")
				b.WriteString(pad)
				b.WriteString(c)
			}
		}
		b.WriteByte('\n')
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("diagnostics: writing summary table: %w", err)
	}
	return nil
}

func formatNonFinite(v float64) (string, bool) {
	switch {
	case math.IsNaN(v):
		return "NA", true
	case math.IsInf(v, 1):
		return "Inf", true
	case math.IsInf(v, -1):
		return "-Inf", true
	}
	return "", false
}

// formatSig formats v to sig significant digits, fixed-point for
// 0.001 ≤ |v| < 1e6 and scientific otherwise.
func formatSig(v float64, sig int) string {
	if s, ok := formatNonFinite(v); ok {
		return s
	}
	a := math.Abs(v)
	if a == 0 {
		return "0"
	}
	if a < 1e-3 || a >= 1e6 {
		return strconv.FormatFloat(v, 'e', sig-1, 64)
	}
	// Digits after the point so that sig digits show; computed on the
	// rounded value so 9.996 becomes "10.0", not "9.996".
	r, _ := strconv.ParseFloat(strconv.FormatFloat(a, 'e', sig-1, 64), 64)
	dec := max(0, sig-1-int(math.Floor(math.Log10(r))))
	return strconv.FormatFloat(v, 'f', dec, 64)
}

func formatFixed(v float64, dec int) string {
	if s, ok := formatNonFinite(v); ok {
		return s
	}
	return strconv.FormatFloat(v, 'f', dec, 64)
}
