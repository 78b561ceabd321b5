// Command hmm-pos fits a hidden Markov model over the words of one Brown
// category whose K states' emission logits are the leaves of a PYDT (the
// hierarchy over HMM states of Knowles & Ghahramani's conclusion, issue
// 12), and reports the many-to-one and one-to-one tag accuracies of its
// states (package inference/labels) beside examples/hmm-baseline's (the
// same HMM with Dirichlet emissions and no tree), each state's most
// frequent gold tag and top words, and the learnt tree over the states
// labelled by them. The emission logits are drawn exactly given the tree
// (package stdlib/softmaxleaf: a Laplace approximation corrected by exact
// MH and elliptical slice steps); see sampler.go for the model and the
// sweep. The same model in the language, with priors on alpha, beta and
// c, is examples/hmm-pos.pydt (run with pydtlang run); this program is kept
// as a reference implementation. The data come from scripts/fetch-brown.sh
// (see examples/README.md):
//
//	scripts/fetch-brown.sh
//	go run ./examples/hmm-pos --data examples/data/brown/news --states 30 --sweeps 200 --seed 1
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/pydtlang/pydtlang/internal/brown"
	"github.com/pydtlang/pydtlang/internal/tagreport"
)

func main() {
	data := flag.String("data", "examples/data/brown/news", "directory written by brown-convert for one category")
	K := flag.Int("states", 30, "number of hidden states (the tree's leaves)")
	tokens := flag.Int("tokens", 0, "use only the first this many tokens (0: all)")
	sweeps := flag.Int("sweeps", 200, "Gibbs sweeps")
	every := flag.Int("every", 10, "report every this many sweeps")
	seed := flag.Uint64("seed", 1, "random seed")
	transPrior := flag.Float64("trans-prior", 1, "Dirichlet parameter of the initial distribution and the transition rows")
	alpha := flag.Float64("alpha", 0.3, "the PYDT's alpha (fixed)")
	beta := flag.Float64("beta", 0.5, "the PYDT's beta (fixed)")
	c := flag.Float64("c", 1, "the PYDT's divergence constant c, a(t) = c/(1-t) (fixed)")
	treeOut := flag.String("tree", "", "write the final tree, leaves labelled by state, tag and top words, to this Newick file")
	flag.Parse()
	cfg := config{K: *K, transPrior: *transPrior, alpha: *alpha, beta: *beta, c: *c, precShape: 1, precRate: 1}
	if err := run(*data, cfg, *tokens, *sweeps, *every, *seed, *treeOut); err != nil {
		fmt.Fprintln(os.Stderr, "hmm-pos:", err)
		os.Exit(1)
	}
}

func run(data string, cfg config, tokens, sweeps, every int, seed uint64, treeOut string) error {
	if sweeps < 1 || every < 1 || tokens < 0 {
		return fmt.Errorf("--sweeps and --every must be at least 1, --tokens not negative")
	}
	tg, err := brown.ReadTagging(data)
	if err != nil {
		return err
	}
	T := len(tg.Words)
	if tokens > 0 && tokens < T {
		T = tokens
	}
	cfg.V = len(tg.Vocab.Words)
	w := make([]int, T)
	tags, base := make([]int, T), make([]int, T)
	for t := range w {
		w[t], tags[t], base[t] = tg.Words[t]-1, tg.Tags[t]-1, tg.Base[t]-1
	}
	s, err := newSampler(cfg, w, rand.New(rand.NewPCG(seed, 12)))
	if err != nil {
		return err
	}
	K := cfg.K
	fmt.Printf("%d tokens, %d word ids, %d gold tags (%d base), K = %d states, PYDT(alpha %g, beta %g, c %g)\n",
		T, cfg.V, len(tg.Tagset), len(tg.BaseTagset), K, cfg.alpha, cfg.beta, cfg.c)
	fmt.Printf("%6s %14s %10s %10s %10s %9s %8s\n", "sweep", "log p(w|par)", "M-1 base", "M-1 full", "1-1 base", "sigma^2", "s/sweep")
	start := time.Now()
	for sw := 1; sw <= sweeps; sw++ {
		ll, err := s.sweep()
		if err != nil {
			return fmt.Errorf("sweep %d: %w", sw, err)
		}
		if sw%every == 0 || sw == sweeps {
			mb, mf, ob, err := tagreport.Accuracies(tg, s.z, K, tags, base)
			if err != nil {
				return err
			}
			fmt.Printf("%6d %14.1f %10.4f %10.4f %10.4f %9.4f %8.3f\n", sw, ll, mb, mf, ob, 1/s.prec, time.Since(start).Seconds()/float64(sw))
		}
	}
	fmt.Printf("leaf updates: %d, MH acceptance %.3f, Laplace stopped short of the mode in %d (the exact steps do not need the mode)\n",
		s.Proposed, float64(s.Accepted)/float64(s.Proposed), s.sw.NotConverged)
	mapping, words, err := tagreport.States(os.Stdout, tg, s.z, K, w, base)
	if err != nil {
		return err
	}
	label := make([]string, K)
	for k, ws := range words {
		if len(ws) == 0 {
			label[k] = fmt.Sprintf("%d_empty", k+1)
		} else {
			label[k] = fmt.Sprintf("%d %s: %s", k+1, tg.BaseTagset[mapping[k]], strings.Join(ws[:min(4, len(ws))], " "))
		}
	}
	fmt.Println("\nthe tree over the states (branch points with their time t; leaves: state, most frequent base tag, top words):")
	tagreport.PrintTree(os.Stdout, s.tree, s.tree.Root(), label, "")
	if treeOut != "" {
		s.tree.Labels = label
		if err := os.WriteFile(treeOut, append(s.tree.AppendNewickLabeled(nil, nil), '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}
