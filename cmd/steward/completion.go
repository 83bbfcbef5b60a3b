package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/steward-oam/steward/internal/cli"
)

// Shell completion: cobra's own `steward completion bash|zsh|fish|powershell`
// command prints the scripts; the functions here complete arguments from
// the cluster the connection flags select.

// completeAppNames completes the first argument with the Applications of
// the namespace -n (or the context's) selects.
func completeAppNames(kube *cli.Kube) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		_, hub, err := kube.Client()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		ns, _, err := kube.Namespace()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		names, err := cli.AppNames(cmd.Context(), hub, ns, toComplete)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeClusterNames completes the first argument with the registered
// clusters other than local.
func completeClusterNames(kube *cli.Kube) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		_, hub, ns, err := clusterHub(kube)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		names, err := cli.ClusterNames(cmd.Context(), hub, ns, toComplete, false)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

// addOutputFlag adds -o/--output with its values completed.
func addOutputFlag(cmd *cobra.Command, output *string, def string, formats []string) {
	usage := "Output format: " + strings.Join(formats, ", ")
	if def == "" {
		usage += " (default: the readable layout)"
	}
	cmd.Flags().StringVarP(output, "output", "o", def, usage+".")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
}
