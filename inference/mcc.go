package inference

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// cladeKey identifies a clade (a set of leaves) by two independent sums of
// random 64-bit keys, one per leaf: equal sets have equal keys, and distinct
// sets collide with probability about 2^-128.
type cladeKey [2]uint64

// cladeHasher assigns the leaf keys.
type cladeHasher struct {
	keys [][2]uint64
	buf  []cladeKey
	ord  []pydt.NodeID
}

func newCladeHasher(n int) *cladeHasher {
	rng := rand.New(rand.NewPCG(0x6d6363, 0x636c616465)) // fixed: keys are internal
	h := &cladeHasher{keys: make([][2]uint64, n)}
	for i := range h.keys {
		h.keys[i] = [2]uint64{rng.Uint64(), rng.Uint64()}
	}
	return h
}

// clades calls fn with the key of every branch point's clade.
func (h *cladeHasher) clades(tr *pydt.Tree, fn func(v pydt.NodeID, k cladeKey)) {
	if cap(h.buf) < tr.Cap() {
		h.buf = make([]cladeKey, tr.Cap())
	}
	h.buf = h.buf[:tr.Cap()]
	h.ord = tr.PostOrder(h.ord[:0])
	for _, v := range h.ord {
		if tr.IsLeaf(v) {
			h.buf[v] = cladeKey(h.keys[v])
			continue
		}
		var k cladeKey
		for c := tr.FirstChild(v); c != pydt.NoNode; c = tr.NextSibling(c) {
			k[0] += h.buf[c][0]
			k[1] += h.buf[c][1]
		}
		h.buf[v] = k
		fn(v, k)
	}
}

// count returns how many of the trees contain each clade.
func (h *cladeHasher) count(trees []*pydt.Tree) map[cladeKey]float64 {
	freq := map[cladeKey]float64{}
	for _, tr := range trees {
		h.clades(tr, func(_ pydt.NodeID, k cladeKey) { freq[k]++ })
	}
	return freq
}

// MCC returns the maximum clade credibility tree of a sample of trees over
// the same leaves: the sampled tree whose branch points' clades have the
// largest product of posterior frequencies (the fraction of trees in which
// each clade appears), with that sample's own divergence times, and the log
// of that product. It is the summary tree of TreeAnnotator and of most
// Bayesian phylogenetics software, and unlike the highest-density tree it
// does not depend on how times are parameterised.
func MCC(trees []*pydt.Tree) (*pydt.Tree, float64, error) {
	if len(trees) == 0 {
		return nil, 0, fmt.Errorf("mcc: no trees")
	}
	n := trees[0].NumLeaves()
	for i, tr := range trees {
		if tr.NumLeaves() != n {
			return nil, 0, fmt.Errorf("mcc: tree %d has %d leaves, tree 1 has %d", i+1, tr.NumLeaves(), n)
		}
	}
	h := newCladeHasher(n)
	freq := h.count(trees)
	total := float64(len(trees))
	best, bestScore := 0, math.Inf(-1)
	for i, tr := range trees {
		score := 0.0
		h.clades(tr, func(_ pydt.NodeID, k cladeKey) { score += math.Log(freq[k] / total) })
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	return trees[best].Clone(), bestScore, nil
}

// CladeFrequencies returns, for each branch point of tr, the fraction of
// trees in sample that contain its clade.
func CladeFrequencies(tr *pydt.Tree, sample []*pydt.Tree) map[pydt.NodeID]float64 {
	h := newCladeHasher(tr.NumLeaves())
	freq := h.count(sample)
	out := map[pydt.NodeID]float64{}
	h.clades(tr, func(v pydt.NodeID, k cladeKey) { out[v] = freq[k] / float64(len(sample)) })
	return out
}
