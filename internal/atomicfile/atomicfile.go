// Package atomicfile writes files so that a reader, or a crash, never sees
// a partial file: through a temporary file in the same directory, synced,
// then renamed over the target.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write replaces the file at path with data atomically. The file gets mode
// 0644 (set explicitly, so the umask does not apply), as os.WriteFile with
// 0644 gives under the usual umask 022; a temporary file alone would be
// 0600.
func Write(path string, data []byte) error {
	if err := write(path, data); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

func write(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
