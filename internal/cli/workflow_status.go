package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/readmodel"
)

// WorkflowStatus prints an Application's workflow run: each step (and
// sub-step) with its type, phase, reason and message, then the values its
// steps exported (outputs), as the current version's tracker records them.
func WorkflowStatus(ctx context.Context, hub client.Reader, namespace, name string, out io.Writer) error {
	app := &v1beta1.Application{}
	if err := hub.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, app); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("application %s/%s not found", namespace, name)
		}
		return fmt.Errorf("reading application %s/%s: %w", namespace, name, err)
	}
	w := app.Status.Workflow
	if w == nil {
		_, err := fmt.Fprintf(out, "Application %s/%s has no workflow run yet.\n", namespace, name)
		return err
	}
	fmt.Fprintf(out, "Workflow of %s/%s, revision %s: %s", namespace, name, w.AppRevision, w.Phase)
	if w.Message != "" {
		fmt.Fprintf(out, " (%s)", w.Message)
	}
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STEP\tTYPE\tPHASE\tREASON\tMESSAGE")
	row := func(prefix string, s v1beta1.StepStatus) {
		fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\t%s\n", prefix, s.Name, s.Type, s.Phase, s.Reason, oneLine(s.Message))
	}
	for _, s := range w.Steps {
		row("", s.StepStatus)
		for _, sub := range s.SubStepsStatus {
			row("  ", sub)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	outputs, err := readmodel.WorkflowOutputs(ctx, hub, app)
	if err != nil {
		return err
	}
	if len(outputs) == 0 {
		return nil
	}
	fmt.Fprintln(out, "\nOutputs:")
	for _, k := range slices.Sorted(maps.Keys(outputs)) {
		fmt.Fprintf(out, "  %s: %s\n", k, outputs[k])
	}
	return nil
}

// oneLine keeps a message on one line of the table.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
