package application

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

// vanish makes the Application ns/name disappear at once although it
// carries Steward's finalizer: what the API server does when a DELETE it
// judged on a copy without finalizers races the finalizer write
// (kubernetes/kubernetes#77988).
func vanish(t *testing.T, ns, name string) error {
	ctx := context.Background()
	app := &v1beta1.Application{}
	if err := testClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, app); err != nil {
		return err
	}
	app.Finalizers = nil
	if err := testClient.Update(ctx, app); err != nil {
		return err
	}
	return testClient.Delete(ctx, app)
}

// nothingLeft waits until neither the app's trackers nor its Deployment
// and Service exist, and fails the test when they stay.
func nothingLeft(t *testing.T, ns, name string, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, "nothing of the vanished app left", func() error {
		if len(trackersOf(t, ns, name)) > 0 {
			return errors.New("its resource trackers are left")
		}
		if _, err := getDeployment(t, ns, name); !apierrors.IsNotFound(err) {
			return errors.New("its Deployment is left")
		}
		if serviceExists(t, ns, name) {
			return errors.New("its Service is left")
		}
		return nil
	})
}

// waitFired waits until the test's hook has made the race happen.
func waitFired(t *testing.T, fired *atomic.Bool) {
	t.Helper()
	eventually(t, 15*time.Second, "the race to happen", func() error {
		if !fired.Load() {
			return errNotYet
		}
		return nil
	})
}

// The Application is deleted as Steward adds its finalizer, and the API
// server removes it although the finalizer write succeeded: the pass must
// not go on to record and apply objects nobody would ever delete.
func TestVanished_DeletedAsTheFinalizerIsAdded_NothingIsApplied(t *testing.T) {
	ns := newNamespace(t)
	var armed, fired atomic.Bool
	armed.Store(true)
	opts := testOptions()
	var recorded atomic.Bool
	opts.testHooks = hooks{
		hookAfterFinalizer: func() error {
			if !armed.CompareAndSwap(true, false) {
				return nil
			}
			fired.Store(true)
			return vanish(t, ns, "web")
		},
		hookAfterRecord: func() error {
			recorded.Store(true)
			return nil
		},
	}
	startManager(t, testCfg, opts)
	createApp(t, ns, "metadata: {name: web}\nspec:"+indent(v1Spec))
	waitFired(t, &fired)
	// Give a pass that wrongly went on the time to record and apply.
	time.Sleep(2 * time.Second)
	if recorded.Load() {
		t.Error("the pass recorded a version for an Application that was gone")
	}
	nothingLeft(t, ns, "web", 5*time.Second)
}

// The Application vanishes after the pass that added the finalizer has
// applied its objects: that pass deletes them, and its trackers, itself.
func TestVanished_DeletedAfterTheFirstApply_ThePassCleansUp(t *testing.T) {
	ns := newNamespace(t)
	var armed, fired atomic.Bool
	armed.Store(true)
	opts := testOptions()
	opts.testHooks = hooks{hookAfterKeep: func() error {
		if !armed.CompareAndSwap(true, false) {
			return nil
		}
		fired.Store(true)
		if _, err := getDeployment(t, ns, "web"); err != nil {
			t.Errorf("the hook ran before the Deployment was applied: %v", err)
		}
		return vanish(t, ns, "web")
	}}
	startManager(t, testCfg, opts)
	createApp(t, ns, "metadata: {name: web}\nspec:"+indent(v1Spec))
	waitFired(t, &fired)
	nothingLeft(t, ns, "web", 20*time.Second)
}

// A first pass that stops after applying, while its Application still
// exists, deletes nothing; nor does one whose Application was deleted and
// created again under the same name meanwhile: the new Application takes
// over what the name recorded, and its Deployment is never re-created.
func TestVanished_StoppedFirstPassOfALiveOrRecreatedApp_DeletesNothing(t *testing.T) {
	for _, recreate := range []bool{false, true} {
		t.Run(fmt.Sprintf("recreated=%v", recreate), func(t *testing.T) {
			ns := newNamespace(t)
			var armed atomic.Bool
			var uid atomic.Value
			armed.Store(true)
			opts := testOptions()
			opts.testHooks = hooks{hookAfterKeep: func() error {
				if !armed.CompareAndSwap(true, false) {
					return nil
				}
				dep, err := getDeployment(t, ns, "web")
				if err != nil {
					t.Errorf("the hook ran before the Deployment was applied: %v", err)
					return err
				}
				uid.Store(dep.UID)
				if recreate {
					if err := vanish(t, ns, "web"); err != nil {
						return err
					}
					createApp(t, ns, "metadata: {name: web}\nspec:"+indent(v1Spec))
				}
				return errors.New("stopped after the first apply")
			}}
			startManager(t, testCfg, opts)
			createApp(t, ns, "metadata: {name: web}\nspec:"+indent(v1Spec))
			waitReady(t, ns, "web")
			if armed.Load() {
				t.Fatal("the hook never fired")
			}
			dep, err := getDeployment(t, ns, "web")
			if err != nil {
				t.Fatalf("the Deployment is gone: %v", err)
			}
			if dep.UID != uid.Load() {
				t.Errorf("the Deployment was deleted and re-created (UID %s, was %s)", dep.UID, uid.Load())
			}
		})
	}
}
