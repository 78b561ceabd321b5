package inference_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/inference"
	"github.com/pydtlang/pydtlang/lang"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// Example compiles a model from a string, binds data, runs the MCMC engine
// and reads back the trees and the trace: everything "pydtlang run" does.
func Example() {
	const model = `
dim N, D
data X : real[N, D]
alpha ~ Gamma(2, 0.5)
beta ~ Beta(1, 1)
c ~ Gamma(1, 1)
prec ~ Gamma(1, 1)
X ~ PYDT(alpha, beta, c, 1 / prec)
`
	file, err := lang.Parse("model.pydt", []byte(model))
	if err != nil {
		log.Fatal(err)
	}
	data, err := dataset.Read("x.csv", strings.NewReader("name,x,y\nant,0.1,0.2\nbee,0.15,0.25\ncat,2.0,-1.0\ndog,2.1,-0.9\n"))
	if err != nil {
		log.Fatal(err)
	}
	g, err := graph.Compile(file, graph.Options{Data: map[string]*dataset.Matrix{"X": data}})
	if err != nil {
		log.Fatal(err)
	}
	m, err := inference.NewModel(g)
	if err != nil {
		log.Fatal(err)
	}
	out, err := os.MkdirTemp("", "pydtlang-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(out)
	res, err := inference.Run(context.Background(), m, inference.Config{Iters: 200, Chains: 2, Seed: 1, Out: out})
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range res.Scalars {
		fmt.Println(s.Name)
	}
	f, err := os.Open(filepath.Join(out, inference.TreesFile(1)))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	trees, err := pydt.ReadNewickTrees(f, data.RowLabels)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(trees), "trees of", trees[0].NumLeaves(), "leaves from chain 1")
	trace, _ := os.ReadFile(filepath.Join(out, inference.TraceFile))
	fmt.Println(strings.SplitN(string(trace), "\n", 2)[0])
	// Output:
	// log_joint
	// log_lik
	// alpha
	// beta
	// c
	// prec
	// 100 trees of 4 leaves from chain 1
	// chain,iteration,log_joint,log_lik,alpha,beta,c,prec
}

// ExampleSummarizeTrees summarises a sample of trees: the average-linkage
// tree of the posterior mean LCA times, the sampled tree of maximum
// expected clade accuracy and the majority-rule consensus, each with its
// branch points' clade probabilities as Newick labels, and the posterior
// mean time of the lowest common ancestor of two rows. With tree
// files, use inference.NewickFiles(n, labels, paths...) as the source.
func ExampleSummarizeTrees() {
	var trees []*pydt.Tree
	for _, s := range []string{
		"(ant:0.5,bee:0.5,cat:0.5,dog:0.5):0.5;",
		"((ant:0.5,bee:0.5):0.25,(cat:0.25,dog:0.25):0.5):0.25;",
		"((ant:0.5,bee:0.5):0.25,(cat:0.25,dog:0.25):0.5):0.25;",
		"((ant:0.5,bee:0.5):0.25,(cat:0.25,dog:0.25):0.5):0.25;",
		"((ant:0.25,cat:0.25):0.5,bee:0.75,dog:0.75):0.25;",
	} {
		tr, err := pydt.ParseNewick(s, []string{"ant", "bee", "cat", "dog"})
		if err != nil {
			log.Fatal(err)
		}
		trees = append(trees, tr)
	}
	s, err := inference.SummarizeTrees(inference.TreeSlice(trees), 4, true)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(s.Linkage.Newick())
	fmt.Println(s.MaxAccuracy.Newick())
	fmt.Println(s.Consensus.Newick())
	fmt.Printf("expected correct minus incorrect clades: %.2f\n", s.MaxAccuracy.ExpectedCorrect())
	fmt.Printf("mean LCA time of ant and bee: %.4f\n", s.Coclust.MeanTime(0, 1))
	// Output:
	// ((ant:0.55,bee:0.55)0.6:0.12499999999999989,(cat:0.4,dog:0.4)0.6:0.2749999999999999)1:0.32500000000000007;
	// ((ant:0.55,bee:0.55)0.6:0.14999999999999997,(cat:0.4,dog:0.4)0.6:0.29999999999999993)1:0.3;
	// ((ant:0.55,bee:0.55)0.6:0.14999999999999997,(cat:0.4,dog:0.4)0.6:0.29999999999999993)1:0.3;
	// expected correct minus incorrect clades: 1.40
	// mean LCA time of ant and bee: 0.4500
}
