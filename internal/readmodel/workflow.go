package readmodel

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/tracker"
)

// WorkflowOutputs reads the values the steps of app's current workflow
// run (status.workflow, which must be set) exported, from the version
// tracker of its revision; nil when none recorded any.
func WorkflowOutputs(ctx context.Context, hub client.Reader, app *v1beta1.Application) (map[string]json.RawMessage, error) {
	var list v1beta1.ResourceTrackerList
	if err := hub.List(ctx, &list, client.InNamespace(""), client.MatchingLabels{
		v1beta1.LabelAppName:      app.Name,
		v1beta1.LabelAppNamespace: app.Namespace,
		v1beta1.LabelTrackerType:  string(v1beta1.ResourceTrackerTypeVersioned),
	}); err != nil {
		return nil, fmt.Errorf("listing resource trackers of %s/%s: %w", app.Namespace, app.Name, err)
	}
	for _, rt := range list.Items {
		if rt.Labels[v1beta1.LabelAppUID] != string(app.UID) {
			continue
		}
		var recorded struct {
			Run    string                     `json:"run"`
			Values map[string]json.RawMessage `json:"values"`
		}
		if !tracker.DecodeMark(&rt, tracker.AnnotationWorkflowOutputs, &recorded) || !strings.HasPrefix(recorded.Run, app.Status.Workflow.AppRevision+"@") {
			continue
		}
		return recorded.Values, nil
	}
	return nil, nil
}
