package dataset

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestReadLabels(t *testing.T) {
	for _, c := range []struct {
		name, in string
		rows     int
		want     []string
		err      string
	}{
		{"plain", "a\nb\nc\n", 3, []string{"a", "b", "c"}, ""},
		{"crlf, spaces, trailing blank lines", " a \r\nb c\r\n\n\n", 2, []string{"a", "b c"}, ""},
		{"no final newline", "a\nb", -1, []string{"a", "b"}, ""},
		{"count", "a\nb\n", 3, nil, "has 2 names for 3 data rows"},
		{"duplicate", "a\nb\na\n", 3, nil, `:3: duplicate row name "a" (also line 1)`},
		{"blank inside", "a\n\nb\n", 3, nil, ":2: empty line"},
		{"empty", "\n\n", -1, nil, "no names"},
	} {
		got, err := readLabels("names.txt", strings.NewReader(c.in), c.rows)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
		}
	}
	p := filepath.Join(t.TempDir(), "n.txt")
	os.WriteFile(p, []byte("x\ny\n"), 0o644)
	if got, err := ReadLabels(p, 2); err != nil || !slices.Equal(got, []string{"x", "y"}) {
		t.Errorf("ReadLabels: %q, %v", got, err)
	}
	if _, err := ReadLabels(filepath.Join(t.TempDir(), "missing"), 2); err == nil {
		t.Error("missing file: no error")
	}
}
