//go:build !unix

package inference

import "os"

// tryLock does nothing where the engine has no flock (Windows, Plan 9,
// WebAssembly): there, two runs on one directory are not detected, and it
// is the user's job not to start them.
func tryLock(f *os.File) error { return nil }

func unlock(f *os.File) {}
