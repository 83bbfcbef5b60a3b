package cli

import (
	"context"
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/readmodel"
)

// RollbackOptions are the inputs of `steward rollback`.
type RollbackOptions struct {
	Name      string
	Namespace string
	// To is the publishVersion to go back to, or its revision name
	// ("<app>-<publishVersion>").
	To string
}

// RollbackResult says what a rollback changed.
type RollbackResult struct {
	// From is the publishVersion the Application asked for before.
	From string
	// To is the publishVersion it asks for now.
	To string
	// Revision is the version's revision name, as status.latestRevision
	// will name it once the controller has applied it.
	Revision string
}

// Rollback rolls an Application back the way Steward supports it: by
// setting its app.oam.dev/publishVersion back to an earlier version whose
// versioned tracker still exists. The controller then applies exactly
// the manifests that tracker recorded (the current spec is not rendered)
// and garbage-collects what only newer versions created. A version
// without a tracker (never published, or recycled beyond the revision
// limit) is refused, listing the versions that can be rolled back to:
// setting it would render the current spec under that name instead.
func Rollback(ctx context.Context, hub client.Client, o RollbackOptions) (RollbackResult, error) {
	app, versions, err := readmodel.Versions(ctx, hub, o.Namespace, o.Name)
	if err != nil {
		return RollbackResult{}, err
	}
	from := app.Annotations[v1beta1.AnnotationPublishVersion]
	var target *readmodel.AppVersion
	var available []string
	for i, v := range versions {
		if v.PublishVersion == "" {
			continue
		}
		if v.PublishVersion == o.To || v.Revision == o.To {
			target = &versions[i]
		}
		if !v.Current {
			available = append(available, v.PublishVersion)
		}
	}
	switch {
	case target == nil && len(available) == 0:
		return RollbackResult{}, fmt.Errorf("application %s/%s has no version %q, and no earlier published version to roll back to: "+
			"rollback works between versions published with the %s annotation", app.Namespace, app.Name, o.To, v1beta1.AnnotationPublishVersion)
	case target == nil:
		return RollbackResult{}, fmt.Errorf("application %s/%s has no version %q to roll back to; available: %s",
			app.Namespace, app.Name, o.To, strings.Join(available, ", "))
	case target.Current && target.PublishVersion == from:
		return RollbackResult{}, fmt.Errorf("application %s/%s is at version %q already", app.Namespace, app.Name, target.PublishVersion)
	}
	before := app.DeepCopy()
	if app.Annotations == nil {
		app.Annotations = map[string]string{}
	}
	app.Annotations[v1beta1.AnnotationPublishVersion] = target.PublishVersion
	patch := client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})
	if err := hub.Patch(ctx, app, patch); err != nil {
		return RollbackResult{}, fmt.Errorf("setting %s of application %s/%s: %w", v1beta1.AnnotationPublishVersion, app.Namespace, app.Name, err)
	}
	return RollbackResult{From: from, To: target.PublishVersion, Revision: target.Revision}, nil
}
