package bounded

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReader(t *testing.T) {
	cases := []struct {
		name, src string
		opts      Options
		want      string // error, or "" for none
	}{
		{"text", "a,b\r\n1,2\n", Options{Name: "f", Max: 100, BareCR: true}, ""},
		{"at the limit", "12345", Options{Name: "f", What: "data file", Max: 5}, ""},
		{"over the limit", "123456", Options{Name: "f", What: "data file", Max: 5}, "f: larger than 5 bytes, the largest data file pydtlang reads"},
		{"NUL", "ab\ncd\x00", Options{Name: "f", Max: 100}, "f: line 2: a NUL byte: this is not a text file"},
		{"NUL, no name", "\x00", Options{Max: 100}, "line 1: a NUL byte"},
		{"bare CR", "1,2\r3,4\r", Options{Name: "f", Max: 100, BareCR: true}, "f: line 1: a carriage return (CR) not followed by a line feed"},
		{"bare CR allowed", "1,2\r3,4\r", Options{Name: "f", Max: 100}, ""},
		{"CR at the end", "1,2\r", Options{Name: "f", Max: 100, BareCR: true}, ""},
		{"bare CR on line 3", "a\r\nb\n\rc", Options{Name: "f", Max: 100, BareCR: true}, "f: line 3: a carriage return"},
	}
	for _, c := range cases {
		for _, one := range []bool{false, true} {
			var r io.Reader = strings.NewReader(c.src)
			if one { // chunk boundaries everywhere, e.g. between CR and LF
				r = iotest.OneByteReader(r)
			}
			got, err := io.ReadAll(NewReader(r, c.opts))
			switch {
			case c.want == "" && err != nil:
				t.Errorf("%s (one byte %v): %v", c.name, one, err)
			case c.want == "" && string(got) != c.src:
				t.Errorf("%s (one byte %v): read %q", c.name, one, got)
			case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
				t.Errorf("%s (one byte %v): error %v, want prefix %q", c.name, one, err, c.want)
			}
		}
	}
}

// TestReadFileDevZero checks that an endless file of NUL bytes is refused at
// once instead of being read into memory.
func TestReadFileDevZero(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	_, err := ReadFile("/dev/zero", Options{What: "model file", Max: MaxModelBytes})
	if err == nil || !strings.Contains(err.Error(), "/dev/zero: line 1: a NUL byte") {
		t.Fatalf("error %v", err)
	}
}

func TestReadFileLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big")
	os.WriteFile(path, []byte(strings.Repeat("x", 2<<10+1)), 0o644)
	_, err := ReadFile(path, Options{What: "model file", Max: 2 << 10})
	if err == nil || err.Error() != path+": larger than 2 KiB, the largest model file pydtlang reads" {
		t.Fatalf("error %v", err)
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "none"), Options{Max: 10}); err == nil || !os.IsNotExist(err) {
		t.Fatalf("missing file: %v", err)
	}
}
