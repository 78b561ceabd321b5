package main

import (
	"math/rand/v2"
	"testing"

	"github.com/pydtlang/pydtlang/internal/brown"
)

// BenchmarkSweepBrownNews times one sweep on the Brown news category
// (T = 100,554, V = 6,279, K = 30), after 5 sweeps from the prior. It
// needs examples/data/brown/news (scripts/fetch-brown.sh) and is skipped
// without it.
func BenchmarkSweepBrownNews(b *testing.B) {
	tg, err := brown.ReadTagging("../data/brown/news")
	if err != nil {
		b.Skipf("no Brown news data (run scripts/fetch-brown.sh): %v", err)
	}
	w := make([]int, len(tg.Words))
	for t := range w {
		w[t] = tg.Words[t] - 1
	}
	cfg := config{K: 30, V: len(tg.Vocab.Words), transPrior: 1, alpha: 0.3, beta: 0.5, c: 1, precShape: 1, precRate: 1}
	s, err := newSampler(cfg, w, rand.New(rand.NewPCG(1, 12)))
	if err != nil {
		b.Fatal(err)
	}
	for range 5 {
		if _, err := s.sweep(); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		if _, err := s.sweep(); err != nil {
			b.Fatal(err)
		}
	}
}
