package main

import (
	"os"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/inference"
)

// TestBoundedReads checks that endless or binary inputs are refused with a
// message instead of being read into memory (on main, each of these died
// with "fatal error: out of memory").
func TestBoundedReads(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"check", "/dev/zero"}, "/dev/zero: line 1: a NUL byte: this is not a text file"},
		{[]string{"fmt", "/dev/zero"}, "/dev/zero: line 1: a NUL byte: this is not a text file"},
		{[]string{"check", "../../examples/gaussian.pydt", "--data", "X=/dev/zero"}, "/dev/zero: line 1: a NUL byte: this is not a text file"},
		{[]string{"score", "../../examples/gaussian.pydt", "--data", "X=../../examples/data/synthetic.csv", "--tree", "/dev/zero",
			"--set", "alpha=1,beta=0.2,c=1,prec=2"}, "/dev/zero: newick: line 1, offset 0: a NUL byte: this is not a text file"},
		{[]string{"sample", "../../examples/gaussian.pydt", "--set", "N=3,D=1e9", "--out", t.TempDir()},
			"--set D: value 1e+09: a dimension must be a whole number from 1 to 33554432"},
		{[]string{"sample", "../../examples/gaussian.pydt", "--set", "N=30000,D=30000", "--out", t.TempDir()},
			"X has 30000 × 30000 values, more than 33554432 (2^25), the most one array may hold"},
	}
	for _, c := range cases {
		code, _, errOut := runCmd(t, c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: status %d, stderr %q, want %q", c.args, code, errOut, c.want)
		}
	}
}

// TestSetNumbers checks --set against the number syntax shared with data
// files: on main, alpha=1_0 was 10, alpha=0x10 was refused as not a number
// while 0x1p-2 was taken, and alpha=1e-400 was reported as "value 0".
func TestSetNumbers(t *testing.T) {
	cases := []struct {
		set  string
		want string // error, or "" when the value must be accepted
	}{
		{"alpha=1_0", `--set alpha=1_0: "1_0" is not a number: digit separators (_) are not allowed`},
		{"alpha=0x10", `--set alpha=0x10: "0x10" is not a number: hexadecimal is not allowed`},
		{"alpha=0x1p-2", `--set alpha=0x1p-2: "0x1p-2" is not a number: hexadecimal is not allowed`},
		{"alpha=1e-400", `--set alpha=1e-400: "1e-400" is out of range: it is not 0 but its magnitude is below the smallest positive double`},
		{"alpha=1e400", `--set alpha=1e400: "1e400" is out of range: its magnitude exceeds the largest double`},
		{"alpha=Inf", `--set alpha=Inf: "Inf" is infinite; values must be finite`},
		{"alpha=NaN", `--set alpha=NaN: "NaN" is not a number`},
		{"alpha=NA", `--set alpha=NA: "NA" is not a number`},
		{"alpha= 2.5e-1 ", ""},
		{"alpha=+.5", ""},
	}
	for _, c := range cases {
		got, err := inference.ParseSets([]string{c.set})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("--set %s: %v", c.set, err)
		case c.want == "" && got["alpha"] <= 0:
			t.Errorf("--set %s: alpha = %v", c.set, got["alpha"])
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("--set %s: error %v, want prefix %q", c.set, err, c.want)
		}
	}
	// Through the command, an out-of-range value is a usage error (status
	// 2) before the model is compiled.
	code, _, errOut := runCmd(t, "check", "../../examples/gaussian.pydt", "--set", "alpha=1e-400")
	if code != 2 || !strings.Contains(errOut, "out of range") {
		t.Errorf("check --set alpha=1e-400: status %d, stderr %q", code, errOut)
	}
}
