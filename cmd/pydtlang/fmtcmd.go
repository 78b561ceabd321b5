package main

import (
	"bytes"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/pydtlang/pydtlang/internal/atomicfile"
	"github.com/pydtlang/pydtlang/lang"
)

func newFmt() *cobra.Command {
	var write, list bool
	cmd := &cobra.Command{
		Use:   "fmt MODEL... [-w]",
		Short: "Format model files canonically",
		Long: `fmt prints each model in canonical form: one statement per line, two-space
indentation in loops, single spaces around operators, comments kept. The
format is idempotent. With -w it rewrites the files in place instead; with
-l it lists the files whose formatting differs.`,
		Example: `  pydtlang fmt examples/gaussian.pydt
  pydtlang fmt -w examples/*.pydt`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			status := error(nil)
			for _, path := range args {
				src, err := readModel(path)
				if err != nil {
					return &exitError{code: 1, err: err}
				}
				out, err := lang.FormatSource(path, src)
				if err != nil {
					printDiagnostics(cmd.ErrOrStderr(), err, src)
					status = failed
					continue
				}
				switch {
				case list:
					if !bytes.Equal(out, src) {
						fmt.Fprintln(cmd.OutOrStdout(), path)
					}
				case write:
					if !bytes.Equal(out, src) {
						if err := atomicfile.Write(path, out); err != nil {
							return &exitError{code: 1, err: err}
						}
					}
				default:
					cmd.OutOrStdout().Write(out)
				}
			}
			return status
		},
	}
	cmd.Flags().BoolVarP(&write, "write", "w", false, "write the result to the file instead of standard output")
	cmd.Flags().BoolVarP(&list, "list", "l", false, "list files whose formatting differs")
	return cmd
}
