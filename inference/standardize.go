package inference

import (
	"fmt"
	"math"
	"slices"

	"github.com/pydtlang/pydtlang/stdlib"
)

// Scaling records how Standardize transformed a data variable: column j
// became (x − Mean[j]) / SD[j]. It is stored in run.json so that the
// transformation can be undone (Unscale) or repeated (Resume).
type Scaling struct {
	// Var is the data variable that was standardized.
	Var string `json:"var"`
	// Mean and SD are per column, over the observed (non-missing)
	// entries; SD is the sample standard deviation, or 1 for a column
	// with fewer than two distinct observed values, which is only
	// centred.
	Mean []float64 `json:"mean"`
	SD   []float64 `json:"sd"`
}

// Scale maps a value of column j to standardized units.
func (s *Scaling) Scale(j int, x float64) float64 { return (x - s.Mean[j]) / s.SD[j] }

// Unscale maps a standardized value of column j back to the data's units.
func (s *Scaling) Unscale(j int, x float64) float64 { return x*s.SD[j] + s.Mean[j] }

// ColumnScaling returns the mean and sample standard deviation of each
// column of the row-major n×d matrix x over its non-missing (non-NaN)
// entries. A column with no entries has mean 0, one with fewer than two
// distinct values standard deviation 0.
func ColumnScaling(x []float64, n, d int) (mean, sd []float64) {
	mean, sd = make([]float64, d), make([]float64, d)
	col := make([]float64, 0, n)
	for j := range d {
		col = observedColumn(col[:0], x, n, d, j)
		k := len(col)
		if k == 0 {
			continue
		}
		var s float64
		for _, v := range col {
			s += v
		}
		mean[j] = s / float64(k)
		var ss float64
		for _, v := range col {
			ss += (v - mean[j]) * (v - mean[j])
		}
		if k > 1 {
			sd[j] = math.Sqrt(ss / float64(k-1))
		}
	}
	return mean, sd
}

// observedColumn appends to buf the observed (non-NaN) entries of column j
// of the row-major n×d matrix x, in row order, and returns it.
func observedColumn(buf, x []float64, n, d, j int) []float64 {
	for i := range n {
		if v := x[i*d+j]; !math.IsNaN(v) {
			buf = append(buf, v)
		}
	}
	return buf
}

// Standardize rescales, in place, every column of the data that the PYDT's
// leaves observe (directly or through a Normal noise model) to mean 0 and
// standard deviation 1, the scale the default priors assume. A Probit
// model's binary data, and a model without data, are refused. It must be
// called once, before NewState, Score, Run or Resume; the model's Scaling
// records it, traced scalars (σ², noise) are then in standardized units,
// and imputed values are written back in the data's units.
func (m *Model) Standardize() (*Scaling, error) {
	if err := m.needTree("standardize"); err != nil {
		return nil, err
	}
	if m.Scaling != nil {
		return nil, fmt.Errorf("standardize: %s is already standardized", m.Scaling.Var)
	}
	if m.Data == nil {
		return nil, fmt.Errorf("standardize: the model observes no data at the PYDT's leaves")
	}
	if m.Several() {
		return nil, fmt.Errorf("standardize: %w: standardizing a model with several PYDTs; scale each data set before the run", ErrUnsupported)
	}
	if !m.realData() {
		return nil, fmt.Errorf("standardize: %s holds %v values (a %s likelihood); only real-valued data can be standardized", m.Data.Name, m.Trees[0].DataSupport(), m.Trees[0].Leaf.TypeName())
	}
	x := m.Data.Value
	mean, sd := ColumnScaling(x, m.N, m.D)
	for j := range sd {
		if !(sd[j] > 0) {
			sd[j] = 1
		}
	}
	for i := range m.N {
		for j := range m.D {
			if v := x[i*m.D+j]; !math.IsNaN(v) {
				x[i*m.D+j] = (v - mean[j]) / sd[j]
			}
		}
	}
	m.Scaling = &Scaling{Var: m.Data.Name, Mean: mean, SD: sd}
	return m.Scaling, nil
}

// scaleWarnings names the columns of the data observed at the leaves whose
// scale is far from the unit scale that the default priors assume: a
// standard deviation below 1/10 or above 10, or a mean further than 10
// from 0 (the PYDT's paths start at the origin).
func (m *Model) scaleWarnings(x []float64) []string {
	if m.Scaling != nil || m.Data == nil || !m.realData() {
		return nil
	}
	mean, sd := ColumnScaling(x, m.N, m.D)
	var bad []int
	for j := range m.D {
		if sd[j] > 0 && (sd[j] < 0.1 || sd[j] > 10) || math.Abs(mean[j]) > 10 {
			bad = append(bad, j)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	var cols string
	for k, j := range bad {
		if k == 3 {
			cols += fmt.Sprintf(" and %d more", len(bad)-3)
			break
		}
		if k > 0 {
			cols += ", "
		}
		cols += fmt.Sprintf("%s (mean %.3g, sd %.3g)", m.colName(j), mean[j], sd[j])
	}
	return []string{fmt.Sprintf("columns of %s far from unit scale: %s; the default priors assume columns of roughly mean 0 and sd 1: pass --standardize, or rescale the data or the priors",
		m.Data.Name, cols)}
}

// colName names column j of the observed data: its header name, else its
// 1-based number.
func (m *Model) colName(j int) string {
	if d := m.Data.Data; d != nil && j < len(d.ColNames) && d.ColNames[j] != "" {
		return d.ColNames[j]
	}
	return fmt.Sprintf("column %d", j+1)
}

// StandardizeLikeRun standardizes m's data as the run in dir did, from
// the scaling recorded in its run.json (nothing when the run was started
// without --standardize), and checks that the data give that scaling, so
// that a tool reading a finished run (predict, cut, plot) sees the data in
// the units the run sampled in. m may already be standardized: it is then
// only checked. Resume does this itself.
func StandardizeLikeRun(m *Model, dir string) error {
	if err := m.needTree("standardize"); err != nil {
		return err
	}
	ri, err := ReadRun(dir)
	if err != nil {
		return err
	}
	return sameScaling(m, ri.Standardize)
}

// sameScaling standardizes m as the run recorded in stored (nil: not
// standardized) and checks that the data give the same scaling.
func sameScaling(m *Model, stored *Scaling) error {
	switch {
	case stored == nil && m.Scaling == nil:
		return nil
	case stored == nil:
		return fmt.Errorf("the run was started without --standardize, but the model's data are standardized")
	case m.Scaling == nil:
		if _, err := m.Standardize(); err != nil {
			return fmt.Errorf("the run was started with --standardize: %w", err)
		}
	}
	s := m.Scaling
	if s.Var != stored.Var || !slices.Equal(s.Mean, stored.Mean) || !slices.Equal(s.SD, stored.SD) {
		return fmt.Errorf("the data's standardization (%s) differs from the one recorded in %s", s.Var, RunFile)
	}
	return nil
}

// realData reports whether the data observed at the leaves are real
// valued: observed directly, or through a leaf factor on real values.
func (m *Model) realData() bool {
	return m.Trees[0].DataSupport() == stdlib.Real
}
