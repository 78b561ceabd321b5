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

// The run directories under testdata/v1run were written by pydtlang
// before run.json and checkpoint.json carried a version (commit 934891c):
//
//	cd testdata/v1run/src
//	pydtlang run noise.pydt --data X=points.csv --iters 10 --chains 2 --checkpoint-every 4 --seed 3 \
//	    --standardize --impute --set alpha=1.5 --out ../noise
//	pydtlang run binary.pydt --data Y=features.csv --labels names.txt --iters 10 --chains 2 \
//	    --checkpoint-every 4 --seed 5 --out ../binary
//
// and NAME-final holds the files of the same runs made with --iters 20
// --burn 5 in one go, which "run --resume DIR --iters 20" of the same
// pydtlang reproduced byte for byte. (Their run.json name the files by the
// absolute paths where they were made, /tmp/h5fx/src.) When the sampler's
// moves change, sweeps 11-20 change: NAME-final then holds the files of
// "run --resume DIR --iters 20" by the current pydtlang (rows 1-10 stay the
// old run's); they were so regenerated when a Sweep's time updates became
// TimeSweeps (treemove).

// v1Inputs returns the inputs of the version 1 run name, in testdata.
func v1Inputs(t *testing.T, name, src string) Inputs {
	t.Helper()
	switch name {
	case "noise":
		return Inputs{Model: File{Path: filepath.Join(src, "noise.pydt")}, Data: map[string]File{"X": {Path: filepath.Join(src, "points.csv")}},
			Set: []string{"alpha=1.5"}}
	case "binary":
		return Inputs{Model: File{Path: filepath.Join(src, "binary.pydt")}, Data: map[string]File{"Y": {Path: filepath.Join(src, "features.csv")}},
			Labels: &File{Path: filepath.Join(src, "names.txt")}}
	}
	t.Fatalf("no run %s", name)
	return Inputs{}
}

// copyDir copies the files of the directory src into a new temporary
// directory and returns it.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestResumeVersion1 resumes run directories written before the files
// carried a version, extending them to 20 sweeps: the files must be
// byte for byte those of the old pydtlang's uninterrupted 20-sweep run, and
// the run's files are then of the current versions.
func TestResumeVersion1(t *testing.T) {
	for _, name := range []string{"noise", "binary"} {
		t.Run(name, func(t *testing.T) {
			dir := copyDir(t, filepath.Join("testdata", "v1run", name))
			ri, err := ReadRun(dir)
			if err != nil {
				t.Fatal(err)
			}
			if ri.Version != 1 || ri.Inputs == nil || ri.Iters != 10 || ri.Burn != 5 || ri.Chains != 2 {
				t.Fatalf("version 1 run.json read as %+v", ri)
			}
			m, err := v1Inputs(t, name, filepath.Join("testdata", "v1run", "src")).Load()
			if err != nil {
				t.Fatal(err)
			}
			// The recorded SHA-256 are those of the files in src, which
			// Load computed, though the recorded paths differ.
			if ri.Inputs.Model.SHA256 != m.Inputs.Model.SHA256 || ri.Inputs.Model.Path != "/tmp/h5fx/src/"+name+".pydt" {
				t.Errorf("model file recorded as %+v, loaded as %+v", ri.Inputs.Model, m.Inputs.Model)
			}
			for v, f := range m.Inputs.Data {
				if ri.Inputs.Data[v].SHA256 != f.SHA256 {
					t.Errorf("data %s recorded as %+v, loaded as %+v", v, ri.Inputs.Data[v], f)
				}
			}
			if _, err := ResumeTo(context.Background(), m, dir, 20, nil); err != nil {
				t.Fatal(err)
			}
			final := filepath.Join("testdata", "v1run", name+"-final")
			entries, err := os.ReadDir(final)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				want, _ := os.ReadFile(filepath.Join(final, e.Name()))
				got, err := os.ReadFile(filepath.Join(dir, e.Name()))
				if err != nil || string(got) != string(want) {
					t.Errorf("%s differs from the uninterrupted run's (%v)", e.Name(), err)
				}
			}
			ri, err = ReadRun(dir)
			if err != nil || ri.Version != RunVersion || ri.Iters != 20 || ri.Inputs.Model.SHA256 != m.Inputs.Model.SHA256 {
				t.Errorf("run.json after resuming: %+v, %v", ri, err)
			}
			if _, err := ReadCheckpoint(filepath.Join("testdata", "v1run", name), nil); err == nil || !strings.Contains(err.Error(), "read it with the run's model") {
				t.Errorf("version 1 checkpoint without a model: %v", err)
			}
			cp, err := ReadCheckpoint(dir, nil)
			if err != nil || cp.Version != CheckpointVersion || cp.Iteration != 20 {
				t.Fatalf("checkpoint after resuming: %v", err)
			}
			for k, cs := range cp.Chains {
				if cs.Trees[m.Leaves.Name].Tree == nil || (m.Trees[0].Augmented() != nil) != (len(cs.Aux[m.Data.Name]) == m.N*m.D) {
					t.Errorf("chain %d: checkpoint holds trees %v and auxiliaries of %d variables", k+1, cs.Trees, len(cs.Aux))
				}
			}
		})
	}
}

