package dataset

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// NumberError is a string that ParseNumber refuses. Kind says why.
type NumberError struct {
	Input string
	Kind  NumberErrorKind
}

// NumberErrorKind classifies a NumberError.
type NumberErrorKind int

// The reasons ParseNumber refuses a string.
const (
	// NotANumber: the string is not a decimal number (text, a digit
	// separator, hexadecimal, or NaN).
	NotANumber NumberErrorKind = iota
	// Infinite: inf or infinity, with any sign and letter case.
	Infinite
	// Overflow: a number whose magnitude exceeds the largest double,
	// about 1.8e308.
	Overflow
	// Underflow: a nonzero number whose magnitude is below the smallest
	// positive double, about 4.9e-324, so that it would read as 0.
	Underflow
)

func (e *NumberError) Error() string {
	s := e.Input
	switch e.Kind {
	case Infinite:
		return fmt.Sprintf("%q is infinite; values must be finite", s)
	case Overflow:
		return fmt.Sprintf("%q is out of range: its magnitude exceeds the largest double, about 1.8e308", s)
	case Underflow:
		return fmt.Sprintf("%q is out of range: it is not 0 but its magnitude is below the smallest positive double, about 4.9e-324, so it would read as 0", s)
	}
	switch {
	case strings.Contains(s, "_"):
		return fmt.Sprintf("%q is not a number: digit separators (_) are not allowed", s)
	case isHex(s):
		return fmt.Sprintf("%q is not a number: hexadecimal is not allowed; write a decimal number", s)
	}
	return fmt.Sprintf("%q is not a number", s)
}

// ParseNumber reads a number in the one syntax that data files and --set
// share, after trimming white space:
//
//	[+|-] digits [. [digits]] [(e|E) [+|-] digits]
//	[+|-] . digits [(e|E) [+|-] digits]
//
// that is, a decimal number with an optional sign, fraction and exponent:
// 2, -0.5, .5, 1., 1e-3, +2.5E+4. Digit separators (1_000), hexadecimal
// (0x10, 0x1p-2), inf and nan are refused, and so is a value that does not
// fit in a double: beyond about 1.8e308 (overflow), or nonzero but below
// about 4.9e-324 (underflow, which would silently read as 0). The error is a
// *NumberError. (Data files also read empty cells, NA and NaN as missing;
// see Read.)
func ParseNumber(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if !decimal(s) {
		if isInf(s) {
			return 0, &NumberError{Input: s, Kind: Infinite}
		}
		return 0, &NumberError{Input: s, Kind: NotANumber}
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(x, 0) {
		// The syntax was checked, so the only error is ErrRange.
		return 0, &NumberError{Input: s, Kind: Overflow}
	}
	if x == 0 && nonzeroMantissa(s) {
		return 0, &NumberError{Input: s, Kind: Underflow}
	}
	return x, nil
}

// decimal reports whether s has the syntax of ParseNumber.
func decimal(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < len(s) && isDigit(s[i]) {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for i < len(s) && isDigit(s[i]) {
			i++
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(s)
}

// nonzeroMantissa reports whether the digits before the exponent of a
// decimal string include one that is not 0.
func nonzeroMantissa(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == 'e' || c == 'E':
			return false
		case c >= '1' && c <= '9':
			return true
		}
	}
	return false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func unsigned(s string) string {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		return s[1:]
	}
	return s
}

func isInf(s string) bool {
	u := strings.ToLower(unsigned(s))
	return u == "inf" || u == "infinity"
}

// isNaN reports whether s is nan in any letter case, with or without a
// sign (C's printf writes -nan).
func isNaN(s string) bool { return strings.EqualFold(unsigned(s), "nan") }

func isHex(s string) bool {
	u := unsigned(s)
	return len(u) > 1 && u[0] == '0' && (u[1] == 'x' || u[1] == 'X')
}
