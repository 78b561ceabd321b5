// Command tag-accuracy scores the hidden states of a pydtlang run of
// examples/hmm-pos.pydt on a Brown category against the gold tags: the
// many-to-one accuracies on base and full tags and the one-to-one accuracy
// on base tags (package inference/labels, as examples/hmm-baseline and
// examples/hmm-pos report them), then each state's most frequent base tag
// and top words. The states are read from the run's states-z.csv (columns
// t, state, prob: the modal state of each token over the kept draws, after
// the draws' labels are aligned to a reference draw), or with --trace from
// the last row of its draws-z-1.csv (the raw states z[1..T] of chain 1's
// last kept draw; trace.csv holds only occupied(z)).
// Last it prints the run's tree over the states (summary.nwk, whose leaf k
// is the aligned state k; --tree names another file of the run, "" none)
// with each leaf labelled by its state's tag and top words; not with
// --trace, whose raw states are not the tree's aligned ones:
//
//	pydtlang run examples/hmm-pos.pydt --data w=examples/data/brown/news/words.csv --set K=30 --set V=6279 --out pos
//	go run ./examples/tag-accuracy --data examples/data/brown/news --run pos
package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pydtlang/pydtlang/internal/bounded"
	"github.com/pydtlang/pydtlang/internal/brown"
	"github.com/pydtlang/pydtlang/internal/tagreport"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

func main() {
	data := flag.String("data", "examples/data/brown/news", "directory written by brown-convert for one category")
	run := flag.String("run", "", "the run's output directory (required)")
	trace := flag.Bool("trace", false, "read chain 1's last draw in draws-z-1.csv instead of the modal states of states-z.csv")
	K := flag.Int("states", 0, "number of states (0: the tree's leaves, or the largest state read if more)")
	tree := flag.String("tree", "summary.nwk", "the run's tree file over the states to print labelled (leaf k: state k), or \"\"")
	flag.Parse()
	treeSet := false
	flag.Visit(func(f *flag.Flag) { treeSet = treeSet || f.Name == "tree" })
	if *trace && !treeSet {
		*tree = "" // summary.nwk's leaves are aligned states, not chain 1's raw ones
	}
	if err := score(os.Stdout, *data, *run, *trace, *K, *tree); err != nil {
		fmt.Fprintln(os.Stderr, "tag-accuracy:", err)
		os.Exit(1)
	}
}

func score(out io.Writer, data, run string, trace bool, K int, tree string) error {
	if run == "" {
		return fmt.Errorf("--run DIR is required")
	}
	if trace && tree != "" {
		return fmt.Errorf("--trace reads the raw states of chain 1's last draw, but the tree %s is over aligned states: its leaves would be labelled by other states' tags and words (pass --tree \"\")", tree)
	}
	tg, err := brown.ReadTagging(data)
	if err != nil {
		return err
	}
	var z []int
	if trace {
		z, err = readTrace(filepath.Join(run, "draws-z-1.csv"))
	} else {
		z, err = readStates(filepath.Join(run, "states-z.csv"))
	}
	if err != nil {
		return err
	}
	if len(z) != len(tg.Words) {
		return fmt.Errorf("%d states read but the data have %d tokens", len(z), len(tg.Words))
	}
	fixed := K > 0
	for _, s := range z {
		K = max(K, s+1)
	}
	var tr *pydt.Tree
	if tree != "" {
		if tr, K, err = readStateTree(filepath.Join(run, tree), tree, K, fixed); err != nil {
			return err
		}
	}
	w, tags, base := make([]int, len(z)), make([]int, len(z)), make([]int, len(z))
	for t := range z {
		w[t], tags[t], base[t] = tg.Words[t]-1, tg.Tags[t]-1, tg.Base[t]-1
	}
	mb, mf, ob, err := tagreport.Accuracies(tg, z, K, tags, base)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%d tokens, K = %d states: many-to-one %.4f (base tags), %.4f (full tags); one-to-one %.4f (base tags)\n", len(z), K, mb, mf, ob)
	mapping, words, err := tagreport.States(out, tg, z, K, w, base)
	if err != nil || tree == "" {
		return err
	}
	label := make([]string, K)
	for k, ws := range words {
		if len(ws) == 0 {
			label[k] = fmt.Sprintf("%d (empty)", k+1)
		} else {
			label[k] = fmt.Sprintf("%d %s: %s", k+1, tg.BaseTagset[mapping[k]], strings.Join(ws[:min(4, len(ws))], " "))
		}
	}
	fmt.Fprintf(out, "\nthe tree over the states (%s; branch points with their time t; leaves: state, most frequent base tag, top words):\n", tree)
	tagreport.PrintTree(out, tr, tr.Root(), label, "")
	return nil
}

// maxTreeBytes is the largest tree file over the states read: one tree,
// so the longest Newick line pydtlang reads (a variable so that a test can
// lower it).
var maxTreeBytes int64 = bounded.MaxNewickLineBytes

