package stdlib_test

import (
	"fmt"
	"log"
	"math"
	"math/rand/v2"

	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/lang"
	"github.com/pydtlang/pydtlang/stdlib"
)

// Exponential is a user's own node type, Exponential(rate): the density
// rate·e^(-rate·x) on x > 0. Implementing stdlib.Scalar is all a scalar
// distribution needs.
type Exponential struct{}

func (Exponential) Name() string { return "Exponential" }
func (Exponential) Doc() string  { return "Exponential(rate): density rate e^(-rate x) on x > 0." }
func (Exponential) Params() []stdlib.Param {
	return []stdlib.Param{{Name: "rate", Support: stdlib.Positive, Default: 1, HasDefault: true, Doc: "rate > 0"}}
}
func (Exponential) Support() stdlib.Support         { return stdlib.Positive }
func (t Exponential) CheckParams(p []float64) error { return stdlib.CheckSupports(t, p) }
func (Exponential) LogProb(x float64, p []float64) float64 {
	return math.Log(p[0]) - p[0]*x
}
func (Exponential) Rand(rng *rand.Rand, p []float64) float64 { return rng.ExpFloat64() / p[0] }

// ExampleLibrary_Register registers a user's node type in a copy of the
// standard library and compiles a model that uses it. The standard library
// itself is unchanged, so the same model compiled without the extended
// library names an unknown distribution.
func ExampleLibrary_Register() {
	lib := stdlib.Default()
	if err := lib.Register(Exponential{}); err != nil {
		log.Fatal(err)
	}
	src := []byte("lambda ~ Exponential(2)\nx ~ Normal(0, 1 / lambda)\n")
	f, err := lang.Parse("model.pydt", src)
	if err != nil {
		log.Fatal(err)
	}
	g, err := graph.Compile(f, graph.Options{Library: lib})
	if err != nil {
		log.Fatal(err)
	}
	for _, fac := range g.Factors {
		dist, _ := fac.Scalar()
		fmt.Printf("%s: %s, values %v\n", fac, dist.Name(), dist.Support())
	}
	_, err = graph.Compile(f, graph.Options{}) // the standard library
	fmt.Println(err.(lang.ErrorList)[0])
	// Output:
	// lambda ~ Exponential(2): Exponential, values positive real
	// x ~ Normal(0, 1 / lambda): Normal, values real
	// model.pydt:1:10: unknown distribution Exponential
}
