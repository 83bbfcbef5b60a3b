package tracker

import (
	"context"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

// Store reads and writes the trackers of Applications on the hub cluster.
type Store struct {
	// Client reads and writes trackers. Reads may come from a cache: every
	// write carries the resourceVersion it read, so a stale read turns into
	// a conflict, never into a lost write.
	Client client.Client
	// Compression is how new writes store managed resources.
	Compression v1beta1.CompressionType
	// Reader reads straight from the API server, for decisions that must
	// not rest on a cache that may lag (deleting an Application). Nil
	// means Client.
	Reader client.Reader
}

// AppRef names an Application: trackers outlive the Application object, so
// they are addressed by name, namespace and UID rather than by the object.
type AppRef struct {
	Name      string
	Namespace string
	UID       string
}

// RefOf returns the reference of an Application.
func RefOf(app *v1beta1.Application) AppRef {
	return AppRef{Name: app.Name, Namespace: app.Namespace, UID: string(app.UID)}
}

// List returns the trackers of an Application, versioned ones ordered by
// generation (oldest first).
func (s *Store) List(ctx context.Context, app AppRef) ([]v1beta1.ResourceTracker, error) {
	return s.list(ctx, s.Client, app)
}

// ListFresh is List read straight from the API server: a tracker created
// a moment ago is never missed.
func (s *Store) ListFresh(ctx context.Context, app AppRef) ([]v1beta1.ResourceTracker, error) {
	if s.Reader == nil {
		return s.List(ctx, app)
	}
	return s.list(ctx, s.Reader, app)
}

func (s *Store) list(ctx context.Context, r client.Reader, app AppRef) ([]v1beta1.ResourceTracker, error) {
	var list v1beta1.ResourceTrackerList
	if err := r.List(ctx, &list, client.MatchingLabels{
		v1beta1.LabelAppName:      app.Name,
		v1beta1.LabelAppNamespace: app.Namespace,
	}); err != nil {
		return nil, fmt.Errorf("listing resource trackers of %s/%s: %w", app.Namespace, app.Name, err)
	}
	items := list.Items
	sort.SliceStable(items, func(i, j int) bool {
		return items[i].Spec.ApplicationGeneration < items[j].Spec.ApplicationGeneration
	})
	return items, nil
}

// Entries decodes the entries of a tracker. A compressed tracker read
// from the API server is decoded once per resourceVersion while it stays
// in a small cache: the phases of a pass all read the same trackers.
// The slice returned is the caller's to change.
func Entries(rt *v1beta1.ResourceTracker) ([]v1beta1.ManagedResource, error) {
	if rt.Spec.Compression.Type == v1beta1.CompressionNone || rt.Spec.Compression.Data == "" {
		return rt.Spec.ManagedResources, nil
	}
	d, err := decodedEntries.get(rt)
	if err != nil {
		return nil, fmt.Errorf("resource tracker %s: %w", rt.Name, err)
	}
	return d.entriesOf(rt.Spec.ManagedResources), nil
}

// Save writes entries (and generation, when not zero) into rt with a merge
// patch that fails on a concurrent write. rt is updated in place. Nothing is
// written when nothing changed.
func (s *Store) Save(ctx context.Context, rt *v1beta1.ResourceTracker, entries []v1beta1.ManagedResource, generation int64) error {
	before := rt.DeepCopy()
	if generation != 0 {
		rt.Spec.ApplicationGeneration = generation
	}
	current, err := Entries(rt)
	if err == nil && equality.Semantic.DeepEqual(current, entries) &&
		rt.Spec.ApplicationGeneration == before.Spec.ApplicationGeneration &&
		rt.Spec.Compression.Type == s.Compression {
		return nil
	}
	if err := Encode(&rt.Spec, entries, s.Compression); err != nil {
		return fmt.Errorf("resource tracker %s: %w", rt.Name, err)
	}
	patch := client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})
	if err := s.Client.Patch(ctx, rt, patch); err != nil {
		return fmt.Errorf("writing resource tracker %s: %w", rt.Name, err)
	}
	return nil
}

// Delete deletes a tracker; a tracker already gone is fine.
func (s *Store) Delete(ctx context.Context, rt *v1beta1.ResourceTracker) error {
	if err := s.Client.Delete(ctx, rt, client.Preconditions{UID: &rt.UID, ResourceVersion: &rt.ResourceVersion}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting resource tracker %s: %w", rt.Name, err)
	}
	return nil
}

// Annotate sets one annotation on a tracker, guarded by its
// resourceVersion.
func (s *Store) Annotate(ctx context.Context, rt *v1beta1.ResourceTracker, key, value string) error {
	if rt.Annotations[key] == value {
		return nil
	}
	before := rt.DeepCopy()
	if rt.Annotations == nil {
		rt.Annotations = map[string]string{}
	}
	rt.Annotations[key] = value
	if err := s.Client.Patch(ctx, rt, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("annotating resource tracker %s: %w", rt.Name, err)
	}
	return nil
}
