package tracker

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

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
	// Shard, when set, is written as the shard label
	// (v1beta1.LabelScheduledShardID) on every tracker this Store
	// creates, so that a replica's label-selected cache holds its
	// shard's trackers only.
	Shard string
	// Indexed says Client reads from a cache with IndexApp registered:
	// lists go through it.
	Indexed bool
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
	return s.list(ctx, s.Client, true, app)
}

// ListFresh is List read straight from the API server: a tracker created
// a moment ago is never missed.
func (s *Store) ListFresh(ctx context.Context, app AppRef) ([]v1beta1.ResourceTracker, error) {
	if s.Reader == nil {
		return s.List(ctx, app)
	}
	return s.list(ctx, s.Reader, false, app)
}

func (s *Store) list(ctx context.Context, r client.Reader, cached bool, app AppRef) ([]v1beta1.ResourceTracker, error) {
	var list v1beta1.ResourceTrackerList
	if err := r.List(ctx, &list, s.selectApp(cached, v1beta1.LabelAppNamespace, v1beta1.LabelAppName, app)...); err != nil {
		return nil, fmt.Errorf("listing resource trackers of %s/%s: %w", app.Namespace, app.Name, err)
	}
	items := list.Items
	SortOldestFirst(items)
	return items, nil
}

// ListRestoring is List after RestoreRescued, reading the cache once for
// both when it is indexed: an Application's trackers and its rescue copies
// share IndexApp's key, and their labels tell them apart. It returns the
// trackers, and the names of those it re-created from rescue copies (the
// cache has not seen them yet: read them with ListFresh).
func (s *Store) ListRestoring(ctx context.Context, app AppRef) ([]v1beta1.ResourceTracker, []string, error) {
	if !s.Indexed {
		restored, err := s.RestoreRescued(ctx, app)
		if err != nil {
			return nil, restored, err
		}
		items, err := s.List(ctx, app)
		return items, restored, err
	}
	var list v1beta1.ResourceTrackerList
	if err := s.Client.List(ctx, &list, client.MatchingFields{IndexApp: app.Namespace + "/" + app.Name}); err != nil {
		return nil, nil, fmt.Errorf("listing resource trackers of %s/%s: %w", app.Namespace, app.Name, err)
	}
	var items, copies []v1beta1.ResourceTracker
	for i := range list.Items {
		rt := &list.Items[i]
		if labelled(rt, v1beta1.LabelRescueOfNamespace, v1beta1.LabelRescueOfApp, app) {
			copies = append(copies, *rt.DeepCopy())
		}
		if labelled(rt, v1beta1.LabelAppNamespace, v1beta1.LabelAppName, app) {
			items = append(items, *rt)
		}
	}
	restored, err := s.restoreCopies(ctx, copies)
	if err != nil {
		return nil, restored, err
	}
	SortOldestFirst(items)
	return items, restored, nil
}

// SortOldestFirst orders an Application's trackers oldest first: by the
// generation they were recorded at, then (publishVersions published
// without a spec change share a generation) by the number of the
// ApplicationRevision they are labelled with, then by creation time and
// name, so that the order never depends on how a list came back.
func SortOldestFirst(items []v1beta1.ResourceTracker) {
	sort.SliceStable(items, func(i, j int) bool {
		a, b := &items[i], &items[j]
		if a.Spec.ApplicationGeneration != b.Spec.ApplicationGeneration {
			return a.Spec.ApplicationGeneration < b.Spec.ApplicationGeneration
		}
		na, oka := RevisionNumber(a.Labels[v1beta1.LabelAppRevision])
		nb, okb := RevisionNumber(b.Labels[v1beta1.LabelAppRevision])
		if oka && okb && na != nb {
			return na < nb
		}
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return a.Name < b.Name
	})
}

// RevisionNumber reads the revision number back from an
// ApplicationRevision's name (<app>-v<n>, as a tracker's
// app.oam.dev/appRevision label names it), false when the name does not
// end in -v<n>.
func RevisionNumber(name string) (int64, bool) {
	i := strings.LastIndex(name, "-v")
	if i < 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(name[i+2:], 10, 64)
	if err != nil || n < 1 {
		return 0, false
	}
	return n, true
}

