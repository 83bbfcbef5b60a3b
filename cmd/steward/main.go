package main

import (
	"os"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/steward-oam/steward/internal/logging"
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
// bound to flags, unsampled at verbosity 1 (logging.New).
func setupLogging(opts *zap.Options) {
	ctrl.SetLogger(logging.New(opts))
}
