package lang

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestWalkReachesEveryNode compares the nodes Walk visits, in order, with
// those found independently by reflection over the AST's fields, and checks
// that every visited node is closed by a Visit(nil).
func TestWalkReachesEveryNode(t *testing.T) {
	files, _ := filepath.Glob("testdata/*/*.pydt")
	if len(files) == 0 {
		t.Fatal("no test inputs")
	}
	for _, path := range files {
		t.Run(path, func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, _ := Parse(path, src) // partial trees of files with errors too
			var want []Node
			collectNodes(reflect.ValueOf(f), &want)
			var got []Node
			open := 0
			Inspect(f, func(n Node) bool {
				if n == nil {
					open--
					return false
				}
				open++
				got = append(got, n)
				return true
			})
			if open != 0 {
				t.Errorf("%d nodes visited but not closed by Visit(nil)", open)
			}
			if len(got) != len(want) {
				t.Fatalf("Walk visits %d nodes, the AST holds %d", len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("visit %d is %T at %v, want %T at %v", i, got[i], got[i].Pos(), want[i], want[i].Pos())
				}
			}
		})
	}
}

// collectNodes appends, in field order, every non-nil node pointer reachable
// from v.
func collectNodes(v reflect.Value, out *[]Node) {
	switch v.Kind() {
	case reflect.Interface:
		if !v.IsNil() {
			collectNodes(v.Elem(), out)
		}
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		if n, ok := v.Interface().(Node); ok {
			*out = append(*out, n)
		}
		collectNodes(v.Elem(), out)
	case reflect.Slice:
		for i := range v.Len() {
			collectNodes(v.Index(i), out)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			collectNodes(v.Field(i), out)
		}
	}
}
