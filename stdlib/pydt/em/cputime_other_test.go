//go:build !unix

package em

// cpuSeconds is 0 where getrusage is unavailable.
func cpuSeconds() float64 { return 0 }
