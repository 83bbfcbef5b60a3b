package tracker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

// rescueName names the rescue copy of the tracker named name. Tracker
// names always hold dots (Name), so no tracker is ever named like this, and
// the length stays well under the limit whatever the original's.
func rescueName(name string) string {
	sum := sha256.Sum256([]byte(name))
	return "rescue-" + hex.EncodeToString(sum[:16])
}

// rescued is what a rescue copy records of the tracker it stands for.
type rescued struct {
	Name        string            `json:"name"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Recreate replaces a tracker someone deleted by hand with a copy of it:
// same name, labels, annotations and entries, returned. A name cannot be
// reused while its object exists, so the doomed tracker must be let go
// before its copy is created. To lose nothing if Steward stops in between,
// a rescue copy (same spec, rescue labels instead of the app labels) is
// written first and removed once the copy exists; RestoreRescued finishes
// the job on the next pass otherwise.
func (s *Store) Recreate(ctx context.Context, rt *v1beta1.ResourceTracker) (*v1beta1.ResourceTracker, error) {
	if err := s.writeRescue(ctx, rt); err != nil {
		return nil, err
	}
	if err := s.Release(ctx, rt.DeepCopy()); err != nil {
		return nil, err
	}
	fresh := &v1beta1.ResourceTracker{
		ObjectMeta: metav1.ObjectMeta{
			Name:        rt.Name,
			Labels:      rt.Labels,
			Annotations: rt.Annotations,
			Finalizers:  []string{v1beta1.FinalizerTrackerProtection},
		},
		Spec: *rt.Spec.DeepCopy(),
	}
	if err := s.createCopy(ctx, fresh); err != nil {
		return nil, err
	}
	if err := s.dropRescue(ctx, rt.Name); err != nil {
		return nil, err
	}
	return fresh, nil
}

// createCopy creates a tracker, retrying transient failures at once: its
// entries may exist only in memory and in a rescue copy.
func (s *Store) createCopy(ctx context.Context, rt *v1beta1.ResourceTracker) error {
	err := retry.OnError(retry.DefaultBackoff, func(err error) bool { return !apierrors.IsAlreadyExists(err) }, func() error {
		return s.Client.Create(ctx, rt)
	})
	if err != nil {
		return fmt.Errorf("re-creating resource tracker %s: %w", rt.Name, err)
	}
	return nil
}

// writeRescue writes (or overwrites) the rescue copy of rt.
func (s *Store) writeRescue(ctx context.Context, rt *v1beta1.ResourceTracker) error {
	of, err := json.Marshal(rescued{Name: rt.Name, Labels: rt.Labels, Annotations: rt.Annotations})
	if err != nil {
		return err
	}
	copy := &v1beta1.ResourceTracker{
		ObjectMeta: metav1.ObjectMeta{
			Name: rescueName(rt.Name),
			Labels: s.stampShard(map[string]string{
				v1beta1.LabelRescueOfApp:       rt.Labels[v1beta1.LabelAppName],
				v1beta1.LabelRescueOfNamespace: rt.Labels[v1beta1.LabelAppNamespace],
			}),
			Annotations: map[string]string{v1beta1.AnnotationRescueOf: string(of)},
		},
		Spec: *rt.Spec.DeepCopy(),
	}
	err = s.Client.Create(ctx, copy)
	if apierrors.IsAlreadyExists(err) {
		// Left by a pass that stopped before it could remove it: the
		// doomed tracker still exists, so this copy is the newer one.
		old := &v1beta1.ResourceTracker{}
		if err = s.reader().Get(ctx, client.ObjectKeyFromObject(copy), old); err == nil {
			copy.ResourceVersion = old.ResourceVersion
			err = s.Client.Update(ctx, copy)
		}
	}
	if err != nil {
		return fmt.Errorf("writing the rescue copy of resource tracker %s: %w", rt.Name, err)
	}
	return nil
}

// dropRescue deletes the rescue copy of the tracker named name.
func (s *Store) dropRescue(ctx context.Context, name string) error {
	copy := &v1beta1.ResourceTracker{ObjectMeta: metav1.ObjectMeta{Name: rescueName(name)}}
	if err := s.Client.Delete(ctx, copy); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the rescue copy of resource tracker %s: %w", name, err)
	}
	return nil
}

// KeepRescue writes the rescue copy of a tracker that is being deleted
// while another finalizer than Steward's holds it, so that it can be
// re-created once it is gone (RestoreRescued).
func (s *Store) KeepRescue(ctx context.Context, rt *v1beta1.ResourceTracker) error {
	return s.writeRescue(ctx, rt)
}

// RestoreRescued finishes re-creations a stopped pass left half done: for
// every rescue copy of the Application's trackers, the tracker is created
// from it when it does not exist (read from the API server, never from a
// cache), and the copy is removed once the tracker exists and is not being
// deleted. It returns the names of the trackers it created.
func (s *Store) RestoreRescued(ctx context.Context, app AppRef) ([]string, error) {
	return s.restoreRescued(ctx, s.Client, true, app)
}

// RestoreRescuedFresh is RestoreRescued reading the rescue copies from the
// API server: a copy the cache does not hold (not yet seen, or another
// shard's) is restored too.
func (s *Store) RestoreRescuedFresh(ctx context.Context, app AppRef) ([]string, error) {
	return s.restoreRescued(ctx, s.reader(), s.Reader == nil, app)
}

func (s *Store) restoreRescued(ctx context.Context, r client.Reader, cached bool, app AppRef) ([]string, error) {
	var list v1beta1.ResourceTrackerList
	if err := r.List(ctx, &list, s.selectApp(cached, v1beta1.LabelRescueOfNamespace, v1beta1.LabelRescueOfApp, app)...); err != nil {
		return nil, fmt.Errorf("listing rescued resource trackers of %s/%s: %w", app.Namespace, app.Name, err)
	}
	return s.restoreCopies(ctx, list.Items)
}

// restoreCopies is RestoreRescued over the rescue copies listed.
func (s *Store) restoreCopies(ctx context.Context, copies []v1beta1.ResourceTracker) ([]string, error) {
	var restored []string
	for i := range copies {
		copy := &copies[i]
		var of rescued
		if err := json.Unmarshal([]byte(copy.Annotations[v1beta1.AnnotationRescueOf]), &of); err != nil || of.Name == "" {
			// Not one Steward wrote: left alone, and it blocks nothing.
			continue
		}
		live := &v1beta1.ResourceTracker{}
		err := s.reader().Get(ctx, client.ObjectKey{Name: of.Name}, live)
		switch {
		case apierrors.IsNotFound(err):
			fresh := &v1beta1.ResourceTracker{
				ObjectMeta: metav1.ObjectMeta{
					Name: of.Name, Labels: of.Labels, Annotations: of.Annotations,
					Finalizers: []string{v1beta1.FinalizerTrackerProtection},
				},
				Spec: *copy.Spec.DeepCopy(),
			}
			if err := s.createCopy(ctx, fresh); err != nil {
				return restored, err
			}
			restored = append(restored, of.Name)
		case err != nil:
			return restored, fmt.Errorf("reading resource tracker %s: %w", of.Name, err)
		case !live.DeletionTimestamp.IsZero():
			// Still being deleted: held by Steward's finalizer (Recreate
			// will overwrite the copy) or by someone else's (a foreground
			// deletion, say), in which case the tracker is re-created
			// from this copy once it is gone.
			continue
		}
		if err := s.dropRescue(ctx, of.Name); err != nil {
			return restored, err
		}
	}
	return restored, nil
}

// DropRescued deletes the rescue copies of a gone Application's trackers.
func (s *Store) DropRescued(ctx context.Context, app AppRef) error {
	return s.Client.DeleteAllOf(ctx, &v1beta1.ResourceTracker{}, client.MatchingLabels{
		v1beta1.LabelRescueOfApp:       app.Name,
		v1beta1.LabelRescueOfNamespace: app.Namespace,
	})
}

// reader reads straight from the API server when the Store has a Reader.
func (s *Store) reader() client.Reader {
	if s.Reader != nil {
		return s.Reader
	}
	return s.Client
}
