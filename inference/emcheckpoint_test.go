package inference

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pydtlang/pydtlang/dataset"
)

// emOutputs returns the files of an EM run that must not depend on how
// it was run: kbest.nwk, map.nwk, and summary.json without its wall
// times.
func emOutputs(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range []string{KBestFile, MapFile} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = string(b)
	}
	b, err := os.ReadFile(filepath.Join(dir, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var sum map[string]any
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if _, ok := sum["wall_time_seconds"]; !ok {
		t.Fatal("summary.json has no wall_time_seconds")
	}
	delete(sum, "wall_time_seconds")
	delete(sum, "bound_time_seconds")
	b, _ = json.MarshalIndent(sum, "", " ")
	out[SummaryFile] = string(b)
	return out
}

func sameOutputs(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %s differs from the uninterrupted run's:\n%s\nwant\n%s", what, name, got[name], w)
		}
	}
}

// binaryRows returns an n × d 0/1 matrix of two groups of rows with
// opposite feature patterns, flipped with probability 0.1.
func binaryRows(n, d int, seed uint64) *dataset.Matrix {
	rng := rand.New(rand.NewPCG(seed, 2))
	y := &dataset.Matrix{Rows: n, Cols: d, Data: make([]float64, n*d), Source: "y.csv"}
	for i := range n {
		for j := range d {
			v := float64((i + j) % 2)
			if rng.Float64() < 0.1 {
				v = 1 - v
			}
			y.Data[i*d+j] = v
		}
	}
	return y
}

// TestResumeEMExact: R rounds in one go, and R1 rounds then a resume to R
// (ResumeEM with Rounds R), give the same kbest.nwk, map.nwk and
// summary.json but for its wall times, byte for byte; likewise a run
// interrupted in the middle of a round (the round is discarded) and
// resumed, and a run whose checkpoint is written after every round and
// which is resumed from a copy of a mid-run checkpoint. Gaussian data
// (exact E-step) and binary data (EP sites, which the checkpoint holds).
func TestResumeEMExact(t *testing.T) {
	for _, tc := range []struct {
		name, model, v string
		data           *dataset.Matrix
	}{
		{"gaussian", "gaussian.pydt", "X", fourClusters(24, 0.3, 5)},
		{"probit", "binary.pydt", "Y", binaryRows(10, 6, 1)},
		{"perdim", "gaussian-perdim.pydt", "X", noisyClusters(24, 0.3, 4, 5)},
		{"noise", "gaussian-noise.pydt", "X", fourClusters(24, 0.3, 5)},
		{"perdim-noise", "gaussian-perdim-noise.pydt", "X", noisyClusters(24, 0.3, 4, 5)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const R, R1 = 6, 2
			model := func() *Model {
				return compileExampleFile(t, tc.model, map[string]*dataset.Matrix{tc.v: tc.data})
			}
			cfg := func(dir string, rounds int) EMConfig {
				return EMConfig{Rounds: rounds, Patience: -1, Seed: 3, Out: dir, EMIters: 4, K: 4}
			}
			one := t.TempDir()
			res, err := RunEM(context.Background(), model(), cfg(one, R))
			if err != nil {
				t.Fatal(err)
			}
			if res.Rounds != R || len(res.BoundTrace) != R+1 {
				t.Fatalf("%d rounds, %d bounds", res.Rounds, len(res.BoundTrace))
			}
			want := emOutputs(t, one)

			// R1 rounds, then a resume to R.
			two := t.TempDir()
			if _, err := RunEM(context.Background(), model(), cfg(two, R1)); err != nil {
				t.Fatal(err)
			}
			if got := emOutputs(t, two); got[KBestFile] == want[KBestFile] {
				t.Log("the shorter run already has the final list")
			}
			res2, err := ResumeEM(context.Background(), model(), two, EMConfig{Rounds: R})
			if err != nil {
				t.Fatal(err)
			}
			if res2.Rounds != R {
				t.Errorf("resumed run: %d rounds, want %d", res2.Rounds, R)
			}
			sameOutputs(t, "resumed", emOutputs(t, two), want)
			ri, err := ReadRun(two)
			if err != nil || ri.EM.Rounds != R || ri.Iters != 0 {
				t.Errorf("run.json after the resume: %+v, %v; want %d rounds recorded once", ri, err, R)
			}

			// Interrupted in the middle of round 4: the round is
			// discarded, the outputs are those after round 3, and a
			// resume (run.json's rounds) finishes the run.
			three := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			c := cfg(three, R)
			c.failFit = func(round int) error {
				if round == 4 {
					cancel()
				}
				return nil
			}
			res3, err := RunEM(ctx, model(), c)
			cancel()
			if !errors.Is(err, ErrInterrupted) || res3 == nil || res3.Rounds != 3 || res3.StopReason != "interrupted" {
				t.Fatalf("interrupted run: %v, %+v", err, res3)
			}
			if _, err := ResumeEM(context.Background(), model(), three, EMConfig{}); err != nil {
				t.Fatal(err)
			}
			sameOutputs(t, "interrupted and resumed", emOutputs(t, three), want)

			// A checkpoint after every round; the run resumed from the
			// checkpoint after round 4, as after a kill -9.
			defer func(d time.Duration) { emCheckpointEvery = d }(emCheckpointEvery)
			emCheckpointEvery = 0
			four := t.TempDir()
			var saved []byte
			c = cfg(four, R)
			c.Progress = func(round, rounds int, best float64, _ string) {
				if round == 4 {
					saved, _ = os.ReadFile(filepath.Join(four, CheckpointFile))
				}
			}
			if _, err := RunEM(context.Background(), model(), c); err != nil {
				t.Fatal(err)
			}
			sameOutputs(t, "checkpoint every round", emOutputs(t, four), want)
			if err := os.WriteFile(filepath.Join(four, CheckpointFile), saved, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{KBestFile, MapFile, SummaryFile} {
				os.Remove(filepath.Join(four, name))
			}
			var cp emCheckpoint
			if err := json.Unmarshal(saved, &cp); err != nil || cp.Rounds != 4 || cp.Version != EMCheckpointVersion {
				t.Fatalf("checkpoint after round 4: rounds %d, version %d, %v", cp.Rounds, cp.Version, err)
			}
			if _, err := ResumeEM(context.Background(), model(), four, EMConfig{}); err != nil {
				t.Fatal(err)
			}
			sameOutputs(t, "resumed after a kill", emOutputs(t, four), want)
		})
	}
}

