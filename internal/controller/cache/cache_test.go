package cache

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

func cachedApp(name string) *v1beta1.Application {
	// Each string is built at run time, as a decoder would: no two
	// objects share a copy to begin with.
	s := func(v string) string { return string([]byte(v)) }
	return &v1beta1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s("prod"), Finalizers: []string{s("app.oam.dev/resource-tracker-finalizer")},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}},
		Spec: v1beta1.ApplicationSpec{Components: []v1beta1.ApplicationComponent{{Name: name, Type: s("webservice")}}},
		Status: v1beta1.ApplicationStatus{
			Conditions: []v1beta1.Condition{{Type: s("Ready"), Status: metav1.ConditionStatus(s("True")), Reason: s("Succeeded"), Message: s("rendered, dispatched, kept and healthy")}},
			Phase:      v1beta1.ApplicationPhase(s("running")),
			AppliedResources: []v1beta1.ClusterObjectReference{
				{Creator: s("workflow"), APIVersion: s("apps/v1"), Kind: s("Deployment"), Namespace: s("prod"), Name: name, UID: s("uid-" + name)},
			},
		},
	}
}

// cacheTransform returns the cache transform of objects of type T.
func cacheTransform[T client.Object](t *testing.T) func(any) (any, error) {
	t.Helper()
	for k, v := range Options(nil, nil).ByObject {
		if _, ok := k.(T); ok {
			return v.Transform
		}
	}
	t.Fatalf("no cache transform for %T", *new(T))
	return nil
}

func sameCopy(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

func TestCacheTransform_SharesRepeatedStringsAndKeepsTheObject(t *testing.T) {
	transform := cacheTransform[*v1beta1.Application](t)
	var got []*v1beta1.Application
	for i := range 3 {
		want := cachedApp(fmt.Sprintf("app-%d", i))
		want.ManagedFields = nil
		out, err := transform(cachedApp(fmt.Sprintf("app-%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		a := out.(*v1beta1.Application)
		if !equality.Semantic.DeepEqual(a, want) {
			t.Fatalf("the transform changed the object:\n got %+v\nwant %+v", a, want)
		}
		got = append(got, a)
	}
	a, b := got[1], got[2]
	for what, pair := range map[string][2]string{
		"namespace":       {a.Namespace, b.Namespace},
		"condition type":  {a.Status.Conditions[0].Type, b.Status.Conditions[0].Type},
		"message":         {a.Status.Conditions[0].Message, b.Status.Conditions[0].Message},
		"applied kind":    {a.Status.AppliedResources[0].Kind, b.Status.AppliedResources[0].Kind},
		"component type":  {a.Spec.Components[0].Type, b.Spec.Components[0].Type},
		"finalizer":       {a.Finalizers[0], b.Finalizers[0]},
		"phase":           {string(a.Status.Phase), string(b.Status.Phase)},
		"applied version": {a.Status.AppliedResources[0].APIVersion, b.Status.AppliedResources[0].APIVersion},
	} {
		if !sameCopy(pair[0], pair[1]) {
			t.Errorf("%s: two cached Applications hold their own copies of %q", what, pair[0])
		}
	}
	roomy := cachedApp("roomy")
	roomy.Status.Conditions = append(make([]v1beta1.Condition, 0, 8), roomy.Status.Conditions...)
	out, err := transform(roomy)
	if err != nil {
		t.Fatal(err)
	}
	if c := out.(*v1beta1.Application).Status.Conditions; cap(c) != len(c) {
		t.Errorf("cached conditions keep room for %d, hold %d", cap(c), len(c))
	}
	if sameCopy(a.Status.AppliedResources[0].UID, b.Status.AppliedResources[0].UID) {
		t.Error("UIDs are per object and must not be interned")
	}
}

func TestInterner_IsBounded(t *testing.T) {
	in := newInterner(2)
	for i := range 10 {
		s := fmt.Sprintf("name-%d", i)
		in.intern(&s)
		if s != fmt.Sprintf("name-%d", i) {
			t.Fatalf("interning changed %q", s)
		}
	}
	if len(in.strings) > 2 {
		t.Fatalf("%d strings kept, over the bound 2", len(in.strings))
	}
	// After a burst of distinct strings, repeated ones are shared again.
	a, b := string([]byte("Ready")), string([]byte("Ready"))
	in.intern(&a)
	in.intern(&b)
	if !sameCopy(a, b) {
		t.Error("a full table stopped sharing")
	}
	long := strings.Repeat("x", maxInternedLen+1)
	in.intern(&long)
	if _, ok := in.strings[long]; ok {
		t.Error("a string over the length bound was kept")
	}
}

func TestCacheTransform_TrackerLabelsKeepTheirValues(t *testing.T) {
	transform := cacheTransform[*v1beta1.ResourceTracker](t)
	rt := &v1beta1.ResourceTracker{ObjectMeta: metav1.ObjectMeta{Name: "web.prod.v1", Labels: map[string]string{
		v1beta1.LabelAppName: "web", v1beta1.LabelAppNamespace: "prod", v1beta1.LabelTrackerType: "versioned",
	}}}
	want := rt.DeepCopy()
	out, err := transform(rt)
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(out.(client.Object).GetLabels(), want.Labels) {
		t.Fatalf("labels %v, want %v", out.(client.Object).GetLabels(), want.Labels)
	}
}
