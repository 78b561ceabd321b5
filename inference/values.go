package inference

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/internal/bounded"
)

// Values are values of a model's stochastic scalars and of the elements of
// its latent arrays, by name: alpha, prec[2], w[1,3] (the names of
// Model.Traced, 1-based). Sample writes them, one draw a line, to
// params.csv; score reads them back with --values (ReadValues): the
// scalars are clamped as --set clamps them (Values.Sets), the arrays set
// in the state scored (Model.SetArrays).
type Values struct {
	// Source names the file the values were read from, for messages.
	Source string
	// Names are the names of the values, in the file's order; X holds
	// the values.
	Names []string
	X     []float64
}

// ReadValues reads a file of values: a CSV header of names (NAME for a
// scalar, NAME[i] or NAME[i,j] for an element of an array, quoted as CSV
// needs when it holds a comma) and lines of values, as Sample's params.csv
// holds them. A first column named draw numbers the lines: draw selects the
// line of that draw, and may be 0 only when the file holds a single line.
// A file without a draw column must hold a single line of values, which
// serves any draw. The file is at most dataset.MaxFileBytes.
func ReadValues(path string, draw int) (*Values, error) {
	if draw < 0 {
		return nil, inputsErr("draw %d: draws are numbered from 1", draw)
	}
	src, err := bounded.ReadFile(path, bounded.Options{What: "values file", Max: dataset.MaxFileBytes})
	if err != nil {
		return nil, err
	}
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(src, []byte("\ufeff"))))
	r.TrimLeadingSpace = true
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("values file %s: %w", path, err)
	}
	if len(recs) < 2 {
		return nil, fmt.Errorf("values file %s: want a header of names and a line of values, as sample's %s holds them", path, SampleParamsFile)
	}
	header, rows := recs[0], recs[1:]
	hasDraw := strings.TrimSpace(header[0]) == "draw"
	first := 0
	if hasDraw {
		first = 1
	}
	row, line := rows[0], 2
	switch {
	case hasDraw && draw > 0:
		row = nil
		for i, rw := range rows {
			if k, err := strconv.Atoi(strings.TrimSpace(rw[0])); err == nil && k == draw {
				row, line = rw, i+2
				break
			}
		}
		if row == nil {
			return nil, fmt.Errorf("values file %s holds no draw %d (its draw column numbers %d lines)", path, draw, len(rows))
		}
	case len(rows) > 1 && hasDraw:
		return nil, inputsErr("values file %s holds %d draws: choose one with --draw K", path, len(rows))
	case len(rows) > 1:
		return nil, fmt.Errorf("values file %s holds %d lines of values but no draw column to choose one by: give a single line, or a first column draw", path, len(rows))
	}
	v := &Values{Source: path}
	seen := map[string]bool{}
	for j := first; j < len(header); j++ {
		name := strings.Join(strings.Fields(header[j]), "") // prec[1, 2] is prec[1,2]
		switch {
		case name == "":
			return nil, fmt.Errorf("values file %s: column %d has no name", path, j+1)
		case seen[name]:
			return nil, fmt.Errorf("values file %s: %s is named twice in the header", path, name)
		}
		seen[name] = true
		x, err := dataset.ParseNumber(strings.TrimSpace(row[j]))
		if err != nil {
			return nil, fmt.Errorf("values file %s, line %d, %s: %w", path, line, name, err)
		}
		v.Names = append(v.Names, name)
		v.X = append(v.X, x)
	}
	if len(v.Names) == 0 {
		return nil, fmt.Errorf("values file %s names no values", path)
	}
	return v, nil
}

// Sets returns the scalars of v as NAME=VALUE items (Inputs.Set), after
// the items set, which must name none of them: the values of a file and
// of --set are given once each.
func (v *Values) Sets(set []string) ([]string, error) {
	given, err := ParseSets(set)
	if err != nil {
		return nil, err
	}
	out := slices.Clone(set)
	for i, name := range v.Names {
		if strings.Contains(name, "[") {
			continue
		}
		if _, dup := given[name]; dup {
			return nil, inputsErr("%s is given both by --set and by the values file %s: give it once", name, v.Source)
		}
		out = append(out, name+"="+strconv.FormatFloat(v.X[i], 'g', -1, 64))
	}
	return out, nil
}

// SetArrays sets in env the elements of m's latent arrays (LatentArrays)
// that v gives by name (prec[2], w[1,3]): every element of every latent
// array must be given once, within the array's support. Names of scalars
// are left to Sets. An error names the file and the element: an array the
// model does not have, an index outside the array's shape (a file written
// for other dimensions), a missing element.
func (m *Model) SetArrays(env *graph.Env, v *Values) error {
	arrays := m.LatentArrays()
	given := map[*graph.Var][]bool{}
	for _, a := range arrays {
		given[a] = make([]bool, a.Len())
	}
	for i, name := range v.Names {
		base, idx, ok := strings.Cut(name, "[")
		if !ok {
			continue
		}
		a, _ := m.G.Lookup(base)
		if given[a] == nil {
			var names []string
			for _, a := range arrays {
				names = append(names, a.Name)
			}
			have := "has none"
			if len(names) > 0 {
				have = "has " + strings.Join(names, ", ")
			}
			return fmt.Errorf("values file %s: %s: the model has no latent array %s (it %s)", v.Source, name, base, have)
		}
		off, err := elemOffset(a, idx)
		if err != nil {
			return fmt.Errorf("values file %s: %s: %w", v.Source, name, err)
		}
		if given[a][off] {
			return fmt.Errorf("values file %s: %s is given twice", v.Source, name)
		}
		if x := v.X[i]; !a.Support.Contains(x) {
			return fmt.Errorf("values file %s: %s = %v is outside the support of %s: it must be %s", v.Source, name, x, a.Name, a.Support.Phrase())
		}
		given[a][off] = true
		env.Values[a.ID][off] = v.X[i]
	}
	for _, a := range arrays {
		n := 0
		missing := -1
		for off, ok := range given[a] {
			if ok {
				n++
			} else if missing < 0 {
				missing = off
			}
		}
		if missing >= 0 {
			return fmt.Errorf("values file %s gives %d of the %d elements of %s (shape %s): every element needs a value (%s[%s] has none)",
				v.Source, n, a.Len(), a.Name, a.Shape(), a.Name, strings.ReplaceAll(elemIndex(a, missing), " ", ""))
		}
	}
	return nil
}

// elemOffset returns the row-major offset of the element of a written
// "i]" or "i,j]" (after the name and "["), 1-based.
func elemOffset(a *graph.Var, idx string) (int, error) {
	inner, ok := strings.CutSuffix(idx, "]")
	if !ok {
		return 0, errors.New("want NAME[i] or NAME[i,j]")
	}
	parts := strings.Split(inner, ",")
	if len(parts) != len(a.Dims) {
		return 0, fmt.Errorf("%s has %d dimensions (shape %s) but is indexed with %d", a.Name, len(a.Dims), a.Shape(), len(parts))
	}
	off := 0
	for k, p := range parts {
		i, err := strconv.Atoi(p)
		if err != nil {
			return 0, fmt.Errorf("index %q is not a whole number", p)
		}
		if i < 1 || i > a.Dims[k] {
			return 0, fmt.Errorf("index %d is outside 1..%d (%s has shape %s here: was the file written for other dimensions?)", i, a.Dims[k], a.Name, a.Shape())
		}
		off = off*a.Dims[k] + i - 1
	}
	return off, nil
}
