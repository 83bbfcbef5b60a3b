package sharding

import (
	"context"
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
	apps map[types.NamespacedName]string
	kick chan struct{}
}

var applications = schema.GroupVersionResource{Group: v1beta1.GroupVersion.Group, Version: v1beta1.GroupVersion.Version, Resource: "applications"}

// Start watches Applications and schedules until ctx is done.
func (s *Scheduler) Start(ctx context.Context) error {
	s.apps = map[types.NamespacedName]string{}
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
	s.apps[key] = id
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
		if id := l.Labels[LabelShardID]; id != "" && l.Name == LeaseName(id) {
			expiry[id] = expiryOf(l)
		}
	}
	s.mu.Lock()
	apps := make(map[types.NamespacedName]string, len(s.apps))
	unassigned := 0
	for k, v := range s.apps {
		apps[k] = v
		if v == "" {
			unassigned++
		}
	}
	s.mu.Unlock()
	moves := plan(apps, expiry, s.Options, now)
	if len(moves) == 0 && unassigned > 0 {
		s.Log.Info("No live shard to assign Applications to", "unassigned", unassigned, "schedulableShards", s.Options.SchedulableShards)
	}
	for _, m := range moves {
		if err := s.assign(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

// assign writes the shard label of one Application. A move away from a
// dead shard is guarded by the label read: an Application someone
// assigned meanwhile is left as it is.
func (s *Scheduler) assign(ctx context.Context, m move) error {
	app := &metav1.PartialObjectMetadata{}
	app.SetGroupVersionKind(v1beta1.GroupVersion.WithKind("Application"))
	app.Namespace, app.Name = m.App.Namespace, m.App.Name
	patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"metadata":{"labels":{%q:%q}}}`, LabelScheduledShardID, m.To))
	if m.From != "" {
		path := "/metadata/labels/" + strings.ReplaceAll(LabelScheduledShardID, "/", "~1")
		patch = client.RawPatch(types.JSONPatchType, fmt.Appendf(nil, `[{"op":"test","path":%q,"value":%q},{"op":"replace","path":%q,"value":%q}]`, path, m.From, path, m.To))
	}
	err := s.Client.Patch(ctx, app, patch)
	if apierrors.IsNotFound(err) || apierrors.IsInvalid(err) {
		// Gone, or assigned meanwhile (the test failed): the informer
		// brings the change.
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
	if _, ok := s.apps[m.App]; ok {
		s.apps[m.App] = m.To
	}
	s.mu.Unlock()
	return nil
}
