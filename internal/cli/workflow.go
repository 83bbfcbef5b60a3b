package cli

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/workflow"
)

// Workflow operations, as `vela workflow` names them.
const (
	WorkflowSuspend   = "suspend"
	WorkflowResume    = "resume"
	WorkflowTerminate = "terminate"
	WorkflowRestart   = "restart"
)

// WorkflowOp changes the run of an Application's workflow the way KubeVela's
// CLI does, by writing its status.workflow (so `vela workflow` and
// `steward workflow` are interchangeable): suspend and resume set suspend,
// terminate sets terminated, restart removes the run so that the
// controller starts it again from the first step. It returns what it did,
// for the user.
func WorkflowOp(ctx context.Context, hub client.Client, namespace, name, op string) (string, error) {
	app := &v1beta1.Application{}
	if err := hub.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, app); err != nil {
		if apierrors.IsNotFound(err) {
			return "", fmt.Errorf("application %s/%s not found", namespace, name)
		}
		return "", fmt.Errorf("reading application %s/%s: %w", namespace, name, err)
	}
	// The run is the version's, whatever the spec says now.
	w := app.Status.Workflow
	if w == nil || (!workflow.Gated(workflow.Of(app)) && (op == WorkflowSuspend || op == WorkflowTerminate)) {
		return "", fmt.Errorf("application %s/%s has no step-by-step workflow run to %s: Steward runs step by step only workflows with a gate (see docs/workflow.md: more than one deploy step, suspend, step-group, apply-component, apply-object or depends-on-app steps, auto: false, if, timeout, dependsOn or a mode); any other is delivered in one pass", namespace, name, op)
	}
	before := app.DeepCopy()
	var done string
	switch op {
	case WorkflowResume:
		if !w.Suspend {
			return "", fmt.Errorf("application %s/%s: the workflow is not suspended (%s)", namespace, name, w.Phase)
		}
		w.Suspend, w.SuspendState = false, ""
		done = "resumed"
	case WorkflowSuspend:
		if w.Finished || w.Terminated {
			return "", fmt.Errorf("application %s/%s: the workflow has %s; there is nothing to suspend", namespace, name, ended(w))
		}
		if w.Suspend && w.SuspendState == workflow.SuspendStateManual {
			return "", fmt.Errorf("application %s/%s: the workflow is suspended already", namespace, name)
		}
		// Marked as by hand: a suspend step's duration does not end it.
		w.Suspend, w.SuspendState = true, workflow.SuspendStateManual
		done = "suspended: no further step starts until it is resumed"
	case WorkflowTerminate:
		if w.Finished || w.Terminated {
			return "", fmt.Errorf("application %s/%s: the workflow has %s already", namespace, name, ended(w))
		}
		w.Terminated = true
		done = "terminated: the steps it had not reached apply nothing until it is restarted"
	case WorkflowRestart:
		app.Status.Workflow = nil
		done = "restarted: the controller runs it again from the first step"
	default:
		return "", fmt.Errorf("unknown workflow operation %q", op)
	}
	// The patch carries the resourceVersion read: a run the controller
	// moved on meanwhile is read again rather than overwritten.
	if err := hub.Status().Patch(ctx, app, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return "", fmt.Errorf("writing the workflow status of %s/%s: %w", namespace, name, err)
	}
	return fmt.Sprintf("Application %s/%s: workflow of %s %s.", namespace, name, w.AppRevision, done), nil
}

func ended(w *v1beta1.WorkflowStatus) string {
	if w.Terminated {
		return "been terminated"
	}
	return "finished"
}
