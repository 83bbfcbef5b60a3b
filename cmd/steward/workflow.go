package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/steward-oam/steward/internal/cli"
)

// newWorkflowCommand controls the workflow run of an Application, as
// `vela workflow` does.
func newWorkflowCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workflow",
		Short: "Show, suspend, resume, terminate or restart an Application's workflow",
		Long: `Controls the run of a workflow Steward runs step by step (suspend steps, auto: false, if, timeout,
dependsOn, a mode, step-group, apply-component, apply-object, depends-on-app; see docs/workflow.md) by
writing the Application's status.workflow, as vela workflow does: the two
CLIs are interchangeable.`,
	}
	for _, op := range []struct{ name, short string }{
		{cli.WorkflowResume, "Resume a suspended workflow: the steps after the suspend step run"},
		{cli.WorkflowSuspend, "Suspend a running workflow: no further step starts until it is resumed"},
		{cli.WorkflowTerminate, "Terminate a workflow: the steps it has not reached apply nothing until it is restarted"},
		{cli.WorkflowRestart, "Restart a workflow from its first step"},
	} {
		kube := cli.NewKube(true)
		sub := &cobra.Command{
			Use:               op.name + " APP",
			Short:             op.short,
			Args:              cobra.ExactArgs(1),
			ValidArgsFunction: completeAppNames(kube),
			RunE: func(cmd *cobra.Command, args []string) error {
				_, hub, ns, err := kube.Target()
				if err != nil {
					return err
				}
				msg, err := cli.WorkflowOp(cmd.Context(), hub, ns, args[0], op.name)
				if err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), msg)
				return nil
			},
		}
		kube.AddFlags(sub.Flags())
		cmd.AddCommand(sub)
	}
	kube := cli.NewKube(true)
	status := &cobra.Command{
		Use:               "status APP",
		Short:             "Show each step's phase, reason and message, and the values the steps exported",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeAppNames(kube),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, hub, ns, err := kube.Target()
			if err != nil {
				return err
			}
			return cli.WorkflowStatus(cmd.Context(), hub, ns, args[0], cmd.OutOrStdout())
		},
	}
	kube.AddFlags(status.Flags())
	cmd.AddCommand(status)
	return cmd
}
