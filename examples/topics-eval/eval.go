package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// corpus is the data directory written by brown-convert (OUT/lda): the
// observed tokens, the held-out tokens, the vocabulary and the number of
// documents.
type corpus struct {
	W, Doc         *dataset.Matrix // observed tokens
	TestW, TestDoc []int           // held-out tokens: word ids 1..V, documents 1..M
	Vocab          []string
	M              int
}

// readCorpus reads dir's w.csv, doc.csv, test-w.csv, test-doc.csv,
// vocab.txt and docs.csv (whose lines after the header count the
// documents).
func readCorpus(dir string) (*corpus, error) {
	c := &corpus{}
	var err error
	if c.W, err = dataset.ReadFile(filepath.Join(dir, "w.csv")); err != nil {
		return nil, err
	}
	if c.Doc, err = dataset.ReadFile(filepath.Join(dir, "doc.csv")); err != nil {
		return nil, err
	}
	for _, x := range []struct {
		name string
		to   *[]int
	}{{"test-w.csv", &c.TestW}, {"test-doc.csv", &c.TestDoc}} {
		m, err := dataset.ReadFile(filepath.Join(dir, x.name))
		if err != nil {
			return nil, err
		}
		for _, v := range m.Data {
			if v != math.Trunc(v) || v < 1 {
				return nil, fmt.Errorf("%s: %v is not an id", m.Source, v)
			}
			*x.to = append(*x.to, int(v))
		}
	}
	if c.Vocab, err = readLines(filepath.Join(dir, "vocab.txt")); err != nil {
		return nil, err
	}
	docs, err := readLines(filepath.Join(dir, "docs.csv"))
	if err != nil {
		return nil, err
	}
	c.M = len(docs) - 1
	if len(c.TestW) != len(c.TestDoc) || c.M < 1 || len(c.Vocab) < 1 {
		return nil, fmt.Errorf("%s: %d held-out words with %d documents, %d documents, %d words", dir, len(c.TestW), len(c.TestDoc), c.M, len(c.Vocab))
	}
	for i, w := range c.TestW {
		if w > len(c.Vocab) || c.TestDoc[i] > c.M {
			return nil, fmt.Errorf("%s: held-out token %d (word %d, document %d) is outside %d words, %d documents", dir, i+1, w, c.TestDoc[i], len(c.Vocab), c.M)
		}
	}
	return c, nil
}

func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out, sc.Err()
}

// predictive accumulates the held-out predictive density of document
// completion over the kept draws of a chain: for each held-out token t of
// document d, p_s(w_t) = Σ_k θ_s[d, k] φ_s[k, w_t] in draw s, and
// Perplexity = exp(−(1/N) Σ_t log((1/S) Σ_s p_s(w_t))), the perplexity of
// the posterior predictive estimated by the average over the S draws.
// Everything is invariant to relabelling the topics, so draws need no
// alignment.
type predictive struct {
	w, doc []int
	sum    []float64 // Σ_s p_s(w_t)
	draws  int
}

func newPredictive(w, doc []int) *predictive {
	return &predictive{w: w, doc: doc, sum: make([]float64, len(w))}
}

// add adds a draw: theta M×K and phi K×V row-major, probability rows. It
// returns the draw's own perplexity, exp(−(1/N) Σ_t log p_s(w_t)).
func (p *predictive) add(theta, phi []float64, K, V int) (float64, error) {
	var lp float64
	for t, w := range p.w {
		d := p.doc[t] - 1
		var q float64
		for k := range K {
			q += theta[d*K+k] * phi[k*V+w-1]
		}
		if !(q > 0) || math.IsInf(q, 0) {
			return 0, fmt.Errorf("held-out token %d: predictive probability %v", t+1, q)
		}
		p.sum[t] += q
		lp += math.Log(q)
	}
	p.draws++
	return math.Exp(-lp / float64(len(p.w))), nil
}

// Perplexity is the perplexity of the average predictive over the draws
// added; NaN before any.
func (p *predictive) Perplexity() float64 {
	if p.draws == 0 {
		return math.NaN()
	}
	var lp float64
	for _, s := range p.sum {
		lp += math.Log(s / float64(p.draws))
	}
	return math.Exp(-lp / float64(len(p.sum)))
}

// softmaxRows returns exp(x) / Σ exp(x) of each row of the K×V matrix x.
func softmaxRows(x []float64, K, V int) []float64 {
	out := make([]float64, len(x))
	for k := range K {
		row := x[k*V : (k+1)*V]
		hi := slices.Max(row)
		var s float64
		for v, e := range row {
			out[k*V+v] = math.Exp(e - hi)
			s += out[k*V+v]
		}
		for v := range row {
			out[k*V+v] /= s
		}
	}
	return out
}

// topWords returns the n most probable words of row k of the K×V matrix
// phi, most probable first.
func topWords(phi []float64, V, k, n int, vocab []string) []string {
	idx := make([]int, V)
	for v := range idx {
		idx[v] = v
	}
	row := phi[k*V : (k+1)*V]
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case row[a] > row[b]:
			return -1
		case row[a] < row[b]:
			return 1
		}
		return 0
	})
	out := make([]string, 0, n)
	for _, v := range idx[:min(n, V)] {
		out = append(out, vocab[v])
	}
	return out
}

// writeTree writes the tree with its internal nodes' divergence times,
// indented by depth, each leaf labelled by label(leaf index).
func writeTree(b *strings.Builder, tr *pydt.Tree, label func(i int) string) {
	var walk func(v pydt.NodeID, depth int)
	walk = func(v pydt.NodeID, depth int) {
		pad := strings.Repeat("  ", depth)
		if tr.IsLeaf(v) {
			fmt.Fprintf(b, "%s- %s\n", pad, label(int(v)))
			return
		}
		fmt.Fprintf(b, "%s+ t = %.3f (%d topics)\n", pad, tr.Time(v).T(), tr.Count(v))
		for c := range tr.Children(v) {
			walk(c, depth+1)
		}
	}
	walk(tr.Root(), 0)
}

// lookupLatent returns the latent variable name of g, or nil.
func lookupLatent(g *graph.Graph, name string) *graph.Var {
	v, ok := g.ByName[name]
	if !ok || v.Role != graph.Latent {
		return nil
	}
	return v
}
