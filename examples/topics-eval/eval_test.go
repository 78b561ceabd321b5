package main

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestPredictive checks the perplexity estimator against the formula
// evaluated by hand: two draws, two held-out tokens.
func TestPredictive(t *testing.T) {
	// M = 2 documents, K = 2 topics, V = 3 words.
	p := newPredictive([]int{3, 1}, []int{2, 1})
	theta1 := []float64{0.5, 0.5, 0.25, 0.75}
	phi1 := []float64{0.2, 0.3, 0.5, 0.6, 0.3, 0.1}
	theta2 := []float64{1, 0, 0.5, 0.5}
	phi2 := []float64{0.1, 0.1, 0.8, 0.4, 0.4, 0.2}
	// Draw 1: token 1 (word 3, document 2): 0.25·0.5 + 0.75·0.1 = 0.2;
	// token 2 (word 1, document 1): 0.5·0.2 + 0.5·0.6 = 0.4.
	// Draw 2: 0.5·0.8 + 0.5·0.2 = 0.5; 1·0.1 + 0·0.4 = 0.1.
	pp1, err := p.add(theta1, phi1, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if want := math.Exp(-(math.Log(0.2) + math.Log(0.4)) / 2); !(math.Abs(pp1-want) <= 1e-12) {
		t.Errorf("draw 1 perplexity %v, want %v", pp1, want)
	}
	if _, err := p.add(theta2, phi2, 2, 3); err != nil {
		t.Fatal(err)
	}
	want := math.Exp(-(math.Log((0.2+0.5)/2) + math.Log((0.4+0.1)/2)) / 2)
	if got := p.Perplexity(); !(math.Abs(got-want) <= 1e-12) {
		t.Errorf("perplexity %v, want %v", got, want)
	}
	if _, err := p.add(theta2, []float64{0, 0, 0, 0, 0, 0}, 2, 3); err == nil {
		t.Error("a zero predictive probability gave no error")
	}
}

func TestSoftmaxTopWords(t *testing.T) {
	phi := softmaxRows([]float64{0, math.Log(3), 1000, 1000 + math.Log(3)}, 2, 2)
	for i, want := range []float64{0.25, 0.75, 0.25, 0.75} {
		if !(math.Abs(phi[i]-want) <= 1e-12) {
			t.Errorf("softmax %v, want 0.25 0.75 0.25 0.75", phi)
		}
	}
	if got := topWords([]float64{0.1, 0.6, 0.3}, 3, 0, 2, []string{"a", "b", "c"}); !slices.Equal(got, []string{"b", "c"}) {
		t.Errorf("top words %v", got)
	}
}

// TestRunFixture runs the flat model on the converter's tiny fixture
// (internal/brown/testdata/golden/lda, three texts): it compiles with the
// document index, chooses gibbs(z), sweeps and reports a finite
// perplexity of at least 1.
// The tree model (topics.pydt) also prints the tree over the topics.
func TestRunFixture(t *testing.T) {
	for _, model := range []string{"../topics-flat.pydt", "../topics.pydt"} {
		var b strings.Builder
		pp, err := run(config{model: model, data: "../../internal/brown/testdata/golden/lda", K: 2, sweeps: 20, burn: 10, thin: 2, seed: 1, top: 2}, &b)
		if err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if !strings.Contains(out, "gibbs(z)") || !strings.Contains(out, "held-out perplexity") || !strings.Contains(out, "topic 2:") {
			t.Errorf("%s: output:\n%s", model, out)
		}
		if strings.HasSuffix(model, "topics.pydt") && !strings.Contains(out, "(2 topics)") {
			t.Errorf("%s: no tree over the topics:\n%s", model, out)
		}
		if !(pp >= 1) || math.IsInf(pp, 0) {
			t.Errorf("%s: perplexity %v", model, pp)
		}
	}
}
