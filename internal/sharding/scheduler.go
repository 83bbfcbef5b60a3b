package sharding

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

// Scheduler runs on the master shard: it assigns every unlabelled
// Application to the live shard with the fewest, and moves the
// Applications of a shard whose Lease stayed expired past the grace
// period. It watches Applications through a metadata-only informer that
// keeps each one's name and shard label and nothing else (about 200 bytes
// per Application), and reads the Leases on each round.
type Scheduler struct {
	// Client writes the shard labels and reads the Leases (never cached).
	Client   client.Client
	Metadata metadata.Interface
	Options  Options
	Log      logr.Logger

	mu   sync.Mutex
	apps map[types.NamespacedName]app
	kick chan struct{}
	// seen is, per shard, the last renewal read from its Lease and when
	// this process first read it: a shard is judged by the master's own
	// clock, never by the time another replica wrote.
	seen map[string]renewal
}

// app is what the scheduler keeps of an Application.
type app struct {
	shard           string
	resourceVersion string
}

// renewal is a shard's last Lease renewal as the master saw it.
type renewal struct {
	renewed  time.Time
	duration time.Duration
	seenAt   time.Time
}

var applications = schema.GroupVersionResource{Group: v1beta1.GroupVersion.Group, Version: v1beta1.GroupVersion.Version, Resource: "applications"}

// Start watches Applications and schedules until ctx is done.
func (s *Scheduler) Start(ctx context.Context) error {
	s.apps = map[types.NamespacedName]app{}
	s.seen = map[string]renewal{}
	s.kick = make(chan struct{}, 1)
	inf := metadatainformer.NewFilteredMetadataInformer(s.Metadata, applications, metav1.NamespaceAll, 0, toolscache.Indexers{}, nil).Informer()
	if err := inf.SetTransform(slim); err != nil {
		return err
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.observe(obj, false) },
		UpdateFunc: func(_, obj any) { s.observe(obj, false) },
		DeleteFunc: func(obj any) { s.observe(obj, true) },
	}); err != nil {
		return err
	}
	go inf.RunWithContext(ctx)
	if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return nil
	}
	// Shards started with the master renew their Leases within one
	// period: the first round waits for them, so that the master does not
	// take every Application for itself.
	select {
	case <-ctx.Done():
		return nil
	case <-time.After(s.Options.RenewPeriod):
	}
	t := time.NewTicker(s.Options.RenewPeriod)
	defer t.Stop()
	for {
		if err := s.round(ctx, time.Now()); err != nil && ctx.Err() == nil {
			s.Log.Error(err, "Scheduling Applications to shards failed; retrying")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-s.kick:
		}
	}
}

// slim keeps of an Application's metadata only what scheduling reads.
func slim(obj any) (any, error) {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	out := &metav1.PartialObjectMetadata{TypeMeta: m.TypeMeta}
	out.Name, out.Namespace, out.ResourceVersion = m.Name, m.Namespace, m.ResourceVersion
	if id, ok := m.Labels[LabelScheduledShardID]; ok {
		out.Labels = map[string]string{LabelScheduledShardID: id}
	}
	return out, nil
}

func (s *Scheduler) observe(obj any, deleted bool) {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return
	}
	key := types.NamespacedName{Namespace: m.Namespace, Name: m.Name}
	s.mu.Lock()
	defer s.mu.Unlock()
	if deleted {
		delete(s.apps, key)
		return
	}
	id := m.Labels[LabelScheduledShardID]
	s.apps[key] = app{shard: id, resourceVersion: m.ResourceVersion}
	if id == "" {
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
}

// round reads the Leases and applies one plan.
func (s *Scheduler) round(ctx context.Context, now time.Time) error {
	var leases coordinationv1.LeaseList
	if err := s.Client.List(ctx, &leases, client.InNamespace(s.Options.LeaseNamespace), client.HasLabels{LabelShardID}); err != nil {
		return fmt.Errorf("listing shard leases: %w", err)
	}
	expiry := map[string]time.Time{}
	for i := range leases.Items {
		l := &leases.Items[i]
		id := l.Labels[LabelShardID]
		if id == "" || l.Name != LeaseName(id) {
			continue
		}
		r := renewal{seenAt: now, duration: s.Options.LeaseDuration}
		if l.Spec.RenewTime != nil {
			r.renewed = l.Spec.RenewTime.Time
		}
		if l.Spec.LeaseDurationSeconds != nil {
			r.duration = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
		}
		if prev, ok := s.seen[id]; ok && prev.renewed.Equal(r.renewed) {
			r.seenAt = prev.seenAt
		}
		s.seen[id] = r
		expiry[id] = r.seenAt.Add(r.duration)
	}
	s.mu.Lock()
	apps := make(map[types.NamespacedName]string, len(s.apps))
	versions := make(map[types.NamespacedName]string, len(s.apps))
	unassigned := 0
	for k, a := range s.apps {
		apps[k] = a.shard
		versions[k] = a.resourceVersion
		if a.shard == "" {
			unassigned++
		}
	}
	s.mu.Unlock()
	moves := plan(apps, expiry, s.Options, now)
	if len(moves) == 0 && unassigned > 0 {
		s.Log.Info("No live shard to assign Applications to", "unassigned", unassigned, "schedulableShards", s.Options.SchedulableShards)
	}
	var errs []error
	for _, m := range moves {
		if err := s.assign(ctx, m, versions[m.App]); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// assign writes the shard label of one Application, guarded by what the
// scheduler read: an unassigned Application by its resourceVersion, a
// move away from a dead shard by a test of the old label. An Application
// someone assigned (or changed) meanwhile is left as it is, and the
// informer brings the change.
func (s *Scheduler) assign(ctx context.Context, m move, resourceVersion string) error {
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(v1beta1.GroupVersion.WithKind("Application"))
	obj.Namespace, obj.Name = m.App.Namespace, m.App.Name
	patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"metadata":{"resourceVersion":%q,"labels":{%q:%q}}}`,
		resourceVersion, LabelScheduledShardID, m.To))
	if m.From != "" {
		path := "/metadata/labels/" + strings.ReplaceAll(LabelScheduledShardID, "/", "~1")
		patch = client.RawPatch(types.JSONPatchType, fmt.Appendf(nil, `[{"op":"test","path":%q,"value":%q},{"op":"replace","path":%q,"value":%q}]`, path, m.From, path, m.To))
	}
	err := s.Client.Patch(ctx, obj, patch)
	if apierrors.IsNotFound(err) || apierrors.IsInvalid(err) || apierrors.IsConflict(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("assigning application %s to shard %s: %w", m.App, m.To, err)
	}
	reason := "unassigned"
	if m.From != "" {
		reason = "shard " + m.From + " is gone"
	}
	s.Log.V(1).Info("Assigned Application to shard", "application", m.App.String(), "shard", m.To, "from", m.From, "reason", reason)
	s.mu.Lock()
	if a, ok := s.apps[m.App]; ok && a.shard == m.From {
		s.apps[m.App] = app{shard: m.To, resourceVersion: obj.ResourceVersion}
	}
	s.mu.Unlock()
	return nil
}
