package graph

import (
	"strconv"
	"strings"

	"github.com/pydtlang/pydtlang/internal/bounded"
)

// MaxValues is the most values one array may hold: the product of its
// dimensions may be at most this (2^25), so that a model never asks for
// more memory than it can use (sample --set N=3,D=1e9 ran out of memory).
// A dimension bound with --set is at most this too.
const MaxValues = bounded.MaxValues

// sizes refuses arrays whose dimensions, as far as they are known, multiply
// to more than MaxValues.
func (c *compiler) sizes() {
	for _, v := range c.g.Vars {
		if len(v.Dims) == 0 {
			continue
		}
		n := 1
		known := true
		for _, d := range v.Dims {
			if d < 1 {
				known = false
				break
			}
			if d > MaxValues || n > MaxValues/d {
				n = MaxValues + 1
				continue
			}
			n *= d
		}
		if !known || n <= MaxValues {
			continue
		}
		parts := make([]string, len(v.Dims))
		for k, d := range v.Dims {
			parts[k] = strconv.Itoa(d)
		}
		c.errs.Addf(v.Pos, "%s has %s values, more than %d (2^25), the most one array may hold", v.Name, strings.Join(parts, " × "), MaxValues)
	}
}
