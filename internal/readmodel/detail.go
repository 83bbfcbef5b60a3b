package readmodel

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

// AppDetail is everything the read model knows about one Application,
// read once: its status (conditions, components per cluster, trackers,
// drift, events), every tracked object with its live state, and its
// versions. The dashboard shows it on an Application's page.
type AppDetail struct {
	App      *v1beta1.Application
	Status   *AppStatus
	Tree     *AppTree
	Versions []AppVersion
}

// Inspect reads the detail of one Application: the hub with hub (the
// caller's identity), the target clusters with clients, as `steward
// status` and `steward tree` do. events bounds the events shown.
func Inspect(ctx context.Context, hub client.Client, clients Clients, namespace, name string, events int) (*AppDetail, error) {
	rec, err := readApp(ctx, hub, namespace, name)
	if err != nil {
		return nil, err
	}
	tree, err := liveTree(ctx, clients, rec)
	if err != nil {
		return nil, err
	}
	st, err := statusOf(ctx, hub, rec, tree, events)
	if err != nil {
		return nil, err
	}
	// The trackers readApp listed are all of them, in the controller's
	// order: no second list for the versions.
	versions, err := versionsOf(rec.app, rec.trackers)
	if err != nil {
		return nil, err
	}
	return &AppDetail{App: rec.app, Status: st, Tree: tree, Versions: versions}, nil
}

// errAppNotFound says an Application does not exist (or is not readable as
// such); IsAppNotFound tells it apart.
var errAppNotFound = errors.New("not found")

// IsAppNotFound reports whether err says the Application does not exist.
func IsAppNotFound(err error) bool { return errors.Is(err, errAppNotFound) }

// readError words an error reading an Application.
func readError(namespace, name string, err error) error {
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("application %s/%s %w", namespace, name, errAppNotFound)
	}
	return fmt.Errorf("reading application %s/%s: %w", namespace, name, err)
}
