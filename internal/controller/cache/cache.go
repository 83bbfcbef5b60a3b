package cache

import (
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	toolscache "k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

// Options are the manager's cache options: managed fields are
// dropped from every cached object (nothing reads them; about 0.6 KiB per
// cached Application, tracker and definition), and the strings that
// repeat across cached Applications and trackers are shared.
//
// With sharding on, shard selects the Applications and trackers of this
// replica's shard: the others are never cached.
func Options(syncPeriod *time.Duration, shard labels.Selector) crcache.Options {
	strip := crcache.TransformStripManagedFields()
	in := newInterner(maxInterned)
	shared := func(intern func(*interner, client.Object)) toolscache.TransformFunc {
		return func(obj any) (any, error) {
			obj, err := strip(obj)
			if err != nil {
				return obj, err
			}
			if o, ok := obj.(client.Object); ok {
				in.mu.Lock()
				intern(in, o)
				in.mu.Unlock()
			}
			return obj, nil
		}
	}
	return crcache.Options{
		SyncPeriod:       syncPeriod,
		DefaultTransform: strip,
		ByObject: map[client.Object]crcache.ByObject{
			&v1beta1.Application{}:     {Label: shard, Transform: shared(internApplication)},
			&v1beta1.ResourceTracker{}: {Label: shard, Transform: shared(internTracker)},
		},
	}
}

// maxInterned bounds the shared strings: kinds, API versions, condition
// texts and namespaces number in the hundreds, not per object. Strings
// longer than maxInternedLen (a long error message) are never shared, so
// the table holds at most about 512 KiB.
const (
	maxInterned    = 4096
	maxInternedLen = 128
)

// interner shares the copies of strings that repeat across cached objects
// (kinds, API versions, condition types, reasons and messages,
// namespaces), so that thousands of cached Applications and trackers hold
// one copy of each instead of one per object: about 0.75 KiB per cached
// Application of eight objects. When full, the table starts afresh:
// objects cached before keep their copies, and strings seen from then on
// are shared again, so it neither grows with the number of objects nor
// stops sharing after a burst of distinct messages. The caller holds mu.
type interner struct {
	mu      sync.Mutex
	max     int
	strings map[string]string
}

func newInterner(max int) *interner {
	return &interner{max: max, strings: map[string]string{}}
}

func (in *interner) intern(s *string) {
	if *s == "" || len(*s) > maxInternedLen {
		return
	}
	if c, ok := in.strings[*s]; ok {
		*s = c
		return
	}
	if len(in.strings) >= in.max {
		clear(in.strings)
	}
	in.strings[*s] = *s
}

// internMeta shares the namespace, the finalizers and the values of the
// labels that name a kind of object rather than one object.
func internMeta(in *interner, o client.Object, labels ...string) {
	ns := o.GetNamespace()
	in.intern(&ns)
	o.SetNamespace(ns)
	f := o.GetFinalizers()
	for i := range f {
		in.intern(&f[i])
	}
	l := o.GetLabels()
	for _, k := range labels {
		if v, ok := l[k]; ok {
			in.intern(&v)
			l[k] = v
		}
	}
}

func internApplication(in *interner, o client.Object) {
	a, ok := o.(*v1beta1.Application)
	if !ok {
		return
	}
	internMeta(in, a)
	for i := range a.Spec.Components {
		in.intern(&a.Spec.Components[i].Type)
	}
	st := &a.Status
	// The decoder grows slices by doubling: six conditions hold room for
	// eight. A cached copy never grows, so it keeps only what it holds.
	st.Conditions = Fit(st.Conditions)
	st.Services = Fit(st.Services)
	st.AppliedResources = Fit(st.AppliedResources)
	for i := range st.Conditions {
		c := &st.Conditions[i]
		in.intern(&c.Type)
		status := string(c.Status)
		in.intern(&status)
		c.Status = metav1.ConditionStatus(status)
		in.intern(&c.Reason)
		in.intern(&c.Message)
	}
	phase := string(st.Phase)
	in.intern(&phase)
	st.Phase = v1beta1.ApplicationPhase(phase)
	for i := range st.Services {
		sv := &st.Services[i]
		in.intern(&sv.Namespace)
		in.intern(&sv.Cluster)
		in.intern(&sv.Message)
		if sv.WorkloadDefinition != nil {
			in.intern(&sv.WorkloadDefinition.APIVersion)
			in.intern(&sv.WorkloadDefinition.Kind)
		}
	}
	for i := range st.AppliedResources {
		internRef(in, &st.AppliedResources[i])
	}
}

// Fit returns s in an array of its length: what is kept long costs no
// spare capacity.
func Fit[T any](s []T) []T {
	if cap(s) == len(s) {
		return s
	}
	return append(make([]T, 0, len(s)), s...)
}

// internRef shares the parts of an object reference that name a kind,
// a namespace or a cluster; names and UIDs are left alone.
func internRef(in *interner, r *v1beta1.ClusterObjectReference) {
	in.intern(&r.Cluster)
	in.intern(&r.Creator)
	in.intern(&r.APIVersion)
	in.intern(&r.Kind)
	in.intern(&r.Namespace)
}

func internTracker(in *interner, o client.Object) {
	rt, ok := o.(*v1beta1.ResourceTracker)
	if !ok {
		return
	}
	internMeta(in, rt, v1beta1.LabelAppNamespace, v1beta1.LabelTrackerType)
	typ := string(rt.Spec.Type)
	in.intern(&typ)
	rt.Spec.Type = v1beta1.ResourceTrackerType(typ)
	comp := string(rt.Spec.Compression.Type)
	in.intern(&comp)
	rt.Spec.Compression.Type = v1beta1.CompressionType(comp)
	for i := range rt.Spec.ManagedResources {
		e := &rt.Spec.ManagedResources[i]
		internRef(in, &e.ClusterObjectReference)
		in.intern(&e.Trait)
		in.intern(&e.Env)
	}
}
