package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/inference"
)

// helpCommands extracts the indented "pydtlang ..." command lines of a help
// text, joining lines continued with a backslash, as argument lists without
// the program name.
func helpCommands(text string) [][]string {
	var cmds [][]string
	var cur string
	cont := false
	for _, raw := range strings.Split(text, "\n") {
		line := strings.TrimSpace(raw)
		switch {
		case cont:
			cur += " " + line
		case strings.HasPrefix(raw, "  pydtlang "):
			cur = line
		default:
			continue
		}
		cont = strings.HasSuffix(cur, "\\")
		if cont {
			cur = strings.TrimSuffix(cur, "\\")
			continue
		}
		cmds = append(cmds, strings.Fields(cur)[1:])
	}
	return cmds
}

// inExampleTree changes to a temporary directory holding a copy of
// examples/, so that help texts written for the root of the source tree run
// verbatim and write their outputs there.
func inExampleTree(t *testing.T) {
	t.Helper()
	src, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, sub := range []string{".", "data"} {
		entries, err := os.ReadDir(filepath.Join(src, sub))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, "examples", sub), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() {
				continue
			}
			b, err := os.ReadFile(filepath.Join(src, sub, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "examples", sub, e.Name()), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Chdir(dir)
}

// helpText returns the long help of the root command, or the examples of
// the subcommand sub.
func helpText(t *testing.T, sub string) string {
	t.Helper()
	var b bytes.Buffer
	root := newRoot(&b, &b)
	if sub == "" {
		return root.Long
	}
	for _, c := range root.Commands() {
		if c.Name() == sub {
			return c.Example
		}
	}
	t.Fatalf("no subcommand %s", sub)
	return ""
}

func TestHelpCommands(t *testing.T) {
	got := helpCommands("pydtlang does things:\n  pydtlang a b \\\n      c\n  not a command\n  pydtlang d\n")
	if len(got) != 2 || strings.Join(got[0], " ") != "a b c" || strings.Join(got[1], " ") != "d" {
		t.Errorf("helpCommands = %q", got)
	}
}

// TestFirstSession runs the root help's first session verbatim, then checks
// that "score --draw 2" gives exactly the scores of the second draw's rows
// and the second tree, extracted by hand into ordinary files.
func TestFirstSession(t *testing.T) {
	inExampleTree(t)
	cmds := helpCommands(helpText(t, ""))
	if len(cmds) < 3 {
		t.Fatalf("the root help has %d commands", len(cmds))
	}
	var scored string
	for _, args := range cmds {
		code, out, errOut := runCmd(t, args...)
		if code != 0 {
			t.Fatalf("%v: status %d\n%s", args, code, errOut)
		}
		if args[0] == "score" {
			scored = out
		}
	}
	if !strings.Contains(scored, "log_joint ") || strings.Count(scored, "\n") != 4 {
		t.Fatalf("score printed:\n%s", scored)
	}
	// Draw 2 by hand: the rows of X.csv with draw 2, and line 2 of trees.nwk.
	b, err := os.ReadFile("draws/X.csv")
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		f := strings.Split(line, ",")
		if f[0] == "2" {
			rows = append(rows, strings.Join(f[2:], ","))
		}
	}
	if len(rows) != 20 {
		t.Fatalf("draw 2 has %d rows, want 20", len(rows))
	}
	os.WriteFile("x2.csv", []byte(strings.Join(rows, "\n")+"\n"), 0o644)
	b, _ = os.ReadFile("draws/trees.nwk")
	trees := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(trees) != 3 {
		t.Fatalf("trees.nwk has %d trees, want 3", len(trees))
	}
	os.WriteFile("t2.nwk", []byte(trees[1]+"\n"), 0o644)
	code, want, errOut := runCmd(t, "score", "examples/gaussian.pydt", "--data", "X=x2.csv", "--tree", "t2.nwk",
		"--set", "alpha=1,beta=0.2,c=1,prec=2")
	if code != 0 {
		t.Fatal(errOut)
	}
	if scored != want {
		t.Errorf("score --draw 2 printed\n%s\nbut draw 2 by hand scores\n%s", scored, want)
	}
}

// TestHelpExamplesRun runs the examples of every subcommand's help in
// order, except fits with run other than --explain (too slow for a test)
// and shell globs.
func TestHelpExamplesRun(t *testing.T) {
	inExampleTree(t)
	for _, sub := range []string{"check", "fmt", "sample", "score", "run"} {
		cmds := helpCommands(helpText(t, sub))
		if len(cmds) == 0 {
			t.Errorf("%s --help has no examples", sub)
		}
		for _, args := range cmds {
			if args[0] == "run" && !strings.Contains(strings.Join(args, " "), "--explain") {
				continue
			}
			if args[0] == "fmt" && strings.Contains(strings.Join(args, " "), "*") {
				continue // a shell glob
			}
			code, out, errOut := runCmd(t, args...)
			if code != 0 || out == "" && args[0] != "sample" {
				t.Errorf("%v: status %d\n%s%s", args, code, out, errOut)
			}
		}
	}
}

