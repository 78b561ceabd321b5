// Package cputime reads the CPU time the process has used, which the
// benchmarks and internal/mixbench report beside the wall time: on a
// machine shared with other work the wall time overstates the cost.
package cputime

import "time"

// start is when the package was initialised: the fallback clock's origin.
var start = time.Now()

// Process returns the CPU time, user and system, that the process has
// used. Where the system cannot tell (not a Unix, or getrusage failing)
// it returns the wall time since the process started instead, and
// Measured reports whether the CPU time is read.
func Process() time.Duration {
	if d, ok := process(); ok {
		return d
	}
	return time.Since(start)
}

// Measured reports whether Process reads the CPU time (true on Unix)
// rather than the wall time.
func Measured() bool {
	_, ok := process()
	return ok
}
