package inference

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// mergeInputs copies the noise model and its data of testdata/v1run/src
// into a new directory and returns the inputs naming them.
func mergeInputs(t *testing.T) Inputs {
	t.Helper()
	src := copyDir(t, filepath.Join("testdata", "v1run", "src"))
	return Inputs{Model: File{Path: filepath.Join(src, "noise.pydt")}, Data: map[string]File{"X": {Path: filepath.Join(src, "points.csv")}}}
}

// mergeRunOf runs in a new directory the chains offset+1 .. offset+chains
// of the design cfg, on the model of in.
func mergeRunOf(t *testing.T, in Inputs, cfg Config, offset, chains int) string {
	t.Helper()
	m, err := in.Load()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Out, cfg.ChainOffset, cfg.Chains = t.TempDir(), offset, chains
	if _, err := Run(context.Background(), m, cfg); err != nil {
		t.Fatal(err)
	}
	return cfg.Out
}

// TestSummarizeChainOffsets runs four chains as one run and as four runs
// of one chain with offsets 0..3, and checks that the one-chain runs hold
// the four-chain run's trace rows and tree files, and that their merged
// summary is its summary: the same numbers, map.nwk, summary trees and
// co-clustering. Summarize is checked against the run's own summary,
// which is computed from the chains in memory and the tree files by the
// run (not by Summarize), with the runs given out of order.
func TestSummarizeChainOffsets(t *testing.T) {
	in := mergeInputs(t)
	cfg := Config{Iters: 30, Burn: 10, Thin: 2, Seed: 11, CheckpointEvery: 7, Impute: false}
	whole := mergeRunOf(t, in, cfg, 0, 4)
	var parts []string
	for k := range 4 {
		parts = append(parts, mergeRunOf(t, in, cfg, k, 1))
	}
	// The trace rows and tree files of chain k are those of the whole run.
	wholeTrace := readLines(t, filepath.Join(whole, TraceFile))
	for k, dir := range parts {
		want := []string{wholeTrace[0]}
		for _, row := range wholeTrace[1:] {
			if strings.HasPrefix(row, fmt.Sprintf("%d,", k+1)) {
				want = append(want, row)
			}
		}
		if got := readLines(t, filepath.Join(dir, TraceFile)); !reflect.DeepEqual(got, want) {
			t.Errorf("chain %d: trace.csv of the one-chain run differs from the four-chain run's rows", k+1)
		}
		a, _ := os.ReadFile(filepath.Join(whole, TreesFile(k+1)))
		b, err := os.ReadFile(filepath.Join(dir, TreesFile(k+1)))
		if err != nil || len(a) == 0 || string(a) != string(b) {
			t.Errorf("chain %d: %s differs (%v)", k+1, TreesFile(k+1), err)
		}
		if _, err := os.Stat(filepath.Join(dir, TreesFile(1))); k > 0 && err == nil {
			t.Errorf("chain %d's run wrote %s", k+1, TreesFile(1))
		}
		ri, err := ReadRun(dir)
		if err != nil || ri.ChainOffset != k || ri.Version != RunVersion {
			t.Errorf("chain %d: run.json %+v, %v", k+1, ri, err)
		}
		if got := RunTreeFiles(dir); len(got) != 1 || filepath.Base(got[0]) != TreesFile(k+1) {
			t.Errorf("chain %d: RunTreeFiles %v", k+1, got)
		}
		var own Result
		if err := readJSONFile(filepath.Join(dir, SummaryFile), &own); err != nil {
			t.Fatal(err)
		}
		if wantNumbers := []int{k + 1}; k > 0 && !reflect.DeepEqual(own.ChainNumbers, wantNumbers) || k == 0 && own.ChainNumbers != nil {
			t.Errorf("chain %d: its run's summary.json numbers its chains %v", k+1, own.ChainNumbers)
		}
	}
	out := filepath.Join(t.TempDir(), "merged")
	got, err := Summarize([]string{parts[2], parts[0], parts[3], parts[1]}, out)
	if err != nil {
		t.Fatal(err)
	}
	var want Result
	if err := readJSONFile(filepath.Join(whole, SummaryFile), &want); err != nil {
		t.Fatal(err)
	}
	var written Result
	if err := readJSONFile(filepath.Join(out, SummaryFile), &written); err != nil {
		t.Fatal(err)
	}
	if len(written.Runs) != 4 || written.Runs[0].Dir != parts[0] || written.Runs[3].FirstChain != 4 || written.Runs[3].Chains != 1 {
		t.Errorf("runs %+v", written.Runs)
	}
	if want.SummaryTree == nil || want.SummaryTree.ASDSF == nil || len(want.Scalars) < 5 {
		t.Fatalf("the four-chain run has no ASDSF or too few scalars: %+v", want)
	}
	written.WallTime, want.WallTime, written.Runs = 0, 0, nil
	if !reflect.DeepEqual(written, want) {
		t.Errorf("merged summary.json\n%+v\nwant the four-chain run's\n%+v", written, want)
	}
	if got.Chains != 4 || got.ChainNumbers != nil {
		t.Errorf("merged result: %d chains, numbers %v", got.Chains, got.ChainNumbers)
	}
	for _, name := range []string{MapFile, SummaryTreeFile, MEAFile, ConsensusFile, CoclustFile} {
		a, err := os.ReadFile(filepath.Join(whole, name))
		if err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(filepath.Join(out, name)); err != nil || string(a) != string(b) {
			t.Errorf("merged %s differs from the four-chain run's (%v)", name, err)
		}
	}
	// Two runs of two chains each merge to the same as well.
	got2, err := Summarize([]string{mergeRunOf(t, in, cfg, 2, 2), mergeRunOf(t, in, cfg, 0, 2)}, "")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got2.Scalars, want.Scalars) || !reflect.DeepEqual(got2.SummaryTree, want.SummaryTree) || !reflect.DeepEqual(got2.Acceptance, want.Acceptance) {
		t.Errorf("two runs of two chains: %+v, want %+v", got2, want)
	}
	// A gap in the chains is allowed and named.
	gap, err := Summarize([]string{parts[0], parts[3]}, "")
	if err != nil || !reflect.DeepEqual(gap.ChainNumbers, []int{1, 4}) || gap.Chains != 2 {
		t.Errorf("chains 1 and 4: %+v, %v", gap, err)
	}
}

