package plot

import (
	"slices"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

func TestParseLabeledNewick(t *testing.T) {
	tests := []struct {
		name   string
		newick string
		labels []string
		want   map[string]float64 // clade (leaves joined by +, sorted) -> label
	}{
		{
			name:   "summary tree",
			newick: "((a:0.4,b:0.4)0.93:0.3,c:0.7)1:0.3;",
			want:   map[string]float64{"a+b": 0.93, "a+b+c": 1},
		},
		{
			name:   "multifurcation, unlabelled clade, comments and spaces",
			newick: "( (b:0.2, c:0.2, d:0.2) 0.5 [a comment]:0.4, a:0.6, (e:0.1,f:0.1):0.5 )[&s=1]0.25:0.4;",
			want:   map[string]float64{"b+c+d": 0.5, "a+b+c+d+e+f": 0.25},
		},
		{
			name:   "quoted leaf and clade labels",
			newick: "(('it''s':0.5,'b c':0.5)'0.75':0.3,z:0.8)1:0.2;",
			want:   map[string]float64{"b c+it's": 0.75, "b c+it's+z": 1},
		},
		{
			name:   "non-numeric label ignored",
			newick: "((a:0.5,b:0.5)clade:0.3,c:0.8)0.5:0.2;",
			want:   map[string]float64{"a+b+c": 0.5},
		},
		{
			name:   "numbered leaves",
			newick: "((2:0.5,3:0.5)0.8:0.3,1:0.8)1:0.2;",
			want:   map[string]float64{"2+3": 0.8, "1+2+3": 1},
		},
		{
			name:   "labels given, in another order",
			newick: "((a:0.5,b:0.5)0.8:0.3,c:0.8)1:0.2;",
			labels: []string{"c", "b", "a"},
			want:   map[string]float64{"a+b": 0.8, "a+b+c": 1},
		},
		{
			name:   "nested clades with the same smallest leaf",
			newick: "(((a:0.2,b:0.2)0.9:0.3,c:0.5)0.6:0.3,d:0.8)1:0.2;",
			want:   map[string]float64{"a+b": 0.9, "a+b+c": 0.6, "a+b+c+d": 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, cred, err := ParseLabeledNewick(tc.newick, tc.labels)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]float64{}
			for v, p := range cred {
				got[cladeName(tr, v)] = p
			}
			if len(got) != len(tc.want) {
				t.Errorf("labels %v, want %v", got, tc.want)
			}
			for k, p := range tc.want {
				if got[k] != p {
					t.Errorf("clade %s: %v, want %v (all: %v)", k, got[k], p, got)
				}
			}
		})
	}
}

func TestParseLabeledNewickError(t *testing.T) {
	for _, s := range []string{"", "((a:0.5,b:0.5)0.9:0.5;", "(a:0.5,b:0.4);"} {
		if _, _, err := ParseLabeledNewick(s, nil); err == nil {
			t.Errorf("%q: no error", s)
		}
	}
}

// cladeName joins the sorted leaf labels below v with +.
func cladeName(tr *pydt.Tree, v pydt.NodeID) string {
	var names []string
	for _, u := range tr.PostOrderFrom(v, nil) {
		if tr.IsLeaf(u) {
			names = append(names, tr.Label(u))
		}
	}
	slices.Sort(names)
	s := ""
	for i, n := range names {
		if i > 0 {
			s += "+"
		}
		s += n
	}
	return s
}
