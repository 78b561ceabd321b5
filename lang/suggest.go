package lang

import (
	"strings"
	"unicode/utf8"
)

// MaxSuggestLen is the longest name, in runes, for which Suggest looks for
// a match: the edit distance takes time proportional to the product of the
// two lengths.
const MaxSuggestLen = 64

// Suggest returns the candidate that name was most likely a misspelling
// of, or "" if none is close enough. It is meant for "did you mean"
// hints on unknown names, kinds and distributions.
//
// Closeness is the optimal-string-alignment (restricted Damerau-Levenshtein)
// distance between the lower-cased names, so case slips, transpositions,
// insertions, deletions and substitutions each count as one edit. A
// candidate differing only in case is always suggested; otherwise the
// distance may be at most a third of name's length (rounded down), so
// names shorter than three runes only match case-insensitively. Ties go to
// the candidate with the fewer case-sensitive edits, then to the one
// listed first. name itself is never suggested.
//
// Names and candidates longer than MaxSuggestLen runes are never matched,
// which bounds the work per candidate.
func Suggest(name string, candidates []string) string {
	if utf8.RuneCountInString(name) > MaxSuggestLen {
		return ""
	}
	lname := []rune(strings.ToLower(name))
	limit := len(lname) / 3
	best, bestDist, bestExact := "", 0, 0
	for _, c := range candidates {
		if c == name {
			continue
		}
		// The distance is at least the difference in length.
		if n := utf8.RuneCountInString(c); n > MaxSuggestLen || n > len(lname)+limit || n < len(lname)-limit {
			continue
		}
		d := editDistance(lname, []rune(strings.ToLower(c)))
		if d > limit {
			continue
		}
		exact := editDistance([]rune(name), []rune(c))
		if best == "" || d < bestDist || d == bestDist && exact < bestExact {
			best, bestDist, bestExact = c, d, exact
		}
	}
	return best
}

// editDistance is the optimal-string-alignment distance between a and b:
// the number of single-rune insertions, deletions, substitutions and
// adjacent transpositions needed to turn a into b, with no substring
// edited twice.
func editDistance(a, b []rune) int {
	// Three rolling rows: two back (for transpositions), previous, current.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
