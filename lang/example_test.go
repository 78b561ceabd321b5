package lang_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/pydtlang/pydtlang/lang"
)

// A model with two mistakes: both are reported, with carets.
func ExampleParse() {
	src := []byte(`dim N, D
data X : reel[N, D]
alpha ~ Gamma(2, 0.5)
beta ~ ~ Beta(1, 1)
X ~ PYDT(alpha, beta, 1, 1)
`)
	_, err := lang.Parse("model.pydt", src)
	var diags lang.ErrorList
	if errors.As(err, &diags) {
		diags.Format(os.Stdout, src)
	}
	// Output:
	// model.pydt:2:10: unknown type "reel" (want one of real, binary, count, categorical, int, pos or unit)
	// data X : reel[N, D]
	//          ^
	// hint: did you mean "real"?
	// model.pydt:4:8: expected expression, found "~"
	// beta ~ ~ Beta(1, 1)
	//        ^
}

func ExampleFormatSource() {
	src := []byte(`dim N,D
data Y:binary[N,D]   # observed
for i in 1:N,d in 1:D {Y[i,d]~Probit(Z[i,d]*2^-1)}
`)
	out, err := lang.FormatSource("model.pydt", src)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(out))
	// Output:
	// dim N, D
	// data Y : binary[N, D] # observed
	// for i in 1:N, d in 1:D {
	//   Y[i, d] ~ Probit(Z[i, d] * 2^-1)
	// }
}

func ExampleSuggest() {
	fmt.Println(lang.Suggest("Gamm", []string{"Beta", "Gamma", "Normal"}))
	fmt.Println(lang.Suggest("alpah", []string{"alpha", "beta"}))
	fmt.Printf("%q\n", lang.Suggest("x", []string{"y", "z"}))
	// Output:
	// Gamma
	// alpha
	// ""
}

func ExampleInspect() {
	f, err := lang.Parse("model.pydt", []byte("X ~ PYDT(alpha, beta, DivInvSq(c), 1 / prec)\n"))
	if err != nil {
		fmt.Println(err)
		return
	}
	lang.Inspect(f, func(n lang.Node) bool {
		if call, ok := n.(*lang.Call); ok {
			fmt.Printf("%s: call of %s with %d arguments\n", call.Pos(), call.Func.Name, len(call.Args))
		}
		return true
	})
	// Output:
	// model.pydt:1:5: call of PYDT with 4 arguments
	// model.pydt:1:23: call of DivInvSq with 1 arguments
}
