//go:build race

package bp

// raceEnabled reports a -race build. The compiler extends a slice in place
// for append(s, make([]T, n)...) only when it does not instrument the code,
// so under -race segStore.newBlock allocates the appended block and the
// allocation count of a Recompute that lays out new blocks does not hold.
const raceEnabled = true