// TestSummarizeRefuses checks that runs of another model, data or
// settings, runs holding the same chain, unfinished runs and an output
// directory that is a run are refused with a message naming the
// difference.
func TestSummarizeRefuses(t *testing.T) {
	in := mergeInputs(t)
	cfg := Config{Iters: 8, Burn: 4, Seed: 3}
	base := mergeRunOf(t, in, cfg, 0, 1)

	other := mergeInputs(t)
	src, err := os.ReadFile(other.Model.Path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other.Model.Path, []byte(strings.Replace(string(src), "Gamma(2, 0.5)", "Gamma(3, 0.5)", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	otherData := mergeInputs(t)
	data, err := os.ReadFile(otherData.Data["X"].Path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(otherData.Data["X"].Path, []byte(strings.Replace(string(data), "-0.820296", "-0.820297", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	seeded := cfg
	seeded.Seed = 4
	thinned := cfg
	thinned.Thin = 2
	clamped := in
	clamped.Set = []string{"alpha=1"}
	stopped := mergeRunOf(t, in, cfg, 1, 1)
	cp, err := ReadCheckpoint(stopped, nil)
	if err != nil {
		t.Fatal(err)
	}
	cp.Iteration = 5
	if err := writeJSONFile(filepath.Join(stopped, CheckpointFile), cp); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		dirs []string
		want string
	}{
		{"another model", []string{base, mergeRunOf(t, other, cfg, 1, 1)}, "the model file's SHA-256 differs"},
		{"other data", []string{base, mergeRunOf(t, otherData, cfg, 1, 1)}, "data X's SHA-256 differs"},
		{"another seed", []string{base, mergeRunOf(t, in, seeded, 1, 1)}, "the seed differs (3 in"},
		{"other thinning", []string{base, mergeRunOf(t, in, thinned, 1, 1)}, "the thinning differs"},
		{"other --set", []string{base, mergeRunOf(t, clamped, cfg, 1, 1)}, "--set differs"},
		{"the same chain", []string{base, mergeRunOf(t, in, cfg, 0, 2)}, "both hold chain 1"},
		{"the same run twice", []string{base, base}, "is given twice"},
		{"an unfinished run", []string{base, stopped}, "has done 5 of its 8 iterations"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Summarize(c.dirs, "")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
			if c.name != "an unfinished run" && !errors.Is(err, ErrMismatch) {
				t.Errorf("%v does not wrap ErrMismatch", err)
			}
			if c.name != "the same run twice" && !strings.Contains(err.Error(), c.dirs[1]) {
				t.Errorf("%v does not name the run %s", err, c.dirs[1])
			}
		})
	}
	if _, err := Summarize([]string{base}, base); err == nil || !strings.Contains(err.Error(), "is one of the runs") {
		t.Errorf("output into a run: %v", err)
	}
	if _, err := Run(context.Background(), nil, Config{Out: t.TempDir(), ChainOffset: -1}); err == nil || !strings.Contains(err.Error(), "chain offset") {
		t.Errorf("negative offset: %v", err)
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// TestStuckListChainNumbers checks that the stuck chains of a run with a
// chain offset, or of a summary with a gap, are named by their global
// numbers with their own stalls.
func TestStuckListChainNumbers(t *testing.T) {
	for _, c := range []struct {
		res  Result
		want string
	}{
		{Result{LongestStall: []int{3, 150}, Stuck: []int{2}}, "chain 2 (150 sweeps)"},
		{Result{LongestStall: []int{150}, Stuck: []int{6}, ChainNumbers: []int{6}}, "chain 6 (150 sweeps)"},
		{Result{LongestStall: []int{120, 3, 140}, Stuck: []int{1, 7}, ChainNumbers: []int{1, 2, 7}}, "chain 1 (120 sweeps), chain 7 (140 sweeps)"},
	} {
		if got := c.res.stuckList(); got != c.want {
			t.Errorf("%+v: got %q, want %q", c.res, got, c.want)
		}
	}
}

// TestSummarizeHMMChainOffsets: runs of one chain each of the HMM example
// merge to the summary of one run of both: the draws of z are read from
// each run's draws files, so the aligned scalars, the states file and the
// aligned tree summaries are the two-chain run's.
func TestSummarizeHMMChainOffsets(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"hmm-gaussian.pydt", "data/hmm-gaussian.csv"} {
		b, err := os.ReadFile(filepath.Join("..", "examples", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in := Inputs{Model: File{Path: filepath.Join(dir, "hmm-gaussian.pydt")}, Data: map[string]File{"y": {Path: filepath.Join(dir, "hmm-gaussian.csv")}}, Set: []string{"K=4"}}
	cfg := Config{Iters: 24, Burn: 10, Thin: 2, TreeThin: 2, Seed: 4, CheckpointEvery: 5}
	whole := mergeRunOf(t, in, cfg, 0, 2)
	parts := []string{mergeRunOf(t, in, cfg, 1, 1), mergeRunOf(t, in, cfg, 0, 1)}
	out := filepath.Join(t.TempDir(), "merged")
	if _, err := Summarize(parts, out); err != nil {
		t.Fatal(err)
	}
	var want, got Result
	if err := readJSONFile(filepath.Join(whole, SummaryFile), &want); err != nil {
		t.Fatal(err)
	}
	if err := readJSONFile(filepath.Join(out, SummaryFile), &got); err != nil {
		t.Fatal(err)
	}
	if want.Aligned == nil || want.SummaryTree == nil || want.SummaryTree.AlignedBy != "z" {
		t.Fatalf("the two-chain run has no aligned summary: %+v", want)
	}
	got.WallTime, want.WallTime, got.Runs = 0, 0, nil
	if *got.SummaryTree.ASDSF != *want.SummaryTree.ASDSF {
		t.Errorf("merged ASDSF %v, want %v", *got.SummaryTree.ASDSF, *want.SummaryTree.ASDSF)
	}
	got.SummaryTree.ASDSF, got.SummaryTree.MaxSDSF, want.SummaryTree.ASDSF, want.SummaryTree.MaxSDSF = nil, nil, nil, nil
	// Printed, so that NaN (an R-hat of a constant) compares equal.
	if g, w := fmt.Sprintf("%+v %+v %+v", *got.Aligned, *got.SummaryTree, got.Scalars), fmt.Sprintf("%+v %+v %+v", *want.Aligned, *want.SummaryTree, want.Scalars); g != w {
		t.Errorf("merged summary\n%s\nwant the two-chain run's\n%s", g, w)
	}
	for _, name := range []string{StatesFileOf("z"), SummaryTreeFile, MEAFile, ConsensusFile, CoclustFile} {
		a, err := os.ReadFile(filepath.Join(whole, name))
		if err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(filepath.Join(out, name)); err != nil || string(a) != string(b) {
			t.Errorf("merged %s differs from the two-chain run's (%v)", name, err)
		}
	}
}
