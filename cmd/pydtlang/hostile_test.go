package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckHostileModels runs check on model files that used to pass check
// and fail later, print megabytes, or be misread (issue 13): each must give
// a short, positioned diagnostic, or the same graph as the plain file.
func TestCheckHostileModels(t *testing.T) {
	gaussian, err := os.ReadFile("../../examples/gaussian.pydt")
	if err != nil {
		t.Fatal(err)
	}
	_, plain, _ := runCmd(t, "check", "../../examples/gaussian.pydt")
	cases := []struct {
		name string
		src  string
		want string // in stderr; "" means check succeeds with the plain file's graph
	}{
		{"empty.pydt", "", "empty.pydt:1:1: the model has no stochastic statement"},
		{"decls.pydt", "dim N\nconst K = 2\n", "decls.pydt:1:1: the model has no stochastic statement"},
		{"huge_dim.pydt", "const D = 1e300\ndim N\nparam z : real[N, D]\nz ~ Normal(0, 1)\n",
			"huge_dim.pydt:3:19: dimension 2 of z is 1e+300; it must be at most 33554432 (2^25)\nparam z : real[N, D]\n                  ^\n"},
		{"inf.pydt", "const D = 1e308 * 10\ndim N\nparam z : real[N, D]\nz ~ Normal(0, 1)\n",
			"inf.pydt:1:11: constant D is +Inf; constants must be finite\nconst D = 1e308 * 10\n          ^\n"},
		{"wide.pydt", "x ~ Normal(0, 1) " + strings.Repeat("y", 900_000) + "\n",
			"wide.pydt:1:18: statements on one line must be separated by \";\"\nx ~ Normal(0, 1) " + strings.Repeat("y", 61) + "…\n"},
		{"bom_cr.pydt", "\uFEFF" + strings.ReplaceAll(string(gaussian), "\n", "\r"), ""},
		{"no_pydt.pydt", "dim N, D\nparam mu : real[D]\nfor d in 1:D { mu[d] ~ Normal(0, 1) }\n",
			"no_pydt.pydt:3:22: the model has no PYDT"},
		{"fixed_alpha.pydt", strings.Replace(string(gaussian), "PYDT(alpha,", "PYDT(-2.5,", 1),
			"fixed_alpha.pydt:11:10: PYDT alpha = -2.5 is fixed, but no beta in [0, 1) satisfies alpha >= -2 beta"},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name)
			if err := os.WriteFile(path, []byte(c.src), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := runCmd(t, "check", path)
			if c.want == "" {
				want := strings.Replace(plain, "../../examples/gaussian.pydt", path, 1)
				if code != 0 || out != want {
					t.Errorf("status %d, stderr %s\ngot\n%s\nwant\n%s", code, errOut, out, want)
				}
				return
			}
			if code != 1 || !strings.Contains(errOut, filepath.Join(dir, c.want)) {
				t.Errorf("status %d, stderr (%d bytes):\n%.2000s\nwant %q", code, len(errOut), errOut, c.want)
			}
			if len(errOut) > 2000 {
				t.Errorf("%d bytes of diagnostics", len(errOut))
			}
		})
	}
}
