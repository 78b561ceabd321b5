// Command hmm-baseline fits a plain Bayesian hidden Markov model (no tree)
// to the words of one Brown category by blocked Gibbs sampling (FFBS of the
// states with package stdlib/hmm, Dirichlet draws of the parameters), and
// reports the many-to-one and one-to-one tag accuracies of its states
// against the gold tags (package inference/labels), and each state's most
// frequent gold tag and top words. It is the baseline for an HMM with a
// PYDT over its states (issue 12). The data come from
// scripts/fetch-brown.sh (see examples/README.md):
//
//	scripts/fetch-brown.sh
//	go run ./examples/hmm-baseline --data examples/data/brown/news --states 30 --sweeps 200 --seed 1
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/pydtlang/pydtlang/internal/brown"
	"github.com/pydtlang/pydtlang/internal/tagreport"
)

func main() {
	data := flag.String("data", "examples/data/brown/news", "directory written by brown-convert for one category")
	K := flag.Int("states", 30, "number of hidden states")
	sweeps := flag.Int("sweeps", 200, "Gibbs sweeps")
	every := flag.Int("every", 10, "report every this many sweeps")
	seed := flag.Uint64("seed", 1, "random seed")
	transPrior := flag.Float64("trans-prior", 1, "Dirichlet parameter of the initial distribution and the transition rows")
	emitPrior := flag.Float64("emit-prior", 0.1, "Dirichlet parameter of the emission rows")
	fromPrior := flag.Bool("start-prior", true, "start from parameters drawn from the prior (else from uniformly random states)")
	flag.Parse()
	if err := run(*data, *K, *sweeps, *every, *seed, *transPrior, *emitPrior, *fromPrior); err != nil {
		fmt.Fprintln(os.Stderr, "hmm-baseline:", err)
		os.Exit(1)
	}
}

func run(data string, K, sweeps, every int, seed uint64, transPrior, emitPrior float64, fromPrior bool) error {
	if sweeps < 1 || every < 1 || !(transPrior > 0) || !(emitPrior > 0) {
		return fmt.Errorf("--sweeps and --every must be at least 1, the priors positive")
	}
	tg, err := brown.ReadTagging(data)
	if err != nil {
		return err
	}
	V, T := len(tg.Vocab.Words), len(tg.Words)
	w := make([]int, T)
	tags, base := make([]int, T), make([]int, T)
	for t := range w {
		w[t], tags[t], base[t] = tg.Words[t]-1, tg.Tags[t]-1, tg.Base[t]-1
	}
	g, err := newGibbs(w, K, V, transPrior, emitPrior, fromPrior, rand.New(rand.NewPCG(seed, 12)))
	if err != nil {
		return err
	}
	fmt.Printf("%d tokens, %d word ids, %d gold tags (%d base), K = %d states\n", T, V, len(tg.Tagset), len(tg.BaseTagset), K)
	fmt.Printf("%6s %14s %10s %10s %10s %8s\n", "sweep", "log p(w|par)", "M-1 base", "M-1 full", "1-1 base", "s/sweep")
	start := time.Now()
	for s := 1; s <= sweeps; s++ {
		ll, err := g.sweep()
		if err != nil {
			return fmt.Errorf("sweep %d: %w", s, err)
		}
		if s%every == 0 || s == sweeps {
			mb, mf, ob, err := tagreport.Accuracies(tg, g.z, K, tags, base)
			if err != nil {
				return err
			}
			fmt.Printf("%6d %14.1f %10.4f %10.4f %10.4f %8.3f\n", s, ll, mb, mf, ob, time.Since(start).Seconds()/float64(s))
		}
	}
	_, _, err = tagreport.States(os.Stdout, tg, g.z, K, w, base)
	return err
}
