// Package tagreport prints how the hidden states of an HMM fitted to a
// Brown category (package internal/brown) match the gold tags: the
// accuracies of package inference/labels and a table of the states. It is
// shared by examples/hmm-baseline, examples/hmm-pos and
// examples/tag-accuracy, with the tree over the states (PrintTree).
package tagreport

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/pydtlang/pydtlang/inference/labels"
	"github.com/pydtlang/pydtlang/internal/brown"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// Accuracies returns the many-to-one accuracies of the states z (in
// [0, K)) against the 0-based base tags and full tags of tg, and the
// one-to-one accuracy against the base tags.
func Accuracies(tg *brown.Tagging, z []int, K int, tags, base []int) (m1Base, m1Full, o1Base float64, err error) {
	if m1Base, _, err = labels.ManyToOne(z, K, base, len(tg.BaseTagset)); err != nil {
		return 0, 0, 0, err
	}
	if m1Full, _, err = labels.ManyToOne(z, K, tags, len(tg.Tagset)); err != nil {
		return 0, 0, 0, err
	}
	if o1Base, _, err = labels.OneToOne(z, K, base, len(tg.BaseTagset)); err != nil {
		return 0, 0, 0, err
	}
	return m1Base, m1Full, o1Base, nil
}

// States writes to out a table with one line per state: its number of
// tokens, its many-to-one base tag with the share of its tokens carrying
// it, and its eight most frequent words (ties by word id), where z, w and
// base are the 0-based states, word ids and base tags of the tokens. It
// returns the many-to-one mapping of states to base tags and each state's
// top words (none for an empty state).
func States(out io.Writer, tg *brown.Tagging, z []int, K int, w, base []int) (mapping []int, words [][]string, err error) {
	if _, mapping, err = labels.ManyToOne(z, K, base, len(tg.BaseTagset)); err != nil {
		return nil, nil, err
	}
	words = make([][]string, K)
	fmt.Fprintln(out, "\nstate  tokens  tag (share)    top words")
	for k := range K {
		n, hit := 0, 0
		counts := map[int]int{}
		for t, zt := range z {
			if zt == k {
				n++
				counts[w[t]]++
				if base[t] == mapping[k] {
					hit++
				}
			}
		}
		if n == 0 {
			fmt.Fprintf(out, "%5d  %6d  (empty)\n", k+1, 0)
			continue
		}
		top := make([]int, 0, len(counts))
		for v := range counts {
			top = append(top, v)
		}
		slices.SortFunc(top, func(a, b int) int {
			if counts[a] != counts[b] {
				return counts[b] - counts[a]
			}
			return a - b
		})
		var ws []string
		for _, v := range top[:min(8, len(top))] {
			ws = append(ws, tg.Vocab.Words[v])
		}
		words[k] = ws
		fmt.Fprintf(out, "%5d  %6d  %-6s (%3.0f%%)  %s\n", k+1, n, tg.BaseTagset[mapping[k]], 100*float64(hit)/float64(n), strings.Join(ws, " "))
	}
	return mapping, words, nil
}

// PrintTree writes the subtree of tr below v to out, indented by depth
// from indent: branch points with their time, leaf i labelled label[i].
func PrintTree(out io.Writer, tr *pydt.Tree, v pydt.NodeID, label []string, indent string) {
	if tr.IsLeaf(v) {
		fmt.Fprintf(out, "%s- %s\n", indent, label[v])
		return
	}
	fmt.Fprintf(out, "%s+ t = %.3f\n", indent, tr.Time(v).T())
	for c := range tr.Children(v) {
		PrintTree(out, tr, c, label, indent+"  ")
	}
}
