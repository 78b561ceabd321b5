//go:build !unix

package bp

import "time"

var start = time.Now()

// cpuNanos returns the wall time since start: no portable CPU clock.
func cpuNanos() int64 { return int64(time.Since(start)) }
