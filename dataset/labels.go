package dataset

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
)

// ReadLabels reads row names kept in a file of their own, one per line,
// as the animals and ccle data sets ship them (animal_names.txt,
// cell_names.txt). Each line is trimmed of surrounding spaces (and a
// carriage return); empty lines at the end are ignored. Every name must
// be non-empty and distinct, since row names name the tree's leaves, and
// there must be exactly rows of them (rows < 0 accepts any number). The
// file is bounded by MaxFileBytes.
func ReadLabels(path string, rows int) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading labels: %w", err)
	}
	defer f.Close()
	return readLabels(path, io.LimitReader(f, MaxFileBytes+1), rows)
}

func readLabels(path string, r io.Reader, rows int) ([]string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	var names []string
	blank := 0 // empty lines not yet followed by a name
	seen := map[string]int{}
	var size int64
	for line := 1; sc.Scan(); line++ {
		size += int64(len(sc.Bytes())) + 1
		if size > MaxFileBytes {
			return nil, fmt.Errorf("%s: larger than %d bytes", path, int64(MaxFileBytes))
		}
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			blank++
			continue
		}
		if blank > 0 {
			return nil, fmt.Errorf("%s:%d: empty line before this name: every row needs a non-empty name", path, line-1)
		}
		if prev, dup := seen[s]; dup {
			return nil, fmt.Errorf("%s:%d: duplicate row name %q (also line %d); row names name the tree's leaves and must be distinct", path, line, s, prev)
		}
		seen[s] = line
		names = append(names, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s: no names", path)
	}
	if rows >= 0 && len(names) != rows {
		return nil, fmt.Errorf("%s has %d names for %d data rows", path, len(names), rows)
	}
	return names, nil
}