// writeFiles writes name → content into dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDrawFlag(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	writeFiles(t, dir, map[string]string{
		"x3.csv":    "draw,row,X.1\n1,1,0.1\n1,2,0.2\n2,1,1.1\n2,2,1.2\n3,1,2.1\n3,2,2.2\n",
		"x1.csv":    "draw,row,X.1\n7,1,0.1\n7,2,0.2\n",
		"plain.csv": "0.1\n0.2\n",
		"t.nwk":     "(1:0.5,2:0.5):0.5;\n(1:0.25,2:0.25):0.75;\n",
		"y.csv":     "draw,row,Y.1,Y.2\n1,1,0,1\n1,2,1,0\n2,1,0,1\n2,2,1,2\n",
	})
	sets := "alpha=1,beta=0.2,c=1,prec=1"
	gauss := "../../examples/gaussian.pydt"
	cases := []struct {
		name string
		args []string
		code int
		want string // in stdout on success, else in stderr
	}{
		{"several draws need --draw", []string{"score", gauss, "--data", "X=" + p("x3.csv"), "--tree", p("t.nwk"), "--set", sets},
			1, p("x3.csv") + " holds 3 draws (the format that sample writes: header draw,row,...); choose one with --draw K, e.g. --draw 1"},
		{"a single draw needs none", []string{"score", gauss, "--data", "X=" + p("x1.csv"), "--tree", p("t.nwk"), "--set", sets},
			0, "tree log_tree log_lik log_hyper log_joint\n1 "}, // every tree of the file
		{"--draw picks the tree", []string{"score", gauss, "--data", "X=" + p("x3.csv"), "--tree", p("t.nwk"), "--draw", "2", "--set", sets},
			0, "log_tree "},
		{"no such draw", []string{"score", gauss, "--data", "X=" + p("x3.csv"), "--tree", p("t.nwk"), "--draw", "5", "--set", sets},
			1, p("x3.csv") + " has no draw 5 (its draws are 1..3)"},
		{"no such tree", []string{"score", gauss, "--data", "X=" + p("x3.csv"), "--tree", p("t.nwk"), "--draw", "3", "--set", sets},
			1, "--draw 3 takes tree 3 of " + p("t.nwk") + ", but it has 2"},
		{"--draw 0", []string{"score", gauss, "--data", "X=" + p("x3.csv"), "--tree", p("t.nwk"), "--draw", "0", "--set", sets},
			2, "--draw must be at least 1, got 0"},
		{"--draw without draws", []string{"score", gauss, "--data", "X=" + p("plain.csv"), "--tree", p("t.nwk"), "--draw", "1", "--set", sets},
			2, "--draw 1: no --data file is a file of draws"},
		{"check a draw", []string{"check", gauss, "--data", "X=" + p("x3.csv"), "--draw", "3"},
			0, "dimensions: N = 2, D = 1"},
		{"errors name the file's row", []string{"check", "../../examples/binary.pydt", "--data", "Y=" + p("y.csv"), "--draw", "2"},
			1, "y.csv: row 4, column 4 (line 5): 2 is not a valid value of Y (declared binary)"},
		{"run a draw", []string{"run", gauss, "--data", "X=" + p("x3.csv"), "--draw", "2", "--explain"},
			0, "schedule of one sweep"},
		{"run needs --draw too", []string{"run", gauss, "--data", "X=" + p("x3.csv"), "--explain"},
			1, "holds 3 draws"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runCmd(t, c.args...)
			text := errOut
			if c.code == 0 {
				text = out
			}
			if code != c.code || !strings.Contains(text, c.want) {
				t.Errorf("status %d (want %d)\nstdout: %s\nstderr: %s\nwant %q", code, c.code, out, errOut, c.want)
			}
		})
	}
	// A run of a draw resumes with the same draw.
	out := p("fit")
	if code, _, errOut := runCmd(t, "run", gauss, "--data", "X="+p("x3.csv"), "--draw", "2", "--iters", "10", "--chains", "1", "--out", out); code != 0 {
		t.Fatalf("run --draw 2: %s", errOut)
	}
	if code, _, errOut := runCmd(t, "run", "--resume", out); code != 0 {
		t.Errorf("resuming a run of draw 2: %s", errOut)
	}
	// Draw 2 scores as the plain file of its rows with its tree.
	writeFiles(t, dir, map[string]string{"x.csv": "1.1\n1.2\n", "t2.nwk": "(1:0.25,2:0.25):0.75;\n"})
	_, a, _ := runCmd(t, "score", gauss, "--data", "X="+p("x3.csv"), "--tree", p("t.nwk"), "--draw", "2", "--set", sets, "--json")
	_, b, _ := runCmd(t, "score", gauss, "--data", "X="+p("x.csv"), "--tree", p("t2.nwk"), "--set", sets, "--json")
	if a == "" || a != b {
		t.Errorf("--draw 2 scores %s, the plain file %s", a, b)
	}
}

