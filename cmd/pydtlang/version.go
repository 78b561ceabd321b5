package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// fallbackVersion is printed when the binary carries no module version
// (built from a source tree, not by go install of a tagged module).
const fallbackVersion = "devel"

// version describes the build: the module version, the VCS commit and
// time when the binary was built from a git checkout (with "+dirty" for
// uncommitted changes), and the Go version. Without build information
// it is the fallback and the Go version.
func version() string {
	return versionOf(debug.ReadBuildInfo())
}

func versionOf(bi *debug.BuildInfo, ok bool) string {
	if !ok || bi == nil {
		return fmt.Sprintf("%s (%s)", fallbackVersion, runtime.Version())
	}
	v := bi.Main.Version
	if v == "" || v == "(devel)" {
		v = fallbackVersion
	}
	var rev, when string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	var extra []string
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if dirty {
			rev += "+dirty"
		}
		extra = append(extra, "commit "+rev)
	}
	if when != "" {
		extra = append(extra, when)
	}
	gover := bi.GoVersion
	if gover == "" {
		gover = runtime.Version()
	}
	extra = append(extra, gover)
	return fmt.Sprintf("%s (%s)", v, strings.Join(extra, ", "))
}
