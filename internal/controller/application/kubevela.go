package application

// Taking over from KubeVela (docs/migration.md). An Application KubeVela
// delivered, and that Steward reconciles after KubeVela was stopped, comes
// with what KubeVela left: its resource trackers (the same labels and UID
// as Steward's, other names, KubeVela's finalizer), its workflow context
// ConfigMap and its condition types. Steward takes the trackers' records
// over and removes the rest, without deleting any object the Application
// still renders:
//
//   - KubeVela's finalizer on its trackers is replaced with Steward's
//     (rescueTrackers): nothing else would ever remove it;
//   - its versioned and component-revision trackers are older versions
//     (loadTrackers): what they list that the live version does not is
//     collected as garbage, then they are deleted (recycle);
//   - what its root tracker lists is adopted into Steward's root tracker
//     (kept, metadata only, until the Application is deleted), then it is
//     deleted;
//   - its workflow context ConfigMap, workflow-<app>-context, owned by the
//     Application, is deleted;
//   - its condition types Steward does not write are dropped from the
//     status.
//
// Each decision is logged at V(1), and the pass emits one
// TakenOverFromKubeVela event naming them.

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/application/decisionlog"
	"github.com/steward-oam/steward/internal/controller/application/facts"
	"github.com/steward-oam/steward/internal/tracker"
)

// adoptKubeVelaRoots records what KubeVela's root trackers list in
// Steward's root tracker, metadata only (kept until the Application is
// deleted, as KubeVela kept it, unless a version records it with a
// manifest), then deletes them. It runs once the live version is
// recorded and applied, before garbage is collected, so that nothing they
// list is ever unrecorded or collected.
func (r *Reconciler) adoptKubeVelaRoots(ctx context.Context, s *facts.Pass) error {
	for i := range s.KubeVelaRoots {
		old := &s.KubeVelaRoots[i]
		theirs, err := tracker.Entries(old)
		if err != nil {
			return err
		}
		var ours []v1beta1.ManagedResource
		if s.Root != nil {
			if ours, err = tracker.Entries(s.Root); err != nil {
				return err
			}
		}
		have := tracker.IndexOf(ours)
		adopted := 0
		for _, e := range theirs {
			if _, ok := have[tracker.KeyOf(e)]; ok || e.Deleted {
				continue
			}
			e.Data = nil
			ours = append(ours, e)
			adopted++
		}
		if adopted > 0 {
			if s.Root == nil {
				rt, err := r.Trackers.Record(ctx, tracker.RefOf(s.App), tracker.Root(), s.App.Generation, ours, tracker.KeepMissing, nil)
				if err != nil {
					return err
				}
				s.Root = rt
			} else if err := r.Trackers.Save(ctx, s.Root, ours, 0); err != nil {
				return err
			}
		}
		if err := r.Trackers.Delete(ctx, old); err != nil {
			return err
		}
		tookOver(ctx, s, "Adopted KubeVela's root resource tracker into Steward's and deleted it", fmt.Sprintf("adopted the %d objects of KubeVela's root resource tracker %s, then deleted it", adopted, old.Name),
			"resourceTracker", old.Name, "objects", adopted)
	}
	s.KubeVelaRoots = nil
	return nil
}

// deleteKubeVelaContext deletes KubeVela's workflow context ConfigMap of
// the Application, workflow-<app>-context in its namespace: KubeVela's
// record of a workflow run, which Steward does not read. Only a ConfigMap
// the Application owns (an owner reference with its UID) is deleted, and
// only with that UID as a precondition. It is looked for only in a pass
// that found KubeVela's trackers: a failure is logged and left, since the
// ConfigMap goes with the Application anyway (its owner reference).
func (r *Reconciler) deleteKubeVelaContext(ctx context.Context, s *facts.Pass) {
	log := ctrl.LoggerFrom(ctx)
	c, err := s.Clients.GetClient(ctx, v1beta1.ClusterLocal)
	if err != nil {
		log.V(decisionlog.Decision).Info("Left KubeVela's workflow context ConfigMap: no client for the hub", "error", err.Error())
		return
	}
	key := client.ObjectKey{Namespace: s.App.Namespace, Name: "workflow-" + s.App.Name + "-context"}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, key, cm); err != nil {
		if !apierrors.IsNotFound(err) {
			log.V(decisionlog.Decision).Info("Left KubeVela's workflow context ConfigMap: it could not be read", "configMap", key.Name, "error", err.Error())
		}
		return
	}
	owned := false
	for _, o := range cm.OwnerReferences {
		owned = owned || (o.UID == s.App.UID && o.Kind == "Application")
	}
	if !owned {
		log.V(decisionlog.Decision).Info("Left a ConfigMap named like KubeVela's workflow context: the Application does not own it", "configMap", key.Name)
		return
	}
	uid := cm.UID
	if err := c.Delete(ctx, cm, client.Preconditions{UID: &uid}); err != nil && !apierrors.IsNotFound(err) {
		log.V(decisionlog.Decision).Info("Left KubeVela's workflow context ConfigMap: deleting it failed", "configMap", key.Name, "error", err.Error())
		return
	}
	tookOver(ctx, s, "Deleted KubeVela's workflow context ConfigMap", "deleted KubeVela's workflow context ConfigMap "+key.Name, "configMap", key.Name)
}

// tookOver logs one decision about what KubeVela left and keeps its note
// for the pass's TakenOverFromKubeVela event.
func tookOver(ctx context.Context, s *facts.Pass, msg, note string, keysAndValues ...any) {
	ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info(msg, keysAndValues...)
	s.TakenOver = append(s.TakenOver, note)
}
