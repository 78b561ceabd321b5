package main

import (
	"os"
	"strings"
	"testing"
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
	}
	for _, c := range cases {
		code, _, errOut := runCmd(t, c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: status %d, stderr %q, want %q", c.args, code, errOut, c.want)
		}
	}
}
