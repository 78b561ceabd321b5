//go:build !race

package bp

// raceEnabled reports a -race build (see race_test.go).
const raceEnabled = false
