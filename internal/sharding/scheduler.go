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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

// Scheduler runs on the master shard: it assigns every unlabelled
// Application to the live shard with the fewest, and moves the
// Applications of a shard whose Lease stayed expired past the grace
// period. It lists and watches Applications metadata-only through a
// client-go Reflector into a map of its own that keeps each one's name,
// shard label and resourceVersion and nothing else (about 150 bytes per
// Application; an informer would keep a whole ObjectMeta and an index key
// beside it), and reads the Leases on each round.
type Scheduler struct {
	// Client writes the shard labels and reads the Leases (never cached).
	Client   client.Client
	Metadata metadata.Interface
	Options  Options
	Log      logr.Logger

	mu   sync.Mutex
	apps map[types.NamespacedName]app
	// synced is closed by the first list handed over.
	synced chan struct{}
	kick   chan struct{}
	// seen is, per shard, the last renewal read from its Lease and when
	// this process first read it: a shard is judged by the master's own
	// clock, never by the time another replica wrote.
	seen map[string]renewal
	// ids interns shard ids, so that the Applications of one shard share
	// one string.
	ids map[string]string
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
	s.ids = map[string]string{}
	s.kick = make(chan struct{}, 1)
	s.synced = make(chan struct{})
	resource := s.Metadata.Resource(applications).Namespace(metav1.NamespaceAll)
	r := toolscache.NewReflectorWithOptions(toolscache.ToListWatcherWithWatchListSemantics(&toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return resource.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return resource.Watch(ctx, o)
		},
	}, s.Metadata), &metav1.PartialObjectMetadata{}, (*schedulerStore)(s), toolscache.ReflectorOptions{Name: "sharding scheduler", TypeDescription: applications.String()})
	go r.RunWithContext(ctx)
	select {
	case <-ctx.Done():
		return nil
	case <-s.synced:
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

// schedulerStore is the Reflector's store: the Scheduler's map of
// Applications. The Reflector calls it from its one goroutine.
type schedulerStore Scheduler

var _ toolscache.TransformingStore = (*schedulerStore)(nil)

// entry returns the key and what the scheduler keeps of an Application
// the reflector hands over. Called with mu held.
func (st *schedulerStore) entry(obj any) (types.NamespacedName, app, bool) {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return types.NamespacedName{}, app{}, false
	}
	id := m.Labels[LabelScheduledShardID]
	if interned, ok := st.ids[id]; ok {
		id = interned
	} else {
		st.ids[id] = id
	}
	return types.NamespacedName{Namespace: m.Namespace, Name: m.Name}, app{shard: id, resourceVersion: m.ResourceVersion}, true
}

// Add records an Application the watch reports added.
func (st *schedulerStore) Add(obj any) error { return st.Update(obj) }

// Update records an Application the watch reports added or modified; an
// unlabelled one wakes the scheduler.
func (st *schedulerStore) Update(obj any) error {
	st.mu.Lock()
	k, a, ok := st.entry(obj)
	if ok {
		st.apps[k] = a
	}
	st.mu.Unlock()
	if ok && a.shard == "" {
		(*Scheduler)(st).wake()
	}
	return nil
}

// Delete drops an Application the watch reports deleted.
func (st *schedulerStore) Delete(obj any) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if k, _, ok := st.entry(obj); ok {
		delete(st.apps, k)
	}
	return nil
}

// Replace takes a whole list: the first one, or a relist after a gap.
func (st *schedulerStore) Replace(list []any, _ string) error {
	st.mu.Lock()
	next := make(map[types.NamespacedName]app, len(list))
	unassigned := false
	for _, obj := range list {
		if k, a, ok := st.entry(obj); ok {
			next[k] = a
			unassigned = unassigned || a.shard == ""
		}
	}
	st.apps = next
	st.mu.Unlock()
	select {
	case <-st.synced:
	default:
		close(st.synced)
	}
	if unassigned {
		(*Scheduler)(st).wake()
	}
	return nil
}

// Resync does nothing: the store has no listeners to replay to.
func (st *schedulerStore) Resync() error { return nil }

// Transformer trims what a streaming list holds until its Replace.
func (st *schedulerStore) Transformer() toolscache.TransformFunc { return slim }

// slim keeps of an Application's metadata only what scheduling reads.
func slim(obj any) (any, error) {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	out := &metav1.PartialObjectMetadata{}
	out.Name, out.Namespace, out.ResourceVersion = m.Name, m.Namespace, m.ResourceVersion
	if id, ok := m.Labels[LabelScheduledShardID]; ok {
		out.Labels = map[string]string{LabelScheduledShardID: id}
	}
	return out, nil
}

func (s *Scheduler) wake() {
	select {
	case s.kick <- struct{}{}:
	default:
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
