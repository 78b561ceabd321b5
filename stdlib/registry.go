package stdlib

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Param describes one parameter of a node type.
type Param struct {
	Name    string
	Support Support
	// Default is used when the argument is omitted; HasDefault says
	// whether there is one.
	Default    float64
	HasDefault bool
	Doc        string
}

// Dist is a scalar distribution: the node type of "x ~ Name(params)" where
// x is a scalar or, inside a for-loop or elementwise, an array of
// conditionally independent scalars.
type Dist struct {
	Name    string
	Doc     string
	Params  []Param
	Support Support // the support of the value
	// LogPDF returns the log density (or log mass) of x given the
	// parameters, which are in Params order and already checked.
	LogPDF func(x float64, p []float64) float64
	// Rand draws a value given the parameters.
	Rand func(rng *rand.Rand, p []float64) float64
	// Check validates a combination of parameters beyond their
	// individual supports. It may be nil.
	Check func(p []float64) error
}

// CheckParams validates parameter values against their supports and the
// distribution's own Check.
func (d *Dist) CheckParams(p []float64) error {
	if len(p) != len(d.Params) {
		return fmt.Errorf("%s takes %d parameters, got %d", d.Name, len(d.Params), len(p))
	}
	for i, prm := range d.Params {
		if !prm.Support.Contains(p[i]) {
			return fmt.Errorf("%s parameter %s = %v is outside its support, %v", d.Name, prm.Name, p[i], prm.Support)
		}
	}
	if d.Check != nil {
		return d.Check(p)
	}
	return nil
}

var dists = map[string]*Dist{}

// register adds a distribution; each distribution's file calls it from init.
func register(d *Dist) {
	if _, dup := dists[d.Name]; dup {
		panic("stdlib: distribution registered twice: " + d.Name)
	}
	dists[d.Name] = d
}

// fromDistuv completes d with the density and sampler of the gonum
// distribution that build makes from the parameters, so that the two cannot
// read the parameters differently. src is the generator Rand draws from; it
// is nil for LogPDF.
func fromDistuv[D distuv.RandLogProber](d *Dist, build func(p []float64, src rand.Source) D) *Dist {
	d.LogPDF = func(x float64, p []float64) float64 { return build(p, nil).LogProb(x) }
	d.Rand = func(rng *rand.Rand, p []float64) float64 { return build(p, rng).Rand() }
	return d
}

// Lookup returns the scalar distribution called name.
func Lookup(name string) (*Dist, bool) {
	d, ok := dists[name]
	return d, ok
}

// DistNames lists the scalar distributions, sorted.
func DistNames() []string { return slices.Sorted(maps.Keys(dists)) }

// NodeTypeNames lists every name that may follow "~": the scalar
// distributions and the PYDT, sorted. The compiler uses it for "did you
// mean" hints.
func NodeTypeNames() []string {
	names := append(DistNames(), PYDTName)
	slices.Sort(names)
	return names
}
