// Command topics-eval fits a topic model written in pydtlang
// (examples/topics-flat.pydt, latent Dirichlet allocation; or
// examples/topics.pydt, the same with a PYDT over the topics' log word
// weights) to the Brown documents written by brown-convert (OUT/lda), with
// the engine's own schedule, and reports the held-out perplexity of
// document completion and each topic's top words; for a model with a
// PYDT, the tree over the topics with each leaf labelled by its top words.
//
//	go run ./examples/topics-eval --model examples/topics-flat.pydt --data examples/data/brown/lda --topics 20
//
// The perplexity is that of the posterior predictive of the held-out
// tokens (the second half of each held-out document, whose first half is
// observed), estimated by averaging each token's predictive probability
// Σ_k θ[d, k] φ[k, w] over the kept draws (see predictive); it is
// invariant to the topics' labels. The model must name its per-document
// topic proportions theta (M×K) and either its per-topic word
// probabilities phi (K×V) or its per-topic log word weights eta (K×V,
// word probabilities softmax(eta[k])).
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/inference"
	"github.com/pydtlang/pydtlang/lang"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

func main() {
	model := flag.String("model", "examples/topics-flat.pydt", "the model file")
	data := flag.String("data", "examples/data/brown/lda", "the directory brown-convert wrote (OUT/lda)")
	K := flag.Int("topics", 20, "the number of topics K")
	sweeps := flag.Int("sweeps", 300, "sweeps of the chain, burn-in included")
	burn := flag.Int("burn", 150, "sweeps discarded before the draws are kept")
	thin := flag.Int("thin", 5, "keep every thin-th sweep after burn-in")
	every := flag.Int("every", 25, "print progress every this many sweeps (0: never)")
	seed := flag.Uint64("seed", 1, "the seed of the chain")
	top := flag.Int("top", 8, "top words printed per topic")
	explain := flag.Bool("explain", false, "print the schedule and stop")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: topics-eval [flags]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 || *K < 1 || *sweeps < 1 || *burn < 0 || *thin < 1 {
		flag.Usage()
		os.Exit(2)
	}
	if *sweeps-*burn < *thin {
		fmt.Fprintf(os.Stderr, "topics-eval: %d sweeps after %d of burn-in keep no draw at thinning %d\n", *sweeps, *burn, *thin)
		os.Exit(2)
	}
	cfg := config{model: *model, data: *data, K: *K, sweeps: *sweeps, burn: *burn, thin: *thin, every: *every, seed: *seed, top: *top, explain: *explain}
	if _, err := run(cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "topics-eval:", err)
		os.Exit(1)
	}
}

type config struct {
	model, data                  string
	K, sweeps, burn, thin, every int
	seed                         uint64
	top                          int
	explain                      bool
}

// compile compiles the model file with the corpus's observed tokens and
// K, M and V bound.
func compile(path string, c *corpus, K int) (*inference.Model, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := lang.Parse(path, src)
	if err == nil {
		var g *graph.Graph
		g, err = graph.Compile(f, graph.Options{
			Data: map[string]*dataset.Matrix{"w": c.W, "doc": c.Doc},
			Set:  map[string]float64{"K": float64(K), "M": float64(c.M), "V": float64(len(c.Vocab))},
		})
		if err == nil {
			return inference.NewModel(g)
		}
	}
	if el, ok := err.(lang.ErrorList); ok {
		var b strings.Builder
		el.Format(&b, src)
		return nil, fmt.Errorf("%s", b.String())
	}
	return nil, err
}

// run fits the model, writes the report to out and returns the held-out
// perplexity.
func run(cfg config, out io.Writer) (float64, error) {
	c, err := readCorpus(cfg.data)
	if err != nil {
		return 0, err
	}
	m, err := compile(cfg.model, c, cfg.K)
	if err != nil {
		return 0, err
	}
	V := len(c.Vocab)
	theta := lookupLatent(m.G, "theta")
	phi, eta := lookupLatent(m.G, "phi"), m.G.ByName["eta"]
	if theta == nil || phi == nil && eta == nil {
		return 0, fmt.Errorf("%s: the model must have latent theta (M×K) and phi or eta (K×V)", cfg.model)
	}
	sched, err := inference.NewSchedule(m)
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(out, "%s: %d observed tokens, %d held-out tokens, M = %d documents, V = %d words, K = %d topics\n",
		cfg.model, c.W.Rows, len(c.TestW), c.M, V, cfg.K)
	fmt.Fprint(out, sched.Explain())
	if cfg.explain {
		return math.NaN(), nil
	}
	ch, err := inference.NewChain(m, sched, cfg.seed, 0)
	if err != nil {
		return 0, err
	}
	probs := func() []float64 {
		if phi != nil {
			return ch.Values(phi)
		}
		return softmaxRows(ch.Values(eta), cfg.K, V)
	}
	pred := newPredictive(c.TestW, c.TestDoc)
	var (
		best     = math.Inf(-1)
		bestPhi  []float64
		bestTree *pydt.Tree
		bestAt   int
		cpu      time.Duration
	)
	for it := 1; it <= cfg.sweeps; it++ {
		start := time.Now()
		if err := ch.Sweep(); err != nil {
			return 0, fmt.Errorf("sweep %d: %w", it, err)
		}
		cpu += time.Since(start)
		kept := it > cfg.burn && (it-cfg.burn)%cfg.thin == 0
		show := cfg.every > 0 && it%cfg.every == 0
		if !kept && !show {
			continue
		}
		pt, err := ch.Measure(nil)
		if err != nil {
			return 0, err
		}
		line := fmt.Sprintf("sweep %4d  log_joint %.1f  log_lik %.1f", it, pt.LogJoint, pt.LogLik)
		if kept {
			ph := probs()
			pp, err := pred.add(ch.Values(theta), ph, cfg.K, V)
			if err != nil {
				return 0, fmt.Errorf("sweep %d: %w", it, err)
			}
			line += fmt.Sprintf("  perplexity of this draw %.1f, of the average so far %.1f", pp, pred.Perplexity())
			if pt.LogJoint > best {
				best, bestPhi, bestAt = pt.LogJoint, ph, it
				if len(m.Trees) > 0 {
					bestTree = ch.Tree(0).Clone()
				}
			}
		}
		if show {
			fmt.Fprintln(out, line)
		}
	}
	fmt.Fprintf(out, "\n%.3f s a sweep (wall clock of the sweeps alone)\n", cpu.Seconds()/float64(cfg.sweeps))
	fmt.Fprintf(out, "held-out perplexity (document completion, %d kept draws averaged): %.2f\n", pred.draws, pred.Perplexity())
	if bestPhi == nil {
		return 0, fmt.Errorf("no kept draw has a finite log joint: no topics to show")
	}
	fmt.Fprintf(out, "\ntopics of the kept draw with the highest log joint (sweep %d; labels are that draw's):\n", bestAt)
	label := func(k int) string {
		return fmt.Sprintf("topic %d: %s", k+1, strings.Join(topWords(bestPhi, V, k, cfg.top, c.Vocab), " "))
	}
	if bestTree == nil {
		for k := range cfg.K {
			fmt.Fprintln(out, label(k))
		}
		return pred.Perplexity(), nil
	}
	var b strings.Builder
	writeTree(&b, bestTree, label)
	fmt.Fprint(out, b.String())
	return pred.Perplexity(), nil
}
