package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/steward-oam/steward/internal/cli"
	"github.com/steward-oam/steward/internal/sandbox"
)

// newDiffCommand shows what applying an Application would change, with
// kubectl diff's exit codes.
func newDiffCommand() *cobra.Command {
	kube := cli.NewKube(true)
	opts := cli.DiffOptions{Budget: sandbox.DefaultBudget()}
	cmd := &cobra.Command{
		Use:   "diff -f APP",
		Short: "Show what applying an Application would create, patch and delete",
		Long: `Renders the Application with the cluster's definitions, placement and
policies, as the controller would, and prints a unified diff per object
that applying it would change: created (absent live), patched (the live
object against the result of the controller's apply, a server-side apply by
default, run by the API server as a dry run; fields it would take from
other field managers are named above the diff) and deleted (objects of the Application's trackers the
new version no longer renders, unless a garbage-collect or read-only policy
keeps them). Nothing is written.

Exit status, as kubectl diff: 0 no differences, 1 differences, 2 an error
(including an object the apply would fail on, such as one another
Application owns).`,
		Example: `  steward diff -f app.yaml
  steward diff -f app.yaml -n prod --context hub`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, hub, ns, err := kube.Target()
			if err != nil {
				return exitError(2, err)
			}
			opts.Namespace = ns
			opts.Out = cmd.OutOrStdout()
			if err := opts.Budget.Validate(); err != nil {
				return exitError(2, err)
			}
			report, err := cli.Diff(cmd.Context(), cfg, hub, opts)
			if err != nil {
				return exitError(2, err)
			}
			if len(report.Failures) > 0 {
				return exitError(2, fmt.Errorf("%s; and could not diff: %w", report.Summary(), errors.Join(report.Failures...)))
			}
			if report.Differs() {
				fmt.Fprintln(cmd.ErrOrStderr(), report.Summary())
				cmd.SilenceErrors = true
				return exitError(1, errors.New(report.Summary()))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.AppFile, "file", "f", "", "Application manifest.")
	f.StringVar(&opts.DefinitionNamespace, "definition-namespace", "vela-system", "The system namespace definitions are looked up in after the Application's.")
	f.StringVar(&opts.ClusterNamespace, "cluster-namespace", "vela-system", "The namespace of the cluster Secrets.")
	f.StringVar(&opts.ApplyMethod, "apply-method", "server-side", "The controller's --apply-method: server-side or client-side.")
	opts.Budget.BindFlags(f)
	kube.AddFlags(f)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return exitError(2, err) })
	return cmd
}

// codeError is an error with the exit status main should end with.
type codeError struct {
	code int
	err  error
}

func (e *codeError) Error() string { return e.err.Error() }
func (e *codeError) Unwrap() error { return e.err }

func exitError(code int, err error) error { return &codeError{code: code, err: err} }

// exitCode is the status err asks for: 1 unless it carries another.
func exitCode(err error) int {
	var ce *codeError
	if errors.As(err, &ce) {
		return ce.code
	}
	return 1
}
