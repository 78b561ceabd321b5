package stdlib

import "math"

// Support is the set of values that a node or a parameter may take.
type Support int

// The supports of pydtlang's values.
const (
	Real        Support = iota // (-∞, ∞)
	Positive                   // (0, ∞)
	NonNegative                // [0, ∞)
	Unit                       // (0, 1)
	UnitLeft                   // [0, 1): the Pitman-Yor discount
	Binary                     // {0, 1}
	Count                      // {0, 1, 2, ...}
)

var supportNames = [...]string{
	Real:        "real",
	Positive:    "positive real",
	NonNegative: "non-negative real",
	Unit:        "(0, 1)",
	UnitLeft:    "[0, 1)",
	Binary:      "binary {0, 1}",
	Count:       "count {0, 1, 2, ...}",
}

// String names the support for error messages.
func (s Support) String() string {
	if s >= 0 && int(s) < len(supportNames) {
		return supportNames[s]
	}
	return "unknown support"
}

var supportPhrases = [...]string{
	Real:        "a finite real",
	Positive:    "positive",
	NonNegative: "non-negative",
	Unit:        "strictly between 0 and 1",
	UnitLeft:    "in [0, 1)",
	Binary:      "0 or 1",
	Count:       "a whole number >= 0",
}

// Phrase describes the support as the end of "the value must be ...", for
// error messages: "positive", "0 or 1".
func (s Support) Phrase() string {
	if s >= 0 && int(s) < len(supportPhrases) {
		return supportPhrases[s]
	}
	return s.String()
}

// Within reports whether every value in s lies in t: s ⊆ t.
func (s Support) Within(t Support) bool {
	if s == t || t == Real {
		return true
	}
	switch t {
	case Positive:
		return s == Unit
	case NonNegative:
		return s == Positive || s == Unit || s == UnitLeft || s == Binary || s == Count
	case UnitLeft:
		return s == Unit
	case Count:
		return s == Binary
	}
	return false
}

// Contains reports whether x lies in the support. NaN lies in none.
func (s Support) Contains(x float64) bool {
	if math.IsNaN(x) {
		return false
	}
	switch s {
	case Real:
		return !math.IsInf(x, 0)
	case Positive:
		return x > 0 && !math.IsInf(x, 1)
	case NonNegative:
		return x >= 0 && !math.IsInf(x, 1)
	case Unit:
		return x > 0 && x < 1
	case UnitLeft:
		return x >= 0 && x < 1
	case Binary:
		return x == 0 || x == 1
	case Count:
		return x >= 0 && x == math.Trunc(x) && !math.IsInf(x, 1)
	}
	return false
}

// Discrete reports whether the support is a set of integers.
func (s Support) Discrete() bool { return s == Binary || s == Count }
