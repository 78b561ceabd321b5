//go:build !unix

package hmm

import "time"

var start = time.Now()

// cpuTime returns the wall time since start: no portable CPU clock.
func cpuTime() time.Duration { return time.Since(start) }