// TestResumeRefusesChangedFiles checks that Resume refuses a model whose
// files are not those the run recorded, naming the file, for a model
// loaded by the library as by the command line (on main only the command
// line compared them).
func TestResumeRefusesChangedFiles(t *testing.T) {
	for _, c := range []struct {
		name, edit, want string
	}{
		{"noise", "points.csv", "data X "},
		{"noise", "noise.pydt", "the model file "},
		{"binary", "names.txt", "the labels file "},
	} {
		t.Run(c.edit, func(t *testing.T) {
			src := copyDir(t, filepath.Join("testdata", "v1run", "src"))
			path := filepath.Join(src, c.edit)
			b, _ := os.ReadFile(path)
			if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
			m, err := v1Inputs(t, c.name, src).Load()
			if err != nil {
				t.Fatal(err)
			}
			dir := copyDir(t, filepath.Join("testdata", "v1run", c.name))
			_, err = Resume(context.Background(), m, dir, nil)
			want := c.want + path + " has changed since the run started"
			if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), want) {
				t.Errorf("Resume: %v, want an error containing %q", err, want)
			}
			// LoadRun of a run whose recorded file has changed refuses it
			// too, before compiling anything.
			ri, _ := ReadRun(dir)
			in := v1Inputs(t, c.name, src)
			in.Model.SHA256 = ri.Inputs.Model.SHA256
			for v, f := range in.Data {
				f.SHA256 = ri.Inputs.Data[v].SHA256
				in.Data[v] = f
			}
			if in.Labels != nil {
				in.Labels.SHA256 = ri.Inputs.Labels.SHA256
			}
			if _, err := in.Load(); !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), want) {
				t.Errorf("Load with recorded SHA-256: %v, want an error containing %q", err, want)
			}
			// A model not loaded from files cannot be checked: refused.
			m.Inputs = nil
			if _, err := Resume(context.Background(), m, dir, nil); err == nil || !strings.Contains(err.Error(), "not loaded from files") {
				t.Errorf("Resume of a model without inputs: %v", err)
			}
		})
	}
}

