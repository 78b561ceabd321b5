// Package bounded reads the text files pydtlang takes as input (model
// files, data files, Newick trees) with a size limit, and refuses bytes that
// no text file holds, so that a wrong path such as /dev/zero, a binary file
// or a runaway file gives a clear error instead of exhausting memory.
//
// The limits are documented in spec.md (section 8) and README.md.
package bounded

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// The largest inputs pydtlang reads.
const (
	// MaxModelBytes is the largest model file.
	MaxModelBytes = 1 << 20 // 1 MiB
	// MaxDataBytes is the largest data file (--data).
	MaxDataBytes = 256 << 20 // 256 MiB
	// MaxNewickBytes is the largest file of Newick trees (score --tree).
	MaxNewickBytes = 1 << 30 // 1 GiB
	// MaxNewickLineBytes is the longest line, that is the longest single
	// tree, of a Newick file.
	MaxNewickLineBytes = 16 << 20 // 16 MiB
	// MaxValues is the most values one array of a model, or one data file,
	// may hold: 2^25 = 33,554,432 (256 MiB as float64). A dimension bound
	// with --set may be at most this, and so may the product of an array's
	// dimensions.
	MaxValues = 1 << 25
)

// Error is an input that is too large or is not text. Line and Col, when
// positive, are the 1-based line and byte column of the offending byte.
type Error struct {
	Name      string // file name, or "" when the caller adds it
	Line, Col int
	Msg       string
}

func (e *Error) Error() string {
	prefix := ""
	if e.Name != "" {
		prefix = e.Name + ": "
	}
	if e.Line > 0 {
		return fmt.Sprintf("%sline %d: %s", prefix, e.Line, e.Msg)
	}
	return prefix + e.Msg
}

// Options says what a Reader refuses besides a size above Max.
type Options struct {
	// Name is the file name used in messages ("" to leave it to the
	// caller).
	Name string
	// What names the kind of file in messages, e.g. "data file".
	What string
	// Max is the most bytes read; one more is an error.
	Max int64
	// BareCR refuses a carriage return that is not followed by a line
	// feed (old Mac line endings, which would otherwise join lines).
	BareCR bool
}

// Reader passes bytes through from an underlying reader and fails, with an
// *Error, at the first NUL byte, at a bare carriage return when
// Options.BareCR is set, or when more than Options.Max bytes arrive. It
// counts lines so that errors name the line.
type Reader struct {
	r       io.Reader
	opts    Options
	n       int64 // bytes passed so far
	line    int   // 1-based line of the next byte
	lineOff int64 // offset of the start of that line
	pendCR  bool  // the last byte passed was '\r'
	err     error
}

// NewReader returns a Reader of r with the given options.
func NewReader(r io.Reader, opts Options) *Reader {
	return &Reader{r: r, opts: opts, line: 1}
}

// Read implements io.Reader.
func (t *Reader) Read(p []byte) (int, error) {
	if t.err != nil {
		return 0, t.err
	}
	if room := t.opts.Max - t.n + 1; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := t.r.Read(p)
	b := p[:n]
	if t.pendCR && n > 0 {
		if b[0] != '\n' {
			return 0, t.fail(t.line, t.n-t.lineOff, "a carriage return (CR) not followed by a line feed: files with old Mac (CR-only) line endings are not supported; convert them to LF or CRLF")
		}
		t.pendCR = false
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		// Pass the bytes before the NUL; the error comes with the next
		// Read.
		t.advance(b[:i])
		err := t.fail(t.line, t.n-t.lineOff+1, "a NUL byte: this is not a text file (UTF-16 text must be saved as UTF-8)")
		if i == 0 {
			return 0, err
		}
		return i, nil
	}
	if t.opts.BareCR {
		for k := 0; k < len(b); {
			i := bytes.IndexByte(b[k:], '\r')
			if i < 0 {
				break
			}
			i += k
			if i+1 == len(b) {
				t.pendCR = true
				break
			}
			if b[i+1] != '\n' {
				t.advance(b[:i])
				err := t.fail(t.line, t.n-t.lineOff+1, "a carriage return (CR) not followed by a line feed: files with old Mac (CR-only) line endings are not supported; convert them to LF or CRLF")
				if i == 0 {
					return 0, err
				}
				return i, nil
			}
			k = i + 1
		}
	}
	t.advance(b)
	if t.n > t.opts.Max {
		return 0, t.fail(0, 0, fmt.Sprintf("larger than %s, the largest %s pydtlang reads", Size(t.opts.Max), t.opts.What))
	}
	if err == io.EOF {
		t.pendCR = false
	}
	return n, err
}

// advance counts the bytes of b as passed.
func (t *Reader) advance(b []byte) {
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break
		}
		t.line++
		t.lineOff = t.n + int64(i) + 1
		t.n += int64(i) + 1
		b = b[i+1:]
	}
	t.n += int64(len(b))
}

func (t *Reader) fail(line int, col int64, msg string) error {
	t.err = &Error{Name: t.opts.Name, Line: line, Col: int(col), Msg: msg}
	return t.err
}

// ReadFile reads the file at path through a Reader with the given options;
// opts.Name defaults to path.
func ReadFile(path string, opts Options) ([]byte, error) {
	if opts.Name == "" {
		opts.Name = path
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(NewReader(f, opts))
	if err != nil {
		if _, ok := err.(*Error); ok {
			return nil, err
		}
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return b, nil
}

// Size formats a byte count as a power-of-two size: "256 MiB".
func Size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
