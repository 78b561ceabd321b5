package lang

import (
	"math"
	"testing"
)

func TestNumberFloat(t *testing.T) {
	cases := []struct {
		lit  string
		want float64
		err  string
	}{
		{lit: "2", want: 2},
		{lit: "0.5", want: 0.5},
		{lit: "1e-3", want: 1e-3},
		{lit: "1e-400", want: 0}, // underflow rounds to zero
		{lit: "1.7976931348623157e308", want: math.MaxFloat64},
		{lit: "1e400", err: "number 1e400 is out of range for a float64"},
		{lit: "2e308", err: "number 2e308 is out of range for a float64"},
	}
	for _, c := range cases {
		got, err := (&Number{Lit: c.lit}).Float()
		switch {
		case c.err != "":
			if err == nil || err.Error() != c.err {
				t.Errorf("Float(%s) = %v, %v; want error %q", c.lit, got, err, c.err)
			}
		case err != nil || got != c.want:
			t.Errorf("Float(%s) = %v, %v; want %v", c.lit, got, err, c.want)
		}
	}
}