// TestRunFileVersions checks that files of a later version are refused
// with a message that says so, and that a run records its model's inputs
// in a run.json of the current version that LoadRun reads back.
func TestRunFileVersions(t *testing.T) {
	dir := copyDir(t, filepath.Join("testdata", "v1run", "noise"))
	m, err := v1Inputs(t, "noise", filepath.Join("testdata", "v1run", "src")).Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{RunFile, CheckpointFile} {
		path := filepath.Join(dir, file)
		b, _ := os.ReadFile(path)
		if err := os.WriteFile(path, []byte(strings.Replace(string(b), "{", `{"version": 99,`, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Resume(context.Background(), m, dir, nil)
		if err == nil || !strings.Contains(err.Error(), file+" is of format version 99") || !strings.Contains(err.Error(), "newer pydtlang") {
			t.Errorf("%s of version 99: %v", file, err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	out := t.TempDir()
	if _, err := Run(context.Background(), m, Config{Iters: 6, Chains: 1, Seed: 1, Out: out}); err != nil {
		t.Fatal(err)
	}
	ri, err := ReadRun(out)
	if err != nil || ri.Version != RunVersion || ri.Inputs == nil || ri.Inputs.Data["X"] != m.Inputs.Data["X"] || ri.Inputs.Set[0] != "alpha=1.5" {
		t.Fatalf("ReadRun: %+v, %v", ri, err)
	}
	back, err := LoadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	if back.Inputs.Model != m.Inputs.Model || back.N != m.N {
		t.Errorf("LoadRun: inputs %+v, want %+v", back.Inputs, m.Inputs)
	}
	if _, err := ResumeTo(context.Background(), back, out, 8, nil); err != nil {
		t.Fatal(err)
	}
}

// TestCheckpointMustFitModel checks that a version 2 checkpoint whose
// trees or auxiliaries are named for another model is refused with a
// message naming them, rather than resumed with a default.
func TestCheckpointMustFitModel(t *testing.T) {
	m, err := v1Inputs(t, "binary", filepath.Join("testdata", "v1run", "src")).Load()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, err := Run(context.Background(), m, Config{Iters: 4, Chains: 1, Seed: 1, Out: out}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(out, CheckpointFile)
	orig, _ := os.ReadFile(path)
	for _, c := range []struct{ from, to, want string }{
		{`"trees": {
        "Z"`, `"trees": {
        "W"`, "checkpoint tree W does not fit the model, whose PYDT is Z"},
		{`"aux": {
        "Y"`, `"aux": {
        "V"`, "checkpoint auxiliary variables of V do not fit the model"},
		{`"aux": {`, `"aux0": {`, "checkpoint has no auxiliary variables of Y"},
		{`"version": 2`, `"version": -1`, "format version -1"},
	} {
		if !strings.Contains(string(orig), c.from) {
			t.Fatalf("checkpoint lacks %q:\n%s", c.from, orig)
		}
		if err := os.WriteFile(path, []byte(strings.Replace(string(orig), c.from, c.to, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ResumeTo(context.Background(), m, out, 6, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s → %s: %v, want %q", c.from, c.to, err, c.want)
		}
	}
}

// The run directory testdata/v2run/noise was written by pydtlang with
// run.json and checkpoint.json of version 2 (commit 46ee5e0, before
// chain_offset), from the files of testdata/v1run/src copied to
// /tmp/h11v2/src:
//
//	pydtlang run noise.pydt --data X=points.csv --iters 10 --chains 2 --checkpoint-every 4 --seed 3 \
//	    --standardize --impute --set alpha=1.5 --out ../noise
//
// and noise-final holds the files of the same run made with --iters 20
// --burn 5 in one go, which "run --resume DIR --iters 20" of that pydtlang
// reproduced byte for byte. As for v1run, sweeps 11-20 change with the
// sampler's moves: noise-final was regenerated by "run --resume" of the
// current pydtlang when a Sweep's time updates became TimeSweeps.

// TestVersion2Run resumes the version 2 run to 20 sweeps, which must give
// the old pydtlang's uninterrupted files byte for byte (a version 2 run
// holds chains from 1: offset 0), and summarises the version 2 run with
// Summarize, which must give the numbers and files of the old pydtlang's
// own summary.
func TestVersion2Run(t *testing.T) {
	src, err := filepath.Abs(filepath.Join("testdata", "v1run", "src"))
	if err != nil {
		t.Fatal(err)
	}
	orig := filepath.Join("testdata", "v2run", "noise")
	dir := copyDir(t, orig)
	ri, err := ReadRun(dir)
	if err != nil || ri.Version != 2 || ri.ChainOffset != 0 || ri.Inputs == nil {
		t.Fatalf("version 2 run.json read as %+v, %v", ri, err)
	}
	// Name the inputs where they are now, for Summarize's LoadRun.
	b, err := os.ReadFile(filepath.Join(dir, RunFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, RunFile), []byte(strings.ReplaceAll(string(b), "/tmp/h11v2/src", src)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	res, err := Summarize([]string{dir}, out)
	if err != nil {
		t.Fatal(err)
	}
	var want Result
	if err := readJSONFile(filepath.Join(orig, SummaryFile), &want); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(res.Scalars) != fmt.Sprint(want.Scalars) || // NaN ESS at 10 draws !reflect.DeepEqual(res.Acceptance, want.Acceptance) || !reflect.DeepEqual(res.SummaryTree, want.SummaryTree) ||
		res.MapLogJointS != want.MapLogJointS || !reflect.DeepEqual(res.Schedule, want.Schedule) || res.Chains != 2 {
		t.Errorf("Summarize of the version 2 run:\n%+v\nwant its own summary\n%+v", res, want)
	}
	for _, name := range []string{MapFile, SummaryTreeFile, MEAFile, ConsensusFile, CoclustFile} {
		a, _ := os.ReadFile(filepath.Join(orig, name))
		if b, err := os.ReadFile(filepath.Join(out, name)); err != nil || len(a) == 0 || string(a) != string(b) {
			t.Errorf("Summarize's %s differs from the run's own (%v)", name, err)
		}
	}
	m, err := (&Inputs{Model: File{Path: filepath.Join(src, "noise.pydt")}, Data: map[string]File{"X": {Path: filepath.Join(src, "points.csv")}},
		Set: []string{"alpha=1.5"}}).Load()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ResumeTo(context.Background(), m, dir, 20, nil); err != nil {
		t.Fatal(err)
	}
	final := filepath.Join("testdata", "v2run", "noise-final")
	entries, err := os.ReadDir(final)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		want, _ := os.ReadFile(filepath.Join(final, e.Name()))
		got, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil || string(got) != string(want) {
			t.Errorf("%s differs from the uninterrupted run's (%v)", e.Name(), err)
		}
	}
	if ri, err := ReadRun(dir); err != nil || ri.Version != RunVersion || ri.Iters != 20 || ri.ChainOffset != 0 {
		t.Errorf("run.json after resuming: %+v, %v", ri, err)
	}
}

// TestCheckVersion checks the version rules of run.json and
// checkpoint.json: a missing version is 1, versions 1 to the newest are
// read, a later one is refused as written by a newer pydtlang, and a
// negative one as damaged (it used to be blamed on a newer pydtlang).
func TestCheckVersion(t *testing.T) {
	for _, tc := range []struct {
		in, want int
		err      string
	}{
		{0, 1, ""},
		{1, 1, ""},
		{3, 3, ""},
		{4, 4, "newer pydtlang"},
		{-1, -1, "damaged"},
	} {
		v := tc.in
		err := checkVersion("f.json", &v, 3)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("version %d: %v", tc.in, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("version %d: error %v, want one containing %q", tc.in, err, tc.err)
		case tc.err == "damaged" && strings.Contains(err.Error(), "newer"):
			t.Errorf("version %d: %v blames a newer pydtlang", tc.in, err)
		case v != tc.want:
			t.Errorf("version %d read as %d, want %d", tc.in, v, tc.want)
		}
	}
}

// TestRunMethod: run.json's method (version 4) says which files stand for
// the run; an unknown method is refused, and a file without one is MCMC.
func TestRunMethod(t *testing.T) {
	for _, tc := range []struct {
		json, tree, err string
		em              bool
	}{
		{`{"version": 3, "chains": 2}`, SummaryTreeFile, "", false},
		{`{"version": 4, "chains": 2, "method": "mcmc"}`, SummaryTreeFile, "", false},
		{`{"version": 4, "method": "em", "em": {"rounds": 5, "k": 10, "patience": 30, "em_iterations": 50}}`, MapFile, "", true},
		{`{"version": 4, "method": "vb"}`, "", `unknown method "vb"`, false},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, RunFile), []byte(tc.json), 0o644); err != nil {
			t.Fatal(err)
		}
		ri, err := ReadRun(dir)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.json, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.json, err)
		}
		if ri.IsEM() != tc.em || ri.DefaultTree() != tc.tree || (ri.Resumable(dir) == nil) == tc.em {
			t.Errorf("%s: IsEM %v, DefaultTree %s, Resumable %v", tc.json, ri.IsEM(), ri.DefaultTree(), ri.Resumable(dir))
		}
		if tc.em && (ri.EM == nil || ri.EM.Rounds != 5) {
			t.Errorf("%s: EM settings %+v", tc.json, ri.EM)
		}
	}
}
