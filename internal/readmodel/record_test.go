package readmodel

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/tracker"
)

// readApp must pick the tracker the controller keeps, or tree and status
// would show another version than the one delivered.
func TestReadApp_CurrentIsTheTrackerTheControllerKeeps(t *testing.T) {
	rt := func(k tracker.Kind, gen int64, uid string) client.Object {
		labels := tracker.Labels("web", "prod", k)
		labels[v1beta1.LabelAppUID] = uid
		return &v1beta1.ResourceTracker{
			ObjectMeta: metav1.ObjectMeta{Name: tracker.Name("web", "prod", k), Labels: labels},
			Spec:       v1beta1.ResourceTrackerSpec{Type: k.Type, ApplicationGeneration: gen},
		}
	}
	app := func(gen int64, pv string) *v1beta1.Application {
		a := &v1beta1.Application{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "prod", UID: "u1", Generation: gen}}
		if pv != "" {
			a.Annotations = map[string]string{v1beta1.AnnotationPublishVersion: pv}
		}
		return a
	}
	for _, tc := range []struct {
		name     string
		app      *v1beta1.Application
		trackers []client.Object
		want     string
	}{{
		name:     "the generation's tracker",
		app:      app(2, ""),
		trackers: []client.Object{rt(tracker.Versioned(1), 1, "u1"), rt(tracker.Versioned(2), 2, "u1"), rt(tracker.Root(), 2, "u1")},
		want:     "web.prod.v2",
	}, {
		name:     "the newest one while the generation is not recorded (render failed)",
		app:      app(4, ""),
		trackers: []client.Object{rt(tracker.Versioned(3), 3, "u1"), rt(tracker.Versioned(2), 2, "u1")},
		want:     "web.prod.v3",
	}, {
		name:     "an older publishVersion rolled back to",
		app:      app(5, "1.0"),
		trackers: []client.Object{rt(tracker.Published("1.0"), 1, "u1"), rt(tracker.Published("2.0"), 4, "u1")},
		want:     tracker.Name("web", "prod", tracker.Published("1.0")),
	}, {
		name:     "never a tracker left by an earlier app of the same name",
		app:      app(2, ""),
		trackers: []client.Object{rt(tracker.Versioned(1), 1, "u1"), rt(tracker.Versioned(7), 7, "old-uid")},
		want:     "web.prod.v1",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			hub := fakeHub(append(tc.trackers, tc.app)...)
			rec, err := readApp(context.Background(), hub, "prod", "web")
			if err != nil {
				t.Fatal(err)
			}
			if rec.current == nil || rec.current.Name != tc.want {
				t.Errorf("current = %v, want %s", rec.current, tc.want)
			}
		})
	}
}

func fakeHub(objs ...client.Object) client.Client {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(v1beta1.AddToScheme(s))
	return fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()
}
