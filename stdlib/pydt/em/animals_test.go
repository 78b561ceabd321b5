package em

import (
	"encoding/csv"
	"os"
	"strconv"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
)

// TestAnimals runs the EM core on the paper's binary animals data
// (examples/data/animals.csv, 33 animals × 102 features) with the probit
// likelihood: the initial tree by sequential attachment (on the features
// as ±1), then EM with EP sites and every hyperparameter learned. The
// paper's large groups must be clades of both trees: land mammals,
// predators, aquatic animals (the penguin among them, as in the paper),
// birds, insects. (The two reptiles join the root separately.)
func TestAnimals(t *testing.T) {
	f, err := os.Open("../../../examples/data/animals.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	n, d := len(rows)-1, len(rows[0])-1
	y, x := make([]float64, n*d), make([]float64, n*d)
	index := map[string]pydt.NodeID{}
	labels := make([]string, n)
	for i := range n {
		labels[i] = rows[i+1][0]
		index[labels[i]] = pydt.NodeID(i)
		for j := range d {
			v, err := strconv.ParseFloat(rows[i+1][j+1], 64)
			if err != nil {
				t.Fatal(err)
			}
			y[i*d+j], x[i*d+j] = v, 2*v-1
		}
	}
	groups := map[string][]string{
		"land mammals": {"Elephant", "Rhino", "Horse", "Cow", "Camel", "Deer", "Giraffe", "Chimp", "Gorilla", "Mouse", "Squirrel"},
		"predators":    {"Tiger", "Lion", "Cat", "Dog", "Wolf"},
		"aquatic":      {"Seal", "Dolphin", "Whale", "Salmon", "Trout", "Penguin"},
		"birds":        {"Robin", "Eagle", "Finch", "Chicken", "Ostrich"},
		"insects":      {"Bee", "Butterfly", "Ant", "Cockroach"},
	}
	check := func(what string, tr *pydt.Tree) {
		for name, g := range groups {
			set := map[pydt.NodeID]bool{}
			for _, a := range g {
				set[index[a]] = true
			}
			if !isClade(tr, set) {
				t.Errorf("%s: the %s are not a clade of %s", what, name, tr.Newick())
			}
		}
	}
	tr, _, err := SequentialTree(x, n, d, InitOptions{C: 1, Variance: 1, Alpha: 1, Beta: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	tr.Labels = labels
	check("initial tree", tr)
	ep, err := NewEP(Probit{}, y, n, d)
	if err != nil {
		t.Fatal(err)
	}
	opt := learnAll()
	opt.Alpha, opt.EP, opt.MaxIter = 1, ep, 20
	e, err := New(bp.New(tr, d), opt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(); err != nil {
		t.Fatal(err)
	}
	check("EM tree", tr)
	if tr := e.Trace(); !(tr[len(tr)-1] > tr[0]) {
		t.Errorf("EM with EP did not raise the objective: %v", tr)
	}
	t.Logf("EM: %d iterations, L %v → %v, E[c] %v, σ² %v, α %v, β %v", e.Iterations(), e.Trace()[0], e.Bound(),
		e.MeanC(), e.MeanVariance(), e.Alpha(), e.Beta())
}
