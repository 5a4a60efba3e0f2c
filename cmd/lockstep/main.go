// Command lockstep is the one lockstep binary.
//
//	lockstep serve [flags]        start a server (see `lockstep serve --help`)
//	lockstep demo [flags]         run a local 3-member replication group
//	lockstep bench tpcc [flags]   run TPC-C against a MySQL-protocol server
//	lockstep version              print the version
//
// Exit codes: 0 success (including a clean shutdown on SIGINT/SIGTERM);
// 1 runtime failure of a server that was correctly configured (for example
// the port is already in use, or the server stopped with an error);
// 2 usage or configuration error: unknown command or flag, bad flag or
// option-file value, unusable data directory. Every error is one line on
// stderr, "lockstep: <message>", with no usage dump.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// Version is the release version; override it at build time with
//
//	go build -ldflags "-X main.Version=1.2.3" ./cmd/lockstep
var Version = "0.1.0-dev"

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// Exit codes.
const (
	exitOK      = 0
	exitRuntime = 1
	exitUsage   = 2
)

// runtimeError marks a failure that is not the user's input: exit code 1.
// Every other error from a command is treated as a usage error: exit code 2.
type runtimeError struct{ err error }

func (e runtimeError) Error() string { return e.err.Error() }
func (e runtimeError) Unwrap() error { return e.err }

// run executes the command line args and returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stderr)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "lockstep: %s\n", oneLine(err.Error()))
	var rt runtimeError
	if errors.As(err, &rt) {
		return exitRuntime
	}
	return exitUsage
}

// oneLine folds a multi-line message (from a library, say) into one line.
func oneLine(s string) string {
	lines := strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' })
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, "; ")
}

func newRootCmd(stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "lockstep",
		Short: "lockstep: a MySQL-compatible transactional database",
		Long: "lockstep is a MySQL-compatible transactional database: any MySQL client connects\n" +
			"to it, and its storage engine, commit pipeline and log are its own.\n\n" +
			"Start a server with the embedded defaults (data in ./lockstep-data,\n" +
			"127.0.0.1:3306, user root without password):\n\n" +
			"  lockstep serve",
		Version:       Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		// The root command runs only to report an unknown command in one line
		// (cobra's own report adds a multi-line suggestion block) or to print
		// help when no command is given.
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			msg := fmt.Sprintf("unknown command %q", args[0])
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += fmt.Sprintf(" (did you mean %q?)", s[0])
			}
			return errors.New(msg + "; see 'lockstep --help'")
		},
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetVersionTemplate("lockstep {{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return err // a usage error: exit 2, printed as one line by run
	})
	root.AddCommand(newServeCmd(stderr), newDemoCmd(), newBenchCmd(), newVersionCmd())
	return root
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the lockstep version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "lockstep %s\n", Version)
			return err
		},
	}
}
