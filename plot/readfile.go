package plot

import (
	"fmt"
	"io"
	"os"
)

// readFile opens path and reads it with read, naming the file in a read
// error: the one body behind ReadClassesFile, ReadCoclustFile and
// ReadTraceFile.
func readFile[T any](path string, read func(io.Reader) (T, error)) (T, error) {
	f, err := os.Open(path)
	if err != nil {
		var zero T
		return zero, err
	}
	defer f.Close()
	v, err := read(f)
	if err != nil {
		var zero T
		return zero, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}
