package dataset

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// LongWriter writes draws of a data variable in the long format that
// IsLong recognises and Draw reads back, as "pydtlang sample" writes them:
// a header draw,row,NAME.1,...,NAME.D and one line per row of each draw,
// rows numbered from 1. A vector variable has the header draw,row,NAME and a
// scalar draw,NAME (one line per draw). Values are written in the shortest
// form that reads back exactly.
type LongWriter struct {
	w    *bufio.Writer
	dims []int
	err  error
}

// NewLongWriter writes the header of the draws of the variable name, of
// shape dims (none for a scalar, [n] for a vector, [n, d] for a matrix),
// to w. Call Flush when done.
func NewLongWriter(w io.Writer, name string, dims []int) (*LongWriter, error) {
	if len(dims) > 2 {
		return nil, fmt.Errorf("%s: the long format holds scalars, vectors and matrices, not %d dimensions", name, len(dims))
	}
	lw := &LongWriter{w: bufio.NewWriter(w), dims: append([]int(nil), dims...)}
	header := "draw," + name
	switch len(dims) {
	case 1:
		header = "draw,row," + name
	case 2:
		cols := make([]string, dims[1])
		for j := range cols {
			cols[j] = fmt.Sprintf("%s.%d", name, j+1)
		}
		header = "draw,row," + strings.Join(cols, ",")
	}
	_, lw.err = lw.w.WriteString(header + "\n")
	return lw, lw.err
}

// WriteDraw writes draw k, whose values x are in row-major order.
func (lw *LongWriter) WriteDraw(k int, x []float64) error {
	if lw.err != nil {
		return lw.err
	}
	n := 1
	for _, d := range lw.dims {
		n *= d
	}
	if len(x) != n {
		return fmt.Errorf("draw %d has %d values, want %d", k, len(x), n)
	}
	w := lw.w
	draw := strconv.Itoa(k)
	switch len(lw.dims) {
	case 0:
		w.WriteString(draw + "," + formatFloat(x[0]) + "\n")
	case 1:
		for i, xi := range x {
			w.WriteString(draw + "," + strconv.Itoa(i+1) + "," + formatFloat(xi) + "\n")
		}
	case 2:
		cols := lw.dims[1]
		for i := 0; i < lw.dims[0]; i++ {
			w.WriteString(draw + "," + strconv.Itoa(i+1))
			for _, xij := range x[i*cols : (i+1)*cols] {
				w.WriteByte(',')
				w.WriteString(formatFloat(xij))
			}
			_, lw.err = w.WriteString("\n")
		}
	}
	return lw.err
}

// Flush writes any buffered data to the underlying writer.
func (lw *LongWriter) Flush() error {
	if lw.err != nil {
		return lw.err
	}
	return lw.w.Flush()
}

func formatFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
