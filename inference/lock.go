package inference

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// LockFile is the file in an output directory that a run holds an
// operating-system lock on (flock) for as long as it writes there, so that
// a second run, a --resume or a --force on the same directory is refused
// while the first is alive. It records the holder's process id and start
// time, for the message that refuses the second. The lock dies with its
// process, even under kill -9, so a stale file is harmless; it is not an
// output and is left in place.
const LockFile = ".lock"

// errLocked is returned by tryLock when another open file description
// holds the lock.
var errLocked = errors.New("locked")

// dirLock is the lock on an output directory.
type dirLock struct{ f *os.File }

// lockDir takes the lock on dir (which must exist) without waiting, and
// records this process in the lock file. When another run holds it, the
// error names the directory and, as far as the file tells, the other
// process.
func lockDir(dir string) (*dirLock, error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	if err := tryLock(f); err != nil {
		f.Close()
		if errors.Is(err, errLocked) {
			return nil, fmt.Errorf("%s is in use by another run%s; wait for it to finish or stop it, or choose another output directory",
				dir, holder(path))
		}
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	// Record the holder. A failure here does not weaken the lock.
	if err := f.Truncate(0); err == nil {
		fmt.Fprintf(f, "pid %d\nstarted %s\n", os.Getpid(), time.Now().UTC().Format(time.RFC3339))
	}
	return &dirLock{f: f}, nil
}

// holder describes the process recorded in a lock file, as
// " (pid 123, started 2026-01-02T03:04:05Z)", or "" when the file says
// nothing usable.
func holder(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var pid, started string
	for _, line := range strings.Split(string(b), "\n") {
		key, val, _ := strings.Cut(line, " ")
		switch key {
		case "pid":
			if _, err := strconv.Atoi(val); err == nil {
				pid = val
			}
		case "started":
			if _, err := time.Parse(time.RFC3339, val); err == nil {
				started = val
			}
		}
	}
	switch {
	case pid != "" && started != "":
		return fmt.Sprintf(" (pid %s, started %s)", pid, started)
	case pid != "":
		return fmt.Sprintf(" (pid %s)", pid)
	}
	return ""
}

// release gives the lock up. It is safe on a nil lock.
func (l *dirLock) release() {
	if l == nil || l.f == nil {
		return
	}
	unlock(l.f)
	l.f.Close()
	l.f = nil
}

// LockDir takes the lock that run holds on an output directory, for
// another command that writes there (sample): it refuses, naming the
// holder, while a run or another such command is alive in dir, and makes
// a run started meanwhile wait its turn. dir must exist. The returned
// function gives the lock up.
func LockDir(dir string) (release func(), err error) {
	l, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	return l.release, nil
}
