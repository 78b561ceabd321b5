// Command pydtlang compiles and runs Pitman-Yor diffusion tree models.
//
// Run "pydtlang help" for the list of subcommands.
package main

import (
	"fmt"
	"io"
	"os"
)

const usage = `pydtlang: Bayesian hierarchical clustering with the Pitman-Yor diffusion tree.

Usage:
  pydtlang <command> [arguments]

Commands:
  help        print this message

Run "pydtlang <command> --help" for the flags of a command.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line args and returns the process exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "pydtlang: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
}