// TestResumeEMRefuses: a resume to fewer rounds than done, a checkpoint of
// a newer version and a changed model are refused.
func TestResumeEMRefuses(t *testing.T) {
	x := fourClusters(12, 0.3, 2)
	m := compileExampleFile(t, "gaussian.pydt", map[string]*dataset.Matrix{"X": x})
	dir := t.TempDir()
	if _, err := RunEM(context.Background(), m, EMConfig{Rounds: 3, Patience: -1, Seed: 1, Out: dir, EMIters: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := ResumeEM(context.Background(), m, dir, EMConfig{Rounds: 2}); err == nil || !strings.Contains(err.Error(), "3 rounds") {
		t.Errorf("resume to 2 rounds after 3: %v", err)
	}
	if _, err := Resume(context.Background(), m, dir, nil); err == nil || !strings.Contains(err.Error(), "ResumeEM") {
		t.Errorf("MCMC Resume of an EM run: %v", err)
	}
	path := filepath.Join(dir, CheckpointFile)
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), `"version":1`, `"version":99`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ResumeEM(context.Background(), m, dir, EMConfig{Rounds: 4}); err == nil || !strings.Contains(err.Error(), "newer pydtlang") {
		t.Errorf("checkpoint of version 99: %v", err)
	}
	// A tree's value that is not its EM bound plus its Laplace correction
	// is a damaged file; a checkpoint without times_integrated (written
	// before the correction) resumes ranking by the bound alone.
	edit := func(f func(cp map[string]any)) {
		t.Helper()
		var cp map[string]any
		if err := json.Unmarshal(b, &cp); err != nil {
			t.Fatal(err)
		}
		if cp["times_integrated"] != true {
			t.Fatalf("the run's checkpoint: times_integrated %v", cp["times_integrated"])
		}
		f(cp)
		nb, err := json.Marshal(cp)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, nb, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edit(func(cp map[string]any) {
		tr := cp["trees"].([]any)[0].(map[string]any)
		tr["laplace_correction"] = tr["laplace_correction"].(float64) + 1
	})
	if _, err := ResumeEM(context.Background(), m, dir, EMConfig{Rounds: 4}); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("a tree's value not its EM bound plus correction: %v", err)
	}
	// More trees than K is a damaged file (the search keeps at most K).
	edit(func(cp map[string]any) {
		n := len(cp["trees"].([]any))
		if n < 2 {
			t.Fatalf("the run's checkpoint has %d trees; the test needs 2", n)
		}
		cp["k"] = float64(n - 1)
	})
	if _, err := ResumeEM(context.Background(), m, dir, EMConfig{Rounds: 4}); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("more trees than K: %v", err)
	}
	edit(func(cp map[string]any) { delete(cp, "times_integrated") })
	res, err := ResumeEM(context.Background(), m, dir, EMConfig{Rounds: 4})
	if err != nil {
		t.Fatalf("a checkpoint written before the Laplace correction: %v", err)
	}
	if res.TimesIntegrated || res.Laplace != 0 || res.Bound != res.EMBound {
		t.Errorf("resumed without the correction: times_integrated %v, value %v = %v + %v", res.TimesIntegrated, res.Bound, res.EMBound, res.Laplace)
	}
}

