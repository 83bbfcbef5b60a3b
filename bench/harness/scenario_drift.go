package harness

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

// driftTimeout bounds one repair: three missed intervals means the
// controller does not repair at all.
const driftTimeoutIntervals = 3

// drift deletes the Deployment of one app again and again and times how
// long the controller takes to create it again. Steward runs in timer
// mode (the app's reconcile-interval annotation); the baseline repairs on
// the delete event.
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
	res := DriftResult{Controller: s.controller.Name, Interval: cfg.Interval}
	for i := range cfg.Deletes {
		// A pause uniform over one interval lands each deletion at a
		// random point of a timer-driven controller's cycle.
		pause := time.Duration(rng.Int64N(int64(cfg.Interval.D())))
		if err := sleep(ctx, pause); err != nil {
			return err
		}
		d, err := deleteAndWait(ctx, s.cp.Client, key, driftTimeoutIntervals*cfg.Interval.D())
		if err != nil {
			return fmt.Errorf("repair %d: %w", i+1, err)
		}
		res.Repairs = append(res.Repairs, d.Seconds())
		s.progress("repair %d: Deployment back after %s", i+1, d.Round(time.Millisecond))
	}
	r.res.Drift = append(r.res.Drift, res)
	return nil
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