// TestScoreProbitEP scores a Probit model (main refused it): log_lik is
// EP's estimate, stderr says it is an approximation, --json marks it. The
// exact value is a product of bivariate orthant probabilities (one per
// dimension): ρ = ±σ² t/(σ² + 1) = ±1/4 here, P = 1/4 + asin ρ/(2π).
func TestScoreProbitEP(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"y.csv": "0,1\n1,0\n", "t.nwk": "(1:0.5,2:0.5):0.5;\n"})
	args := []string{"score", "../../examples/binary.pydt", "--data", "Y=" + filepath.Join(dir, "y.csv"),
		"--tree", filepath.Join(dir, "t.nwk"), "--set", "alpha=1,beta=0.2,c=1,prec=1"}
	code, out, errOut := runCmd(t, args...)
	if code != 0 || !strings.Contains(errOut, "log_lik is an approximation") || !strings.Contains(errOut, "expectation propagation") {
		t.Fatalf("status %d, stderr %q", code, errOut)
	}
	var ll float64
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "log_lik "); ok {
			ll, _ = strconv.ParseFloat(v, 64)
		}
	}
	want := 2 * math.Log(0.25+math.Asin(-0.25)/(2*math.Pi))
	if !(math.Abs(ll-want) <= 0.005) {
		t.Errorf("log_lik %v, exact %v (output %q)", ll, want, out)
	}
	_, js, _ := runCmd(t, append(args, "--json")...)
	if !strings.Contains(js, `"log_lik_method": "EP"`) {
		t.Errorf("--json output does not mark the approximation: %s", js)
	}
}

// tinyData is a small data set that runs quickly.
const tinyData = "0.1,0.2\n0.3,-0.1\n1.2,1.1\n1.0,1.3\n-0.9,0.4\n"

func readSummary(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRunFlags(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "x.csv")
	writeFiles(t, dir, map[string]string{"x.csv": tinyData})
	base := []string{"run", "../../examples/gaussian.pydt", "--data", "X=" + data, "--chains", "1", "--iters", "20"}
	cases := []struct {
		name  string
		args  []string
		code  int
		err   string
		burn  float64 // summary.json's burn on success
		lines int     // trace.csv rows on success
	}{
		{"default burn-in is half", nil, 0, "", 10, 10},
		{"--burn 0 is none", []string{"--burn", "0"}, 0, "", 0, 20},
		{"--burn 5", []string{"--burn", "5", "--thin", "5"}, 0, "", 5, 3},
		{"negative burn", []string{"--burn", "-1"}, 2, "run: --burn must be 0 (none) or more, got -1", 0, 0},
		{"burn too long", []string{"--burn", "20"}, 2, "run: --burn 20 must be less than --iters 20", 0, 0},
		{"zero iters", []string{"--iters", "0"}, 2, "run: --iters must be at least 1, got 0", 0, 0},
		{"zero thin", []string{"--thin", "0"}, 2, "run: --thin must be at least 1, got 0", 0, 0},
		{"negative chains", []string{"--chains", "-2"}, 2, "run: --chains must be at least 1, got -2", 0, 0},
		{"zero checkpoints", []string{"--checkpoint-every", "0"}, 2, "run: --checkpoint-every must be at least 1, got 0", 0, 0},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, "out", string(rune('a'+i)))
			args := append(append(append([]string{}, base...), c.args...), "--out", out)
			code, _, errOut := runCmd(t, args...)
			if code != c.code || !strings.Contains(errOut, c.err) {
				t.Fatalf("status %d (want %d), stderr %q, want %q", code, c.code, errOut, c.err)
			}
			if c.code != 0 {
				return
			}
			if got := readSummary(t, out)["burn"]; got != c.burn {
				t.Errorf("summary.json burn %v, want %v", got, c.burn)
			}
			b, _ := os.ReadFile(filepath.Join(out, "trace.csv"))
			if n := strings.Count(string(b), "\n") - 1; n != c.lines {
				t.Errorf("trace.csv has %d rows, want %d", n, c.lines)
			}
		})
	}
}

