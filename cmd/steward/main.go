package main

import (
	"os"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

func main() {
	if err := newRootCommand().Execute(); err != nil {
		os.Exit(exitCode(err))
	}
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "steward",
		Short:         "Steward delivers OAM Applications with resource trackers",
		SilenceUsage:  true,
		SilenceErrors: false,
	}
	root.AddCommand(newControllerCommand(), newDevCommand(), newUpCommand(), newRenderCommand(), newClusterCommand())
	root.AddCommand(newVersionCommand(), newLsCommand(), newStatusCommand(), newTreeCommand(),
		newDiffCommand(), newHistoryCommand(), newRollbackCommand(), newWorkflowCommand(), newDashboardCommand())
	return root
}

// setupLogging installs the controller-runtime logger with zap options
// bound to flags.
func setupLogging(opts *zap.Options) {
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(opts)))
}