// Entries decodes the entries of a tracker. A compressed tracker read
// from the API server is decoded once per resourceVersion while it stays
// in a small cache: the phases of a pass all read the same trackers.
// The slice returned is the caller's to change.
func Entries(rt *v1beta1.ResourceTracker) ([]v1beta1.ManagedResource, error) {
	if rt.Spec.Compression.Type == v1beta1.CompressionNone || rt.Spec.Compression.Data == "" {
		// A copy: callers change entries before saving them, and the
		// save's patch is computed against the tracker as it was.
		return slices.Clone(rt.Spec.ManagedResources), nil
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
	return s.SaveMarked(ctx, rt, entries, generation, nil)
}

// SaveMarked is Save that also sets the annotations of marks in the same
// write (an empty value removes the annotation), so that a mark and the
// entries it is about are never written apart.
func (s *Store) SaveMarked(ctx context.Context, rt *v1beta1.ResourceTracker, entries []v1beta1.ManagedResource, generation int64, marks map[string]string) error {
	before := rt.DeepCopy()
	if generation != 0 {
		rt.Spec.ApplicationGeneration = generation
	}
	marked := setMarks(rt, marks)
	current, err := Entries(rt)
	if err == nil && equality.Semantic.DeepEqual(current, entries) && !marked &&
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

// setMarks sets (or, for an empty value, removes) annotations on rt and
// reports whether anything changed.
func setMarks(rt *v1beta1.ResourceTracker, marks map[string]string) bool {
	changed := false
	for k, v := range marks {
		old, ok := rt.Annotations[k]
		switch {
		case v == "" && ok:
			delete(rt.Annotations, k)
			changed = true
		case v != "" && old != v:
			if rt.Annotations == nil {
				rt.Annotations = map[string]string{}
			}
			rt.Annotations[k] = v
			changed = true
		}
	}
	return changed
}

// Delete deletes a tracker; a tracker already gone is fine. Steward's
// protection finalizer is removed first, so the tracker goes at once.
func (s *Store) Delete(ctx context.Context, rt *v1beta1.ResourceTracker) error {
	if err := s.Release(ctx, rt); err != nil {
		return err
	}
	if err := s.Client.Delete(ctx, rt, client.Preconditions{UID: &rt.UID, ResourceVersion: &rt.ResourceVersion}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting resource tracker %s: %w", rt.Name, err)
	}
	return nil
}

// Protect adds Steward's protection finalizer to a tracker written before
// trackers carried it, or by KubeVela: KubeVela's finalizer is replaced in
// the same write, since no KubeVela runs to remove it. A tracker being
// deleted cannot take new finalizers and is left as it is.
func (s *Store) Protect(ctx context.Context, rt *v1beta1.ResourceTracker) error {
	if (controllerutil.ContainsFinalizer(rt, v1beta1.FinalizerTrackerProtection) &&
		!controllerutil.ContainsFinalizer(rt, v1beta1.FinalizerKubeVelaTracker)) || !rt.DeletionTimestamp.IsZero() {
		return nil
	}
	before := rt.DeepCopy()
	controllerutil.AddFinalizer(rt, v1beta1.FinalizerTrackerProtection)
	controllerutil.RemoveFinalizer(rt, v1beta1.FinalizerKubeVelaTracker)
	if err := s.Client.Patch(ctx, rt, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("protecting resource tracker %s: %w", rt.Name, err)
	}
	return nil
}

// Release removes Steward's protection finalizer, and KubeVela's from a
// tracker KubeVela wrote; a tracker that was being deleted then goes. A
// tracker already gone is fine.
func (s *Store) Release(ctx context.Context, rt *v1beta1.ResourceTracker) error {
	if !controllerutil.ContainsFinalizer(rt, v1beta1.FinalizerTrackerProtection) &&
		!controllerutil.ContainsFinalizer(rt, v1beta1.FinalizerKubeVelaTracker) {
		return nil
	}
	before := rt.DeepCopy()
	controllerutil.RemoveFinalizer(rt, v1beta1.FinalizerTrackerProtection)
	controllerutil.RemoveFinalizer(rt, v1beta1.FinalizerKubeVelaTracker)
	if err := s.Client.Patch(ctx, rt, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("releasing resource tracker %s: %w", rt.Name, err)
	}
	return nil
}

// Doomed reports whether someone else is deleting a tracker Steward
// protects: it has a deletion timestamp and still Steward's finalizer.
func Doomed(rt *v1beta1.ResourceTracker) bool {
	return !rt.DeletionTimestamp.IsZero() && controllerutil.ContainsFinalizer(rt, v1beta1.FinalizerTrackerProtection)
}

// Annotate sets one annotation on a tracker, guarded by its
// resourceVersion; an empty value removes it.
func (s *Store) Annotate(ctx context.Context, rt *v1beta1.ResourceTracker, key, value string) error {
	before := rt.DeepCopy()
	if !setMarks(rt, map[string]string{key: value}) {
		return nil
	}
	if err := s.Client.Patch(ctx, rt, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("annotating resource tracker %s: %w", rt.Name, err)
	}
	return nil
}
