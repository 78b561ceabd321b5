package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	code, out, _ := runCmd(t, "--version")
	if code != 0 || !strings.HasPrefix(out, "pydtlang version ") {
		t.Errorf("--version: status %d, %q", code, out)
	}
	for _, c := range []struct {
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{nil, false, "devel (go"},
		{&debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-11-24T03:00:00Z"}, {Key: "vcs.modified", Value: "true"}}},
			true, "devel (commit 0123456789ab+dirty, 2026-11-24T03:00:00Z, go1.26.0)"},
		{&debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v0.3.0"}}, true, "v0.3.0 (go1.26.0)"},
	} {
		if got := versionOf(c.bi, c.ok); !strings.HasPrefix(got, c.want) {
			t.Errorf("versionOf(%+v) = %q, want prefix %q", c.bi, got, c.want)
		}
	}
}
