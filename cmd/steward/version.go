package main

import (
	"github.com/spf13/cobra"

	"github.com/steward-oam/steward/internal/cli"
)

// newVersionCommand prints the build of the binary; it contacts no
// cluster.
func newVersionCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and Go version of this binary",
		Long: `Prints what make build stamped into the binary (git describe and the commit),
else what the Go toolchain recorded: the module version, the VCS revision and
whether the work tree was modified.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cli.PrintVersion(cmd.OutOrStdout(), output)
		},
	}
	addOutputFlag(cmd, &output, "", cli.StructuredFormats)
	return cmd
}
