package scenario

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/bench/record"
)

// driftTimeoutIntervals bounds one repair: three missed intervals means the
// controller does not repair at all.
const driftTimeoutIntervals = 3

// drift damages the Deployment of one app again and again and times how
// long the controller takes to repair it: deletes (until a Deployment of
// that name exists again) and edits of spec.replicas (until it is back to
// what the manifest sets), taking turns. Steward in timer mode repairs on
// the app's reconcile-interval; in watch mode (--drift-detection=watch)
// and the baseline on the watch event.
func (r *runner) drift(ctx context.Context, s *session) error {
	cfg := r.opts.Profile.Drift
	ann := map[string]string{v1beta1.AnnotationReconcileInterval: cfg.Interval.D().String()}
	if err := CreateApplications(ctx, s.cp.Client, benchNamespace, 1, ShapeOf(cfg.ResourcesPer), ann); err != nil {
		return err
	}
	if err := s.start(ctx); err != nil {
		return err
	}
	if _, err := WaitReady(ctx, s.cp.Client, benchNamespace, 1, 2*time.Minute); err != nil {
		return err
	}
	// The workload of the first component is named after it.
	key := client.ObjectKey{Namespace: benchNamespace, Name: AppName(0) + "-c0"}
	rng := rand.New(rand.NewPCG(7, uint64(len(s.controller.Name))))
	res := record.DriftResult{Controller: s.controller.Name, Interval: cfg.Interval}
	timeout := driftTimeoutIntervals * cfg.Interval.D()
	// A pause uniform over one interval lands each change at a random
	// point of a timer-driven controller's cycle.
	pause := func() error { return sleep(ctx, time.Duration(rng.Int64N(int64(cfg.Interval.D())))) }
	for i := range max(cfg.Deletes, cfg.Edits) {
		if i < cfg.Deletes {
			if err := pause(); err != nil {
				return err
			}
			d, err := deleteAndWait(ctx, s.cp.Client, key, timeout)
			if err != nil {
				return fmt.Errorf("delete %d: %w", i+1, err)
			}
			res.Repairs = append(res.Repairs, d.Seconds())
			s.progress("delete %d: Deployment back after %s", i+1, d.Round(time.Millisecond))
		}
		if i < cfg.Edits {
			if err := pause(); err != nil {
				return err
			}
			d, err := editAndWait(ctx, s.cp.Client, key, timeout)
			if err != nil {
				return fmt.Errorf("edit %d: %w", i+1, err)
			}
			res.Edits = append(res.Edits, d.Seconds())
			s.progress("edit %d: spec.replicas reverted after %s", i+1, d.Round(time.Millisecond))
		}
	}
	r.res.Drift = append(r.res.Drift, res)
	return nil
}

// DriftReplicas is added to the Deployment's spec.replicas by an edit of
// the drift scenario.
const DriftReplicas = 2

// editAndWait raises the Deployment's spec.replicas with a merge patch, as
// `kubectl scale` or an autoscaler would, and returns how long until a
// watch sees it back at the value it had.
func editAndWait(ctx context.Context, c client.WithWatch, key client.ObjectKey, timeout time.Duration) (time.Duration, error) {
	var list appsv1.DeploymentList
	sel := fields.OneTermEqualSelector("metadata.name", key.Name)
	if err := c.List(ctx, &list, client.InNamespace(key.Namespace), client.MatchingFieldsSelector{Selector: sel}); err != nil {
		return 0, err
	}
	if len(list.Items) != 1 {
		return 0, fmt.Errorf("deployment %s not found before editing it", key)
	}
	d := &list.Items[0]
	want := replicasOf(d)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	w, err := c.Watch(ctx, &appsv1.DeploymentList{}, client.InNamespace(key.Namespace), client.MatchingFieldsSelector{Selector: sel},
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	if err != nil {
		return 0, fmt.Errorf("watching deployment %s: %w", key, err)
	}
	defer w.Stop()
	patch := client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, want+DriftReplicas)))
	if err := c.Patch(ctx, d, patch); err != nil {
		return 0, fmt.Errorf("editing deployment %s: %w", key, err)
	}
	edited, editRV := time.Now(), d.ResourceVersion
	seen := false // the edit itself has come through the watch
	for {
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("spec.replicas of deployment %s not back to %d after %s", key, want, timeout)
		case ev, ok := <-w.ResultChan():
			if !ok {
				return 0, fmt.Errorf("watch of deployment %s ended", key)
			}
			got, isDeployment := ev.Object.(*appsv1.Deployment)
			if !isDeployment || ev.Type == watch.Deleted {
				continue
			}
			if got.ResourceVersion == editRV {
				seen = true
				continue
			}
			if seen && replicasOf(got) == want {
				return time.Since(edited), nil
			}
		}
	}
}

// replicasOf is spec.replicas, 1 when unset.
func replicasOf(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}

// deleteAndWait deletes the Deployment and returns how long until a new
// one with the same name exists.
func deleteAndWait(ctx context.Context, c client.WithWatch, key client.ObjectKey, timeout time.Duration) (time.Duration, error) {
	var list appsv1.DeploymentList
	sel := fields.OneTermEqualSelector("metadata.name", key.Name)
	if err := c.List(ctx, &list, client.InNamespace(key.Namespace), client.MatchingFieldsSelector{Selector: sel}); err != nil {
		return 0, err
	}
	if len(list.Items) != 1 {
		return 0, fmt.Errorf("deployment %s not found before deleting it", key)
	}
	old := list.Items[0].UID
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	w, err := c.Watch(ctx, &appsv1.DeploymentList{}, client.InNamespace(key.Namespace), client.MatchingFieldsSelector{Selector: sel},
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	if err != nil {
		return 0, fmt.Errorf("watching deployment %s: %w", key, err)
	}
	defer w.Stop()
	if err := c.Delete(ctx, &list.Items[0]); err != nil && !apierrors.IsNotFound(err) {
		return 0, fmt.Errorf("deleting deployment %s: %w", key, err)
	}
	deleted := time.Now()
	for {
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("deployment %s not back after %s", key, timeout)
		case ev, ok := <-w.ResultChan():
			if !ok {
				return 0, fmt.Errorf("watch of deployment %s ended", key)
			}
			d, isDeployment := ev.Object.(*appsv1.Deployment)
			if isDeployment && ev.Type == watch.Added && d.UID != old {
				return time.Since(deleted), nil
			}
		}
	}
}
