package tracker

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

// Missing says what Record does with entries a tracker had that the new
// desired set lacks.
type Missing int

const (
	// DeleteMissing marks them deleted: their objects are deleted and the
	// entries dropped once that is confirmed (versioned trackers).
	DeleteMissing Missing = iota
	// KeepMissing keeps them as metadata-only entries: StateKeep no longer
	// applies them, and they are deleted with the Application (the root
	// tracker, whose objects live as long as the Application).
	KeepMissing
)

// Record writes the desired entries into the tracker of kind k before
// anything is applied, creating the tracker when missing. Entries the
// tracker already had and desired lacks are kept, marked deleted: their
// objects are deleted by the caller and the entries dropped only once the
// deletion is confirmed, so nothing recorded is ever forgotten. A tracker
// left by an earlier Application of the same name (another UID) is taken
// over the same way. The annotations of marks are written with the
// entries, in the same write.
func (s *Store) Record(ctx context.Context, app AppRef, k Kind, generation int64, desired []v1beta1.ManagedResource, missing Missing, marks map[string]string) (*v1beta1.ResourceTracker, error) {
	name := Name(app.Name, app.Namespace, k)
	rt := &v1beta1.ResourceTracker{}
	err := s.Client.Get(ctx, client.ObjectKey{Name: name}, rt)
	if apierrors.IsNotFound(err) {
		return s.create(ctx, app, k, generation, desired, marks)
	}
	if err != nil {
		return nil, fmt.Errorf("reading resource tracker %s: %w", name, err)
	}
	existing, err := Entries(rt)
	if err != nil {
		return nil, err
	}
	entries := append([]v1beta1.ManagedResource(nil), desired...)
	want := IndexOf(desired)
	for _, e := range existing {
		if _, ok := want[KeyOf(e)]; ok {
			continue
		}
		if missing == KeepMissing {
			e.Data = nil
		} else {
			e.Deleted = true
		}
		entries = append(entries, e)
	}
	if rt.Labels[v1beta1.LabelAppUID] != app.UID {
		// The earlier Application's revision is not this one's.
		before := rt.DeepCopy()
		rt.Labels[v1beta1.LabelAppUID] = app.UID
		delete(rt.Labels, v1beta1.LabelAppRevision)
		if k.Revision != "" {
			rt.Labels[v1beta1.LabelAppRevision] = k.Revision
		}
		if err := s.Client.Patch(ctx, rt, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
			return nil, fmt.Errorf("taking over resource tracker %s: %w", name, err)
		}
	}
	if err := s.SaveMarked(ctx, rt, entries, generation, marks); err != nil {
		return nil, err
	}
	return rt, nil
}

func (s *Store) create(ctx context.Context, app AppRef, k Kind, generation int64, entries []v1beta1.ManagedResource, marks map[string]string) (*v1beta1.ResourceTracker, error) {
	name := Name(app.Name, app.Namespace, k)
	labels := Labels(app.Name, app.Namespace, k)
	labels[v1beta1.LabelAppUID] = app.UID
	if k.Revision != "" {
		labels[v1beta1.LabelAppRevision] = k.Revision
	}
	s.stampShard(labels)
	var annotations map[string]string
	if k.PublishVersion != "" {
		annotations = map[string]string{v1beta1.AnnotationPublishVersion: k.PublishVersion}
	}
	for key, v := range marks {
		if v == "" {
			continue
		}
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[key] = v
	}
	rt := &v1beta1.ResourceTracker{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: annotations,
			Finalizers: []string{v1beta1.FinalizerTrackerProtection}},
		Spec: v1beta1.ResourceTrackerSpec{Type: k.Type, ApplicationGeneration: generation},
	}
	if err := Encode(&rt.Spec, entries, s.Compression); err != nil {
		return nil, fmt.Errorf("resource tracker %s: %w", name, err)
	}
	if err := s.Client.Create(ctx, rt); err != nil {
		return nil, fmt.Errorf("creating resource tracker %s: %w", name, err)
	}
	return rt, nil
}