func TestRunOutputReuse(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "x.csv")
	writeFiles(t, dir, map[string]string{"x.csv": tinyData})
	out := filepath.Join(dir, "fit")
	args := func(chains string, extra ...string) []string {
		return append([]string{"run", "../../examples/gaussian.pydt", "--data", "X=" + data, "--iters", "10",
			"--chains", chains, "--out", out}, extra...)
	}
	if code, _, errOut := runCmd(t, args("3", "--impute")...); code != 0 {
		t.Fatal(errOut)
	}
	before, _ := os.ReadFile(filepath.Join(out, "trace.csv"))
	code, _, errOut := runCmd(t, args("2")...)
	if want := out + " holds a run: continue it with --resume " + out + ", or pass --force to replace it"; code != 1 || !strings.Contains(errOut, want) {
		t.Errorf("status %d, stderr %q, want %q", code, errOut, want)
	}
	if after, _ := os.ReadFile(filepath.Join(out, "trace.csv")); !bytes.Equal(before, after) {
		t.Error("a refused run changed the old run's trace")
	}
	os.WriteFile(filepath.Join(out, "notes.txt"), []byte("mine"), 0o644)
	if code, _, errOut := runCmd(t, args("2", "--force")...); code != 0 {
		t.Fatalf("--force: %s", errOut)
	}
	for name, want := range map[string]bool{"trees-1.nwk": true, "trees-2.nwk": true, "trees-3.nwk": false,
		"impute.csv": false, "notes.txt": true, "run.json": true} {
		if _, err := os.Stat(filepath.Join(out, name)); (err == nil) != want {
			t.Errorf("after --force, %s exists: %v, want %v", name, err == nil, want)
		}
	}
	if s := readSummary(t, out); s["chains"] != 2.0 {
		t.Errorf("summary.json chains %v, want 2", s["chains"])
	}
}

func TestResumeSafety(t *testing.T) {
	dir := t.TempDir()
	model, _ := os.ReadFile("../../examples/gaussian.pydt")
	writeFiles(t, dir, map[string]string{"x.csv": tinyData, "m.pydt": string(model)})
	out := filepath.Join(dir, "fit")
	if code, _, errOut := runCmd(t, "run", filepath.Join(dir, "m.pydt"), "--data", "X="+filepath.Join(dir, "x.csv"),
		"--iters", "10", "--chains", "1", "--out", out); code != 0 {
		t.Fatal(errOut)
	}
	ri, err := inference.ReadRun(out)
	if err != nil || ri.Inputs == nil || ri.Inputs.Model.SHA256 == "" || len(ri.Inputs.Data) != 1 || ri.Inputs.Data["X"].SHA256 == "" {
		t.Errorf("run.json inputs: %+v %v", ri, err)
	}
	if code, _, errOut := runCmd(t, "run", "--resume", out); code != 0 {
		t.Fatalf("resume with unchanged files: %s", errOut)
	}
	cases := []struct {
		name string
		args []string
		edit string // file to change before resuming
		code int
		want string
	}{
		{"flags", []string{"--thin", "2"}, "", 2, "run --resume takes no other arguments or flags but --iters (got --thin): a run's settings are fixed"},
		{"local moves", []string{"--local-moves", "0"}, "", 2, "(got --local-moves): a run's settings are fixed"},
		{"local grid", []string{"--local-grid", "2"}, "", 2, "(got --local-grid): a run's settings are fixed"},
		{"model argument and data", []string{filepath.Join(dir, "m.pydt"), "--data", "X=x.csv"}, "", 2, "(got MODEL " + filepath.Join(dir, "m.pydt") + ", --data)"},
		{"changed data", nil, "x.csv", 1, filepath.Join(dir, "x.csv") + " has changed since the run started"},
		{"changed model", nil, "m.pydt", 1, filepath.Join(dir, "m.pydt") + " has changed since the run started"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.edit != "" {
				path := filepath.Join(dir, c.edit)
				orig, _ := os.ReadFile(path)
				os.WriteFile(path, append(append([]byte{}, orig...), '\n'), 0o644)
				defer os.WriteFile(path, orig, 0o644)
			}
			code, _, errOut := runCmd(t, append([]string{"run", "--resume", out}, c.args...)...)
			if code != c.code || !strings.Contains(errOut, c.want) {
				t.Errorf("status %d (want %d), stderr %q, want %q", code, c.code, errOut, c.want)
			}
		})
	}
}
