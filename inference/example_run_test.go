package inference_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/pydtlang/pydtlang/inference"
)

// writeExampleFiles writes a model and a data file into dir, as a user
// keeps them, and returns their paths.
func writeExampleFiles(dir string) (model, data string) {
	model, data = filepath.Join(dir, "model.pydt"), filepath.Join(dir, "x.csv")
	src := `dim N, D
data X : real[N, D]
alpha ~ Gamma(2, 0.5)
beta ~ Beta(1, 1)
c ~ Gamma(1, 1)
prec ~ Gamma(1, 1)
X ~ PYDT(alpha, beta, c, 1 / prec)
`
	if err := os.WriteFile(model, []byte(src), 0o644); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(data, []byte("name,x,y\nant,0.1,0.2\nbee,0.15,0.25\ncat,2.0,-1.0\ndog,2.1,-0.9\n"), 0o644); err != nil {
		log.Fatal(err)
	}
	return model, data
}

// ExampleResume does what "pydtlang run" and "pydtlang run --resume" do: it
// loads a model from its files (Inputs.Load, which records their SHA-256),
// runs it, and later continues the run from its directory alone: LoadRun
// rebuilds the model from run.json and ResumeTo extends the run. A data file
// changed in between is refused.
func ExampleResume() {
	dir, err := os.MkdirTemp("", "pydtlang-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	model, data := writeExampleFiles(dir)

	in := inference.Inputs{
		Model: inference.File{Path: model},
		Data:  map[string]inference.File{"X": {Path: data}},
		Set:   []string{"alpha=1"},
	}
	m, err := in.Load()
	if err != nil {
		log.Fatal(err)
	}
	out := filepath.Join(dir, "fit")
	res, err := inference.Run(context.Background(), m, inference.Config{Iters: 20, Chains: 2, Seed: 1, Out: out})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("ran", res.Completed, "sweeps")

	// Later, perhaps in another process: the run directory is enough.
	m, err = inference.LoadRun(out)
	if err != nil {
		log.Fatal(err)
	}
	res, err = inference.ResumeTo(context.Background(), m, out, 40, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("resumed to", res.Completed, "sweeps")
	ri, err := inference.ReadRun(out)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("run.json version %d: %s bound to %s, %v\n", ri.Version, "X", filepath.Base(ri.Inputs.Data["X"].Path), ri.Inputs.Set)

	// The data change: the run can no longer be continued.
	if err := os.WriteFile(data, []byte("name,x,y\nant,0,0\nbee,0.15,0.25\ncat,2.0,-1.0\ndog,2.1,-0.9\n"), 0o644); err != nil {
		log.Fatal(err)
	}
	_, err = inference.LoadRun(out)
	fmt.Println("after a change:", errors.Is(err, inference.ErrChanged))
	// Output:
	// ran 20 sweeps
	// resumed to 40 sweeps
	// run.json version 5: X bound to x.csv, [alpha=1]
	// after a change: true
}

// ExampleSample does what "pydtlang sample" and "pydtlang score" do: it
// draws data sets and trees from the prior, then loads draw 2 of the data
// and scores tree 2 at clamped values.
func ExampleSample() {
	dir, err := os.MkdirTemp("", "pydtlang-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	model, _ := writeExampleFiles(dir)

	// Without data, dimensions come from Set; partial leaves X unobserved.
	l, err := inference.Inputs{Model: inference.File{Path: model}, Set: []string{"N=6,D=2"}}.Compile(true)
	if err != nil {
		log.Fatal(err)
	}
	m, err := l.Model()
	if err != nil {
		log.Fatal(err)
	}
	out := filepath.Join(dir, "prior")
	if err := inference.Sample(m, 3, 7, out); err != nil {
		log.Fatal(err)
	}
	m, err = inference.Inputs{
		Model: inference.File{Path: model},
		Data:  map[string]inference.File{"X": {Path: filepath.Join(out, "X.csv")}},
		Draw:  2,
		Set:   []string{"alpha=1,beta=0.2,c=1,prec=2"},
	}.Load()
	if err != nil {
		log.Fatal(err)
	}
	scores, err := m.ScoreTreeFile(filepath.Join(out, inference.SampleTreesFile), 2)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(scores), "tree scored:", scores[0].LogJoint == scores[0].LogTree+scores[0].LogLik+scores[0].LogHyper)
	// Output:
	// 1 tree scored: true
}
