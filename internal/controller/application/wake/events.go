package wake

import (
	"context"
	"fmt"
	"strings"

	"github.com/steward-oam/steward/api/v1beta1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// kubectlLastApplied is written by `kubectl apply` together with a spec
// change; on its own it means nothing to Steward.
const kubectlLastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// ApplicationChanged passes events that can change what Steward does: a
// new spec (generation), deletion, label or annotation changes, and a
// workflow resumed, suspended, terminated or restarted. Other status
// writes, managedFields and resourceVersion churn, and Steward's own
// finalizer update are dropped, so the controller never loops on its own
// writes.
func ApplicationChanged() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return true },
		DeleteFunc: func(event.DeleteEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, n := e.ObjectOld, e.ObjectNew
			switch {
			case o.GetGeneration() != n.GetGeneration():
				return true
			case o.GetDeletionTimestamp().IsZero() != n.GetDeletionTimestamp().IsZero():
				return true
			case !stringMapsEqual(o.GetLabels(), n.GetLabels(), ""):
				return true
			case workflowControlled(o, n):
				// Resumed, suspended, terminated or restarted (status
				// written by `steward workflow` or `vela workflow`).
				return true
			case othersConditions(o) != othersConditions(n):
				// Someone else wrote a condition, as tools written for
				// KubeVela do to have the Application looked at again.
				return true
			default:
				return !stringMapsEqual(o.GetAnnotations(), n.GetAnnotations(), kubectlLastApplied)
			}
		},
		GenericFunc: func(event.GenericEvent) bool { return true },
	}
}

// TrackerEvents passes tracker events. With the delete-only trigger (the
// default) only deletions pass: Steward writes trackers itself on every
// dispatch and must not be woken by its own writes, but a tracker deleted
// by someone else must be re-created at once.
func TrackerEvents(deleteOnly bool) predicate.Predicate {
	if !deleteOnly {
		return predicate.Funcs{}
	}
	return predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return false },
		DeleteFunc: func(event.DeleteEvent) bool { return true },
		UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld.GetDeletionTimestamp().IsZero() && !e.ObjectNew.GetDeletionTimestamp().IsZero()
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// TrackerToApplication maps a tracker to its Application by labels.
func TrackerToApplication(_ context.Context, obj client.Object) []reconcile.Request {
	l := obj.GetLabels()
	name, ns := l[v1beta1.LabelAppName], l[v1beta1.LabelAppNamespace]
	if name == "" || ns == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
}

// UsesStepType reports whether app's workflow has a step or sub-step of
// type t.
func UsesStepType(app *v1beta1.Application, t string) bool {
	if app.Spec.Workflow == nil {
		return false
	}
	for _, s := range app.Spec.Workflow.Steps {
		if s.Type == t {
			return true
		}
		for _, sub := range s.SubSteps {
			if sub.Type == t {
				return true
			}
		}
	}
	return false
}

// stringMapsEqual compares two maps, ignoring one key.
func stringMapsEqual(a, b map[string]string, ignore string) bool {
	count := 0
	for k, v := range a {
		if k == ignore {
			continue
		}
		count++
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	for k := range b {
		if k != ignore {
			count--
		}
	}
	return count == 0
}

// workflowControlled reports whether a user controlled the run between o
// and n (resume, suspend, terminate, restart). A run that is neither
// suspended nor terminated replacing none, or replacing such a run of
// another revision, is the controller starting a run: no pass is needed
// for its own write.
func workflowControlled(o, n any) bool {
	if workflowControl(o) == workflowControl(n) {
		return false
	}
	oa, _ := o.(*v1beta1.Application)
	na, _ := n.(*v1beta1.Application)
	if oa == nil || na == nil || na.Status.Workflow == nil {
		return true
	}
	ow, nw := oa.Status.Workflow, na.Status.Workflow
	idle := func(w *v1beta1.WorkflowStatus) bool { return !w.Suspend && !w.Terminated }
	return !(idle(nw) && (ow == nil || (ow.AppRevision != nw.AppRevision && idle(ow))))
}

// workflowControl is the part of an Application's workflow status a user
// writes to control the run.
func workflowControl(o any) string {
	app, ok := o.(*v1beta1.Application)
	if !ok || app.Status.Workflow == nil {
		return ""
	}
	w := app.Status.Workflow
	return fmt.Sprintf("run %s suspend=%t terminated=%t", w.AppRevision, w.Suspend, w.Terminated)
}

// othersConditions describes the conditions of an Application that
// Steward did not write: every condition Steward writes carries the
// generation it describes (at least 1), while KubeVela's shape has no
// observedGeneration. Steward's next status write replaces or drops them,
// so a pass they trigger does not trigger another.
func othersConditions(o any) string {
	app, ok := o.(*v1beta1.Application)
	if !ok {
		return ""
	}
	var b strings.Builder
	for _, c := range app.Status.Conditions {
		if c.ObservedGeneration == 0 {
			fmt.Fprintf(&b, "%s=%s/%s/%s;", c.Type, c.Status, c.Reason, c.Message)
		}
	}
	return b.String()
}
