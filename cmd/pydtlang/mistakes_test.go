package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files under testdata/mistakes")

// TestMistakes runs the command line as a new user gets it wrong and
// compares the exit status and what it prints with the golden files under
// testdata/mistakes (go test -run TestMistakes -update rewrites them). Each
// message names the fix: an unknown flag close to a command's own names
// it (it said only "unknown flag: --iter"); --data without a name shows
// the form; a data name the model does not declare lists the model's data
// (it gave no hint where no name was close); cut of a directory that does
// not exist says so (it suggested another tree file); check of a model
// with a latent variable no update serves says run would refuse it (it
// passed, and run refused it).
func TestMistakes(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"unknown-flag", []string{"run", "../../examples/gaussian.pydt", "--data", "X=../../examples/data/synthetic.csv", "--iter", "5"}},
		{"unknown-flag-far", []string{"plot", "fit", "--colour", "red"}},
		{"data-without-name", []string{"check", "../../examples/binary.pydt", "--data", "../../examples/data/animals.csv"}},
		{"data-wrong-name", []string{"check", "../../examples/binary.pydt", "--data", "X=../../examples/data/animals.csv"}},
		{"cut-no-run", []string{"cut", "testdata/no-such-run", "--k", "3"}},
		{"check-no-update", []string{"check", "testdata/mistakes/no-update.pydt", "--set", "K=3", "--data", "X=../../examples/data/synthetic.csv"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCmd(t, tc.args...)
			got := fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", code, out, errOut)
			path := filepath.Join("testdata", "mistakes", tc.name+".golden")
			if *updateGolden {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("got:\n%s\nwant (%s):\n%s", got, path, want)
			}
		})
	}
}

// TestCommandList: pydtlang --help lists every command with a summary
// that starts with a capital (plot's started "draw"), and run's names EM
// beside MCMC (a user looking for EM saw "Fit a model by MCMC" alone).
func TestCommandList(t *testing.T) {
	for _, c := range newRoot(io.Discard, io.Discard).Commands() {
		if r, _ := utf8.DecodeRuneInString(c.Short); !unicode.IsUpper(r) {
			t.Errorf("%s: summary %q does not start with a capital", c.Name(), c.Short)
		}
		if c.Name() == "run" && !strings.Contains(c.Short, "EM") {
			t.Errorf("run: summary %q does not name EM", c.Short)
		}
	}
}
