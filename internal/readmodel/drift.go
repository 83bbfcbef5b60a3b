package readmodel

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/apply"
	"github.com/steward-oam/steward/internal/cluster"
	"github.com/steward-oam/steward/internal/policy"
	"github.com/steward-oam/steward/internal/tracker"
)

// ObjectState is the live state of one tracked object, compared with its
// recorded manifest the way the controller's StateKeep compares them.
type ObjectState string

// Object states, as `steward tree`, `steward status` and the dashboard show
// them.
const (
	// StatePresent: the object exists and the controller would not patch
	// it (or, for a read-only or metadata-only entry, it exists).
	StatePresent ObjectState = "present"
	// StateMissing: the object does not exist; StateKeep would create it.
	StateMissing ObjectState = "missing"
	// StateDrifted: the object exists but differs from its manifest;
	// StateKeep would patch the fields listed.
	StateDrifted ObjectState = "drifted"
	// StateConflict: the object exists and another Application, or none,
	// owns it; the controller leaves it alone.
	StateConflict ObjectState = "conflict"
	// StateDeleting: the entry is marked deleted (garbage collection) and
	// the object still exists.
	StateDeleting ObjectState = "deleting"
	// StateGone: the entry is marked deleted and the object is gone; the
	// next pass drops the entry.
	StateGone ObjectState = "gone"
	// StateUnknown: the object could not be read (cluster unreachable,
	// kind not served, access denied).
	StateUnknown ObjectState = "unknown"
)

// checker compares recorded objects with live ones for one Application.
type checker struct {
	applier apply.Applier
	rules   *policy.Rules
	types   map[string]string
}

// cluster checks the entries of one cluster; after the first error that
// says the cluster is unreachable the rest are unknown without trying.
func (c checker) cluster(ctx context.Context, clients Clients, name string, entries []keptEntry) ClusterObjects {
	out := ClusterObjects{Cluster: name}
	cl, err := clients.GetClient(ctx, name)
	for _, e := range entries {
		obj := TrackedObject{Cluster: name, APIVersion: e.APIVersion, Kind: e.Kind, Namespace: e.Namespace, Name: e.Name,
			Component: e.Component, Trait: e.Trait, Tracker: e.tracker, MetadataOnly: e.Data == nil && !e.Deleted}
		if err != nil {
			obj.State = StateUnknown
			out.Error = err.Error()
			out.Objects = append(out.Objects, obj)
			continue
		}
		var checkErr error
		obj, checkErr = c.object(ctx, readOnlyClient{cl}, e, obj)
		if checkErr != nil && cluster.IsUnreachable(checkErr) {
			err = checkErr
			out.Error = err.Error()
		}
		out.Objects = append(out.Objects, obj)
	}
	return out
}

// object fills the state of one entry: an entry marked deleted is
// deleting or gone, a read-only or metadata-only entry present or
// missing, any other goes through apply's report-only mode with the
// options StateKeep would use, so that drifted means StateKeep would
// patch. The error is returned only to spot an unreachable cluster.
func (c checker) object(ctx context.Context, cl client.Client, e keptEntry, obj TrackedObject) (TrackedObject, error) {
	res := policy.Resource{Component: e.Component, ComponentType: c.types[e.Component], Trait: e.Trait, Kind: e.Kind, Name: e.Name}
	manifest, err := tracker.Manifest(e.ManagedResource)
	if err != nil {
		obj.State, obj.Message = StateUnknown, err.Error()
		return obj, nil
	}
	obj.ReadOnly = c.rules.ReadOnly(res)
	if e.Deleted || manifest == nil || obj.ReadOnly {
		exists, err := objectExists(ctx, cl, e.ManagedResource)
		switch {
		case err != nil:
			obj.State, obj.Message = StateUnknown, err.Error()
		case e.Deleted && exists:
			obj.State = StateDeleting
		case e.Deleted:
			obj.State = StateGone
		case exists:
			obj.State = StatePresent
		default:
			obj.State = StateMissing
		}
		return obj, err
	}
	result, err := c.applier.Apply(ctx, cl, manifest, apply.Options{
		ReportOnly:     true,
		TakeOver:       c.rules.TakeOver(res),
		Shared:         c.rules.Shared(res),
		KeepLiveFields: c.rules.ApplyOncePaths(res, false),
	})
	switch {
	case errors.Is(err, errReadOnly):
		// Only joining a shared object's sharers would be written.
		obj.State = StatePresent
	case errors.Is(err, apply.ErrNotOwned):
		obj.State, obj.Message = StateConflict, err.Error()
	case err != nil:
		obj.State, obj.Message = StateUnknown, err.Error()
		return obj, err
	case result.Action == apply.Missing:
		obj.State = StateMissing
	case result.Action == apply.Drifted:
		obj.State, obj.Fields = StateDrifted, result.Fields
	default:
		obj.State = StatePresent
	}
	return obj, nil
}

func objectExists(ctx context.Context, c client.Client, e v1beta1.ManagedResource) (bool, error) {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(schema.FromAPIVersionAndKind(e.APIVersion, e.Kind))
	err := c.Get(ctx, client.ObjectKey{Namespace: e.Namespace, Name: e.Name}, live)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", tracker.KeyOf(e), err)
	}
	return true, nil
}