// readStateTree reads the tree over the states at path (named tree in
// errors), whose leaf k is state k, and returns it with the number of
// states: K, the largest state read (or --states, when fixed), or, when
// --states was not given, the tree's leaves where they are more (the states
// above the largest read are never the modal state of a token).
// The file is read bounded by maxTreeBytes: a larger one (not a tree over
// the states, which is one line) is an error naming it, not read whole.
func readStateTree(path, tree string, K int, fixed bool) (*pydt.Tree, int, error) {
	b, err := bounded.ReadFile(path, bounded.Options{Name: tree, What: "tree file over the states", Max: maxTreeBytes})
	if err != nil {
		return nil, 0, err
	}
	tr, err := pydt.ParseNewick(strings.TrimSpace(string(b)), nil)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", tree, err)
	}
	if tr.Labels != nil {
		return nil, 0, fmt.Errorf("%s: its leaves are named (%q, ...), but a tree over the states has leaves named 1..K, leaf k for state k", tree, tr.Labels[0])
	}
	n := tr.NumLeaves()
	switch {
	case n == K:
	case !fixed && n > K:
		K = n
	case fixed:
		return nil, 0, fmt.Errorf("%s has %d leaves, one per state, but K = %d (--states, or a larger state read): pass --states %d (or --tree \"\" for no tree)", tree, n, K, n)
	default:
		return nil, 0, fmt.Errorf("%s has %d leaves, one per state, but the states read go up to %d: is it the tree of another run? (--tree \"\" for no tree)", tree, n, K)
	}
	return tr, K, nil
}

// maxStatesBytes is the largest states file read, that of the data
// files pydtlang reads (a variable so that a test can lower it): a row of
// about 20 bytes per token, so some ten million tokens.
var maxStatesBytes int64 = bounded.MaxDataBytes

// readStates reads the 0-based states of states-z.csv (header t, state,
// prob; t running 1..T in order), bounded by maxStatesBytes: a larger
// file is an error naming it and the limit, not read whole.
func readStates(path string) ([]int, error) {
	rows, err := readCSV(path, bounded.Options{Name: path, What: "states file", Max: maxStatesBytes})
	if err != nil {
		return nil, err
	}
	if len(rows) < 1 || len(rows[0]) < 2 || rows[0][0] != "t" || rows[0][1] != "state" {
		return nil, fmt.Errorf("%s: want the header t,state,prob", path)
	}
	z := make([]int, 0, len(rows)-1)
	for i, r := range rows[1:] {
		if len(r) < 2 {
			return nil, fmt.Errorf("%s: line %d: want t,state,prob, got %q", path, i+2, strings.Join(r, ","))
		}
		t, err1 := strconv.Atoi(r[0])
		s, err2 := strconv.Atoi(r[1])
		if err1 != nil || err2 != nil || t != i+1 || s < 1 {
			return nil, fmt.Errorf("%s: line %d: want t = %d and a state >= 1, got %q", path, i+2, i+1, strings.Join(r, ","))
		}
		z = append(z, s-1)
	}
	return z, nil
}

// maxTraceLineBytes is the longest line of draws-z-1.csv read (a variable
// so that a test can lower it): one draw of the states, a few bytes per
// token, so some fifty million tokens, as the data files pydtlang reads.
var maxTraceLineBytes = bounded.MaxDataBytes

// readTrace reads the 0-based states z[1..T] of the last draw of chain 1
// in a run's draws-z-1.csv (header iteration,states; each row an
// iteration and the states separated by spaces), streamed so that a file
// of many draws of 10^5 states is not held in memory, and each line
// bounded by maxTraceLineBytes: a longer one (not a draw, or a file that
// is not text) is an error naming its line and the limit, not held whole.
func readTrace(path string) ([]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	// readLine returns the next line (with its "\n", if any) in cur's
	// storage and nil or io.EOF, or an error naming the file and the
	// line: one longer than maxTraceLineBytes, or the reader's.
	var cur []byte
	lineNo := 0
	readLine := func() ([]byte, error) {
		lineNo++
		cur = cur[:0]
		for {
			chunk, err := br.ReadSlice('\n')
			if len(cur)+len(chunk) > maxTraceLineBytes {
				return nil, fmt.Errorf("%s: line %d is longer than %s, the longest draw read", path, lineNo, bounded.Size(int64(maxTraceLineBytes)))
			}
			cur = append(cur, chunk...)
			switch err {
			case bufio.ErrBufferFull:
				continue
			case nil, io.EOF:
				return cur, err
			}
			return nil, fmt.Errorf("%s: line %d: %w", path, lineNo, err)
		}
	}
	head, err := readLine()
	if err != nil && err != io.EOF {
		return nil, err
	}
	if strings.TrimSpace(string(head)) != "iteration,states" {
		return nil, fmt.Errorf("%s: the header is %.60q, want iteration,states (%v)", path, strings.TrimSpace(string(head)), err)
	}
	var last []byte
	for {
		line, err := readLine()
		if err != nil && err != io.EOF {
			return nil, err
		}
		if bytes.HasSuffix(line, []byte("\n")) {
			last = append(last[:0], line...)
		}
		if err == io.EOF {
			break
		}
	}
	if len(last) == 0 {
		return nil, fmt.Errorf("%s: no draws", path)
	}
	_, states, _ := strings.Cut(strings.TrimSpace(string(last)), ",")
	var z []int
	for t, x := range strings.Fields(states) {
		k, err := strconv.Atoi(x)
		if err != nil || k < 1 {
			return nil, fmt.Errorf("%s: last row, z[%d] = %q is not a state", path, t+1, x)
		}
		z = append(z, k-1)
	}
	if len(z) == 0 {
		return nil, fmt.Errorf("%s: no states in the last row", path)
	}
	return z, nil
}

// readCSV reads every row of the CSV file at path through a
// bounded.Reader with the options opts (whose errors name the file).
func readCSV(path string, opts bounded.Options) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(bounded.NewReader(f, opts))
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if be := (*bounded.Error)(nil); errors.As(err, &be) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rows, nil
}
