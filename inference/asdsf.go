package inference

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// MinSplitFreq is the clade frequency below which, in every chain, a
// clade is left out of the average standard deviation of split
// frequencies, as MrBayes's default Minpartfreq = 0.10.
const MinSplitFreq = 0.1

// SplitSD is the convergence of several chains' trees: the standard
// deviation across chains of each clade's frequency, averaged (ASDSF, the
// average standard deviation of split frequencies that MrBayes reports)
// and at its largest, over the clades whose frequency is at least the
// minimum in at least one chain. A clade is a set of rows below a branch
// point other than the root: the trees are rooted, so clades play the
// part of MrBayes's splits, and the root's clade (every row, in every
// tree) and single rows are left out. Values near 0 say the chains agree
// on the clades; MrBayes's manual takes an ASDSF below 0.01 as very good
// agreement and one between 0.01 and 0.05 as acceptable.
type SplitSD struct {
	// Average is the ASDSF, NaN when no clade qualifies; Max the largest
	// standard deviation (0 when none qualifies).
	Average float64
	Max     float64
	// Clades is the number of clades averaged over, Chains the number of
	// chains.
	Clades int
	Chains int
}

// SplitFrequencySD computes the SplitSD of the clade counts of each chain.
// A clade's frequency in a chain is its count over the chain's number of
// trees; its standard deviation is the sample one, with K − 1 in the
// denominator for K chains (as MrBayes, CalcPartFreqStats); a clade counts
// when its frequency is at least minFreq in some chain. The clades are
// matched by their hash keys. It needs at least two chains, each with a
// tree, and exact counts (CladeCounts.Exact): SummarizeChains, whose
// counts are bounded, recounts the clades it needs instead.
func SplitFrequencySD(chains []*CladeCounts, minFreq float64) (SplitSD, error) {
	k := len(chains)
	if k < 2 {
		return SplitSD{}, errors.New("split frequencies: need at least two chains")
	}
	n := chains[0].n
	s := &splitCounts{chains: k, trees: make([]int64, k)}
	for i, c := range chains {
		if c.n != n {
			return SplitSD{}, fmt.Errorf("split frequencies: chain %d has %d leaves, chain 1 %d", i+1, c.n, n)
		}
		if c.trees == 0 {
			return SplitSD{}, fmt.Errorf("split frequencies: chain %d has no trees", i+1)
		}
		if !c.Exact() {
			return SplitSD{}, fmt.Errorf("split frequencies: the counts of chain %d are not exact (their counters overflowed)", i+1)
		}
		s.trees[i] = c.trees
		c.tab.each(func(key cladeKey, _ uint32) {
			if !s.index.has(key) {
				s.keys = append(s.keys, key)
				s.index.add(key, uint32(len(s.keys)))
			}
		})
	}
	s.count = make([]uint32, len(s.keys)*k)
	for i, key := range s.keys {
		for j, c := range chains {
			s.count[i*k+j] = c.tab.get(key)
		}
	}
	return s.sd(chains[0].keys, minFreq), nil
}

// sd computes the SplitSD of the counted clades; leaves are the keys of
// the leaves (the root's clade, their sum, is left out).
func (s *splitCounts) sd(leaves []cladeKey, minFreq float64) SplitSD {
	k := s.chains
	var root cladeKey
	for _, key := range leaves {
		root[0] += key[0]
		root[1] += key[1]
	}
	out := SplitSD{Chains: k}
	var sds []float64
	f := make([]float64, k)
	for i, key := range s.keys {
		if key == root {
			continue
		}
		qualifies := false
		var mean float64
		for j := range k {
			f[j] = float64(s.count[i*k+j]) / float64(s.trees[j])
			qualifies = qualifies || f[j] >= minFreq
			mean += f[j]
		}
		if !qualifies {
			continue
		}
		mean /= float64(k)
		var ss float64
		for _, x := range f {
			ss += (x - mean) * (x - mean)
		}
		sds = append(sds, math.Sqrt(ss/float64(k-1)))
	}
	// Summed in sorted order, so that the result does not depend on the
	// order the clades were found in.
	slices.Sort(sds)
	var sum float64
	for _, sd := range sds {
		sum += sd
		out.Max = max(out.Max, sd)
	}
	out.Clades = len(sds)
	out.Average = math.NaN()
	if out.Clades > 0 {
		out.Average = sum / float64(out.Clades)
	}
	return out
}