// The run directory testdata/v4emrun/run was written by pydtlang with
// run.json of version 4 (commit 65cebad, before EM checkpoints), from the
// files of testdata/v4emrun/src copied to /tmp/f4em/src:
//
//	pydtlang run gaussian.pydt --data X=points.csv --method em --iters 3 --em-iters 5 --seed 2 --out ../run
//
// It has no checkpoint: resumed, it starts again with the settings of its
// run.json (its rounds recorded twice, as "iterations" and em.rounds) and
// must give what a run started now with those settings gives.

// TestVersion4EMRun resumes the version 4 EM run, to its own 3 rounds and
// then, extended, to 5, each compared with a new run of the same settings;
// run.json is then of the current version.
func TestVersion4EMRun(t *testing.T) {
	src, err := filepath.Abs(filepath.Join("testdata", "v4emrun", "src"))
	if err != nil {
		t.Fatal(err)
	}
	dir := copyDir(t, filepath.Join("testdata", "v4emrun", "run"))
	b, err := os.ReadFile(filepath.Join(dir, RunFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, RunFile), []byte(strings.ReplaceAll(string(b), "/tmp/f4em/src", src)), 0o644); err != nil {
		t.Fatal(err)
	}
	ri, err := ReadRun(dir)
	if err != nil || ri.Version != 4 || !ri.IsEM() || ri.Iters != 3 || ri.EM.Rounds != 3 {
		t.Fatalf("version 4 run.json read as %+v, %v", ri, err)
	}
	load := func() *Model {
		m, err := LoadRun(dir)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, rounds := range []int{0, 5} {
		if _, err := ResumeEM(context.Background(), load(), dir, EMConfig{Rounds: rounds}); err != nil {
			t.Fatal(err)
		}
		fresh := t.TempDir()
		n := rounds
		if n == 0 {
			n = 3
		}
		if _, err := RunEM(context.Background(), load(), EMConfig{Rounds: n, Patience: 30, EMIters: 5, Seed: 2, Out: fresh}); err != nil {
			t.Fatal(err)
		}
		sameOutputs(t, "version 4 run resumed", emOutputs(t, dir), emOutputs(t, fresh))
	}
	ri, err = ReadRun(dir)
	if err != nil || ri.Version != RunVersion || ri.Iters != 0 || ri.EM.Rounds != 5 {
		t.Errorf("run.json after the resume: %+v, %v", ri, err)
	}
}

// TestResumeEMSecondStopKeepsTrees: a run stopped while its initial trees
// are fitted has no checkpoint, and --resume starts it again; stopped
// again before it has refitted as many starts, it must not replace the
// better trees the first session wrote by the fewer it has (before, its
// first initial fit rewrote kbest.nwk and map.nwk with that one tree: the
// earlier session's trees were lost). A third session that runs to the
// end gives the uninterrupted run's outputs.
func TestResumeEMSecondStopKeepsTrees(t *testing.T) {
	model := func() *Model {
		return compileExampleFile(t, "gaussian.pydt", map[string]*dataset.Matrix{"X": fourClusters(24, 0.3, 5)})
	}
	cfg := func(dir string) EMConfig {
		return EMConfig{Rounds: 3, Patience: -1, Seed: 3, Out: dir, EMIters: 4, K: 4}
	}
	one := t.TempDir()
	if _, err := RunEM(context.Background(), model(), cfg(one)); err != nil {
		t.Fatal(err)
	}
	want := emOutputs(t, one)

	// stopAt returns a context and a failFit that stops the run during
	// its n-th initial fit (which is then not written).
	stopAt := func(n int) (context.Context, func(int) error) {
		ctx, cancel := context.WithCancel(context.Background())
		fits := 0
		return ctx, func(round int) error {
			if round == 0 {
				if fits++; fits == n {
					cancel()
				}
			}
			return nil
		}
	}
	dir := t.TempDir()
	ctx, fail := stopAt(6)
	c := cfg(dir)
	c.failFit = fail
	if _, err := RunEM(ctx, model(), c); !errors.Is(err, ErrInterrupted) || !strings.Contains(err.Error(), "(4 in kbest.nwk)") {
		t.Fatalf("first session: %v, want a stop with 4 trees in kbest.nwk", err)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	kb1, map1 := read(KBestFile), read(MapFile)
	if n := strings.Count(kb1, "\n"); n != 4 {
		t.Fatalf("first session's kbest.nwk has %d trees, want 4 (K):\n%s", n, kb1)
	}

	// Second session, stopped during its third initial fit: two refitted,
	// the same as the first session's first two; the files keep the
	// first session's four.
	ctx, fail = stopAt(3)
	_, err := ResumeEM(ctx, model(), dir, EMConfig{failFit: fail})
	if !errors.Is(err, ErrInterrupted) || !strings.Contains(err.Error(), "fitted in full in this session and the earlier one (4 in kbest.nwk)") {
		t.Fatalf("second session: %v, want a stop with 4 trees in kbest.nwk", err)
	}
	if got := read(KBestFile); got != kb1 {
		t.Errorf("kbest.nwk after a second stop:\n%s\nwant the first session's\n%s", got, kb1)
	}
	if got := read(MapFile); got != map1 {
		t.Errorf("map.nwk after a second stop:\n%s\nwant the first session's\n%s", got, map1)
	}

	// Stopped again during its first initial fit: nothing written.
	ctx, fail = stopAt(1)
	_, err = ResumeEM(ctx, model(), dir, EMConfig{failFit: fail})
	if !errors.Is(err, ErrInterrupted) || !strings.Contains(err.Error(), "map.nwk and kbest.nwk are still the earlier session's") {
		t.Fatalf("stopped during the first refit: %v", err)
	}
	if read(KBestFile) != kb1 || read(MapFile) != map1 {
		t.Errorf("the files changed after a stop during the first refit")
	}

	// Last session, to the end: the uninterrupted run's outputs.
	if _, err := ResumeEM(context.Background(), model(), dir, EMConfig{}); err != nil {
		t.Fatal(err)
	}
	sameOutputs(t, "stopped twice and resumed", emOutputs(t, dir), want)
}

// TestMergeKBestLines: the merge of the current list's lines with an
// earlier session's keeps the K-best order (trees without the Laplace
// correction last), each tree once, a current line first on a tie, at
// most k, and leaves out lines that do not parse.
func TestMergeKBestLines(t *testing.T) {
	cur := []string{"[bound=-10][em_bound=-9 laplace_correction=-1][start=linkage 1 round=0] (a:1,b:1);\n",
		"[bound=5][em_bound=5 laplace_correction=unavailable] (a:1,c:1);\n"}
	earlier := []string{"[bound=-8][em_bound=-7 laplace_correction=-1][start=sequential 1 round=0] (b:1,c:1);\n",
		"[bound=-10][em_bound=-9 laplace_correction=-1][start=sequential 2 round=0] (a:2,b:2);", // tie: after the current
		"[bound=-10][em_bound=-9 laplace_correction=-1][start=linkage 1 round=0] (a:1,b:1);\n",  // the same tree
		"garbage\n", "[bound=x] (a:1);\n"}
	got := mergeKBestLines(cur, earlier, nil, 10)
	want := []string{earlier[0], cur[0], earlier[1] + "\n", cur[1]}
	if !slices.Equal(got, want) {
		t.Errorf("merged:\n%q\nwant\n%q", got, want)
	}
	if got := mergeKBestLines(cur, earlier, nil, 2); !slices.Equal(got, want[:2]) {
		t.Errorf("merged, k = 2: %q", got)
	}
	if got := mergeKBestLines(cur, nil, nil, 10); !slices.Equal(got, cur) {
		t.Errorf("nothing earlier: %q", got)
	}
	// A current line that does not parse (kbestLines never writes one)
	// must not drop the earlier session's trees.
	odd := []string{"garbage\n", cur[0]}
	if got := mergeKBestLines(odd, earlier[:1], nil, 10); !slices.Equal(got, append(slices.Clone(odd), earlier[0])) {
		t.Errorf("unparsable current line: %q", got)
	}
	// Two refits of one topology (other times, other order of the
	// children, other Newick text) are one tree: the better ranked is
	// kept, whichever session wrote it; leaves are matched by the labels.
	labels := []string{"a", "b", "c"}
	for _, tc := range []struct {
		name           string
		current, early []string
		want           []string
	}{
		{"earlier better",
			[]string{"[bound=-12] ((a:0.3,b:0.3):0.5,c:0.8):0.2;\n", "[bound=-13] ((a:0.3,c:0.3):0.5,b:0.8):0.2;\n"},
			[]string{"[bound=-11] ((b:0.2,a:0.2):0.6,c:0.8):0.2;\n"},
			[]string{"[bound=-11] ((b:0.2,a:0.2):0.6,c:0.8):0.2;\n", "[bound=-13] ((a:0.3,c:0.3):0.5,b:0.8):0.2;\n"}},
		{"current better",
			[]string{"[bound=-10] ((a:0.3,b:0.3):0.5,c:0.8):0.2;\n"},
			[]string{"[bound=-11] (c:0.9,(b:0.2,a:0.2):0.7):0.1;\n", "[bound=-14] ((c:0.2,b:0.2):0.7,a:0.9):0.1;\n"},
			[]string{"[bound=-10] ((a:0.3,b:0.3):0.5,c:0.8):0.2;\n", "[bound=-14] ((c:0.2,b:0.2):0.7,a:0.9):0.1;\n"}},
		{"with the correction before without",
			[]string{"[bound=-5][em_bound=-5 laplace_correction=unavailable] ((a:0.3,b:0.3):0.5,c:0.8):0.2;\n"},
			[]string{"[bound=-9][em_bound=-8 laplace_correction=-1] ((a:0.4,b:0.4):0.4,c:0.8):0.2;\n"},
			[]string{"[bound=-9][em_bound=-8 laplace_correction=-1] ((a:0.4,b:0.4):0.4,c:0.8):0.2;\n"}},
	} {
		if got := mergeKBestLines(tc.current, tc.early, labels, 10); !slices.Equal(got, tc.want) {
			t.Errorf("%s: merged\n%q\nwant\n%q", tc.name, got, tc.want)
		}
	}
}
