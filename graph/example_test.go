package graph_test

import (
	"fmt"
	"log"
	"os"

	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/lang"
)

// Example compiles the paper's continuous model with its dimensions bound
// by --set-style values and prints the factor graph.
func Example() {
	src := []byte(`dim N, D
data X : real[N, D]
alpha ~ Gamma(2, 0.5)
beta ~ Beta(1, 1)
c ~ Gamma(1, 1)
prec ~ Gamma(1, 1)
X ~ PYDT(alpha, beta, c, 1 / prec)
`)
	f, err := lang.Parse("model.pydt", src)
	if err != nil {
		log.Fatal(err)
	}
	g, err := graph.Compile(f, graph.Options{Set: map[string]float64{"N": 4, "D": 2, "alpha": 1}, Partial: true})
	if err != nil {
		err.(lang.ErrorList).Format(os.Stdout, src)
		return
	}
	g.Summary(os.Stdout)
	fmt.Println(g.PYDT.Divergence)
	// Output:
	// model model.pydt
	// dimensions: N = 4, D = 2
	//
	// variables:
	//   name   role     shape   support        detail
	//   X      latent   [4, 2]  real           with a latent tree
	//   alpha  clamped  scalar  positive real  = 1 (--set)
	//   beta   latent   scalar  (0, 1)
	//   c      latent   scalar  positive real
	//   prec   latent   scalar  positive real
	//
	// factors:
	//   alpha ~ Gamma(2, 0.5)
	//   beta ~ Beta(1, 1)
	//   prec ~ Gamma(1, 1)
	//   c ~ Gamma(1, 1)
	//   X ~ PYDT(alpha, beta, DivInv(c), 1 / prec)
	// DivInv(c)
}

// Example_diagnostics shows the diagnostics of a misspelt model: every
// error, with its position, the source line, a caret and a hint.
func Example_diagnostics() {
	src := []byte("dim N\ndata X : real[N, 1]\nX ~ PYDT(alpah, 0, 1, 1)\n")
	f, err := lang.Parse("bad.pydt", src)
	if err != nil {
		log.Fatal(err)
	}
	_, err = graph.Compile(f, graph.Options{Set: map[string]float64{"N": 3}, Partial: true})
	err.(lang.ErrorList).Format(os.Stdout, src)
	// Output:
	// bad.pydt:3:10: undefined: alpah
	// X ~ PYDT(alpah, 0, 1, 1)
	//          ^
}
