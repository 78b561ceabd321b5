package inference

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// outputNames are the files a run writes besides trees-K.nwk, run.json
// first.
var outputNames = []string{RunFile, CheckpointFile, TraceFile, MapFile, SummaryTreeFile, MEAFile, ConsensusFile, CoclustFile,
	SummaryFile, InitTreeFile, ImputeFile, KBestFile, legacyMCCFile}

// runFileNames lists the files of a run present in dir: run.json first,
// then the outputs, the trees-K.nwk in order of K.
func runFileNames(dir string) ([]string, error) {
	var names []string
	for _, name := range outputNames {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			names = append(names, name)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	trees, err := filepath.Glob(filepath.Join(dir, "trees-*.nwk"))
	if err != nil {
		return nil, err
	}
	for _, path := range trees {
		base := filepath.Base(path)
		k, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(base, "trees-"), ".nwk"))
		if err == nil && k >= 1 && TreesFile(k) == base {
			names = append(names, base)
		}
	}
	// The files of a model's further PYDTs, named by their variables
	// (FileOf, TreesFileOf).
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if perTreeFile.MatchString(e.Name()) && !slices.Contains(names, e.Name()) {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// perTreeFile matches the names of the files a run writes for a further
// PYDT of its model, named by the PYDT's variable (FileOf, TreesFileOf).
// It also matches the files of a categorical latent array (StatesFileOf,
// DrawsFileOf).
var perTreeFile = regexp.MustCompile(`^((map|summary|mea|consensus|init-tree)-[A-Za-z_][A-Za-z0-9_]*\.nwk|(coclust|impute|states)-[A-Za-z_][A-Za-z0-9_]*\.csv|trees-[A-Za-z_][A-Za-z0-9_]*-[1-9][0-9]*\.nwk|draws-[A-Za-z_][A-Za-z0-9_]*-[1-9][0-9]*\.csv)$`)

// RemoveRunFiles deletes the files a run writes from dir, and the
// temporary files of interrupted atomic writes, for starting a new run in
// its place; other files are left alone. run.json goes first, so that an
// interrupted removal never leaves a directory that looks like a run.
func RemoveRunFiles(dir string) error {
	names, err := runFileNames(dir)
	if err != nil {
		return fmt.Errorf("removing the old run: %w", err)
	}
	for _, name := range names {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing the old run: %w", err)
		}
	}
	return removeTemporaries(dir)
}

// removeTemporaries deletes the temporary files that an atomic write of
// one of the run's files leaves when its process is killed
// (".checkpoint.json.tmp123" and the like). Only a run holding the
// directory's lock calls it, so no live writer owns them.
func removeTemporaries(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("cleaning %s: %w", dir, err)
	}
	for _, e := range entries {
		if e.IsDir() || !isTemporary(e.Name()) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing a temporary file left by a killed run: %w", err)
		}
	}
	return nil
}

// isTemporary reports whether name is a temporary file of an atomic write
// of one of the run's files (see internal/atomicfile): "." + the file's
// name + ".tmp" + digits.
func isTemporary(name string) bool {
	if !strings.HasPrefix(name, ".") {
		return false
	}
	base, suffix, ok := strings.Cut(name[1:], ".tmp")
	if !ok {
		return false
	}
	if _, err := strconv.ParseUint(suffix, 10, 64); err != nil {
		return false
	}
	return slices.Contains(outputNames, base) || perTreeFile.MatchString(base)
}

// prepareOut readies dir, which this process has locked, for a new run. A
// directory holding a run (a run.json) is refused unless force is set; so
// is one without a run.json that holds a file of a run's name (trace.csv,
// trees-1.nwk, ...): it is someone else's file, which a run would
// overwrite. With force, those files are deleted first. Temporary files of
// a killed run's atomic writes are deleted in every case.
func prepareOut(dir string, force bool) error {
	names, err := runFileNames(dir)
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	switch {
	case len(names) == 0:
		return removeTemporaries(dir)
	case force:
		if err := RemoveRunFiles(dir); err != nil {
			return fmt.Errorf("run: %w", err)
		}
		return nil
	case names[0] == RunFile:
		return fmt.Errorf("%s holds a run: continue it with --resume %s, or pass --force to replace it", dir, dir)
	}
	return fmt.Errorf("%s holds %s but no %s, so it is not a run that --resume can continue; "+
		"pass --force to overwrite it, or choose another output directory", dir, filepath.Join(dir, names[0]), RunFile)
}

// claimOut makes the run directory dir, takes its lock and prepares it for a
// new run (prepareOut); the caller releases the returned lock when done.
func claimOut(dir string, force bool) (*dirLock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	if err := prepareOut(dir, force); err != nil {
		lock.release()
		return nil, err
	}
	return lock, nil
}
