package application

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cli"
	"github.com/steward-oam/steward/internal/watch"
)

// watchOptions run watch mode with a re-sync period no test waits for:
// whatever is repaired in time was repaired by a watch event.
func watchOptions() testOpts {
	o := testOptions()
	o.DriftDetection = watch.ModeWatch
	o.ReSyncPeriod = time.Hour
	o.UnhealthyRequeueBase = 0
	o.watchSupervise = 200 * time.Millisecond
	return o
}

// startWatching starts a manager in watch mode and returns its watcher.
func startWatching(t *testing.T, opts testOpts) (*watch.Watcher, func()) {
	t.Helper()
	var w *watch.Watcher
	opts.onWatcher = func(x *watch.Watcher) { w = x }
	stop := startStoppableManager(t, testCfg, opts)
	if w == nil {
		t.Fatal("watch mode started no watcher")
	}
	return w, stop
}

// waitInformer waits until the watcher runs (or, with running false, no
// longer runs) an informer for kind, "Deployment.apps@local".
func waitInformer(t testing.TB, w *watch.Watcher, kind string, running bool) {
	t.Helper()
	eventually(t, 30*time.Second, fmt.Sprintf("informer %s running=%v", kind, running), func() error {
		if slices.Contains(w.Informers(), kind) != running {
			return fmt.Errorf("informers: %v", w.Informers())
		}
		return nil
	})
}

// waitRepaired waits for a repair no re-sync pass can make in time.
func waitRepaired(t *testing.T, what string, cond func() error) {
	t.Helper()
	eventually(t, 15*time.Second, what+" (the re-sync period is an hour: only a watch event repairs it)", cond)
}

// deleteAndWaitRecreated deletes the Deployment get returns, through c,
// and waits until get finds a new one (another UID) in place of it.
func deleteAndWaitRecreated(t *testing.T, c client.Client, what string, get func() (*appsv1.Deployment, error)) {
	t.Helper()
	dep, err := get()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(context.Background(), dep); err != nil {
		t.Fatal(err)
	}
	waitRepaired(t, what, func() error {
		got, err := get()
		if err != nil {
			return err
		}
		if got.UID == dep.UID {
			return errNotYet
		}
		return nil
	})
}

func TestWatchMode_RepairsDeletesEditsAndRemovedLabelsAtOnce(t *testing.T) {
	ns := newNamespace(t)
	w, _ := startWatching(t, watchOptions())
	createApp(t, ns, webApp)
	waitReady(t, ns, "web")
	waitInformer(t, w, "Deployment.apps@local", true)
	ctx := context.Background()

	// Deleted: created again.
	web := func() (*appsv1.Deployment, error) { return getDeployment(t, ns, "web") }
	deleteAndWaitRecreated(t, testClient, "the deleted Deployment back", web)

	// Edited: reverted.
	dep, _ := getDeployment(t, ns, "web")
	patch := client.MergeFrom(dep.DeepCopy())
	five := int32(5)
	dep.Spec.Replicas = &five
	if err := testClient.Patch(ctx, dep, patch); err != nil {
		t.Fatal(err)
	}
	waitRepaired(t, "replicas back to 3", func() error {
		got, err := getDeployment(t, ns, "web")
		if err != nil {
			return err
		}
		if *got.Spec.Replicas != 3 {
			return fmt.Errorf("replicas = %d", *got.Spec.Replicas)
		}
		return nil
	})

	// The ownership label removed: the object leaves the informer's
	// selector, which the informer sees as a delete; the label comes back.
	removeDeploymentLabels(t, ns, "web", v1beta1.LabelAppName)
	waitRepaired(t, "the ownership label back", labelledForWeb(t, ns))
}

func TestWatchMode_SteadyPassesReadAndWriteNothing(t *testing.T) {
	ns := newNamespace(t)
	log := &requestLog{}
	opts := watchOptions()
	var w *watch.Watcher
	opts.onWatcher = func(x *watch.Watcher) { w = x }
	startManager(t, log.wrap(testCfg), opts)
	app := strings.Replace(webApp, "  name: web\n", "  name: web\n  annotations: {"+v1beta1.AnnotationReconcileInterval+": 1s}\n", 1)
	createApp(t, ns, app)
	waitReady(t, ns, "web")
	waitInformer(t, w, "Deployment.apps@local", true)
	waitInformer(t, w, "Service@local", true)
	time.Sleep(3 * time.Second) // passes after the informers synced record what they read

	objects := func() []string {
		var out []string
		for _, r := range log.all() {
			if strings.Contains(r, "/namespaces/"+ns+"/") && !strings.Contains(r, "core.oam.dev") && !strings.Contains(r, "/events") {
				out = append(out, r)
			}
		}
		return out
	}
	log.reset()
	before := reconcileCount(t)
	time.Sleep(5 * time.Second)
	if n := reconcileCount(t) - before; n < 3 {
		t.Fatalf("%v passes in 5 s at a 1 s interval; the test measures nothing", n)
	}
	if reqs := objects(); len(reqs) > 0 {
		t.Errorf("steady-state passes in watch mode sent requests for the app's objects: %v", reqs)
	}

	// A change is still seen by the next pass.
	dep, _ := getDeployment(t, ns, "web")
	patch := client.MergeFrom(dep.DeepCopy())
	five := int32(5)
	dep.Spec.Replicas = &five
	if err := testClient.Patch(context.Background(), dep, patch); err != nil {
		t.Fatal(err)
	}
	waitRepaired(t, "replicas back to 3", func() error {
		got, _ := getDeployment(t, ns, "web")
		if *got.Spec.Replicas != 3 {
			return fmt.Errorf("replicas = %d", *got.Spec.Replicas)
		}
		return nil
	})
}

// --watch-full-read-period: the safety net under the watch. Between full
// reads a pass trusts the cache; once per period a pass reads every
// object again, whatever the cache says.
func TestWatchMode_FullReadPeriodReadsEveryObjectAgain(t *testing.T) {
	ns := newNamespace(t)
	log := &requestLog{}
	opts := watchOptions()
	opts.WatchFullReadPeriod = 3 * time.Second
	var w *watch.Watcher
	opts.onWatcher = func(x *watch.Watcher) { w = x }
	startManager(t, log.wrap(testCfg), opts)
	app := strings.Replace(webApp, "  name: web\n", "  name: web\n  annotations: {"+v1beta1.AnnotationReconcileInterval+": 1s}\n", 1)
	createApp(t, ns, app)
	waitReady(t, ns, "web")
	waitInformer(t, w, "Deployment.apps@local", true)
	time.Sleep(3 * time.Second)

	log.reset()
	before := reconcileCount(t)
	time.Sleep(7 * time.Second)
	passes := reconcileCount(t) - before
	reads := 0
	for _, r := range log.all() {
		if strings.HasPrefix(r, "GET ") && strings.Contains(r, "/namespaces/"+ns+"/deployments/web") {
			reads++
		}
	}
	if reads == 0 {
		t.Errorf("%v passes in 7 s with a 3 s full-read period read the Deployment not once", passes)
	}
	if float64(reads) >= passes {
		t.Errorf("%d reads of the Deployment in %v passes: every pass read it, the cache was not trusted in between", reads, passes)
	}
}

// A shared resource deleted by hand is re-created by its owner, listing
// only the owner as sharer; the second sharer must be woken too and join
// again at once, or deleting the owner before the second sharer's next
// re-sync (an hour here) would delete an object it still shares.
func TestWatchMode_EverySharerOfADeletedSharedResourceIsWoken(t *testing.T) {
	ns := newNamespace(t)
	startWatching(t, watchOptions())
	createApp(t, ns, sharedConfigApp("one"))
	waitReady(t, ns, "one")
	createApp(t, ns, sharedConfigApp("two"))
	waitReady(t, ns, "two")
	both := ns + "/one," + ns + "/two"
	eventually(t, 15*time.Second, "both sharers listed", func() error {
		got, err := getConfigMap(t, ns, "shared")
		if err != nil {
			return err
		}
		if sb := got.Annotations[v1beta1.AnnotationSharedBy]; sb != both {
			return fmt.Errorf("shared-by = %q", sb)
		}
		return nil
	})
	time.Sleep(time.Second) // the informers see the object as last written

	cm, err := getConfigMap(t, ns, "shared")
	if err != nil {
		t.Fatal(err)
	}
	if err := testClient.Delete(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	waitRepaired(t, "the shared ConfigMap back with both sharers", func() error {
		got, err := getConfigMap(t, ns, "shared")
		if err != nil {
			return err
		}
		if got.UID == cm.UID {
			return fmt.Errorf("still the old object")
		}
		// Whichever sharer re-created it is listed first.
		if sb := got.Annotations[v1beta1.AnnotationSharedBy]; sb != both && sb != ns+"/two,"+ns+"/one" {
			return fmt.Errorf("shared-by = %q", sb)
		}
		return nil
	})
}

func TestWatchMode_InformersFollowTheKindsTrackersList(t *testing.T) {
	ns := newNamespace(t)
	installK8sObjects(t, ns)
	w, _ := startWatching(t, watchOptions())
	createApp(t, ns, objectsApp("kinds", "", configMapIn(ns, "kinds-cm")))
	waitReady(t, ns, "kinds")
	waitInformer(t, w, "ConfigMap@local", true)

	// The ConfigMap is replaced by a Secret: once the old version is
	// collected no tracker lists ConfigMaps, and their informer stops.
	app := getApp(t, ns, "kinds")
	secret := fmt.Sprintf("{apiVersion: v1, kind: Secret, metadata: {name: kinds-secret, namespace: %s}, stringData: {k: v}}", ns)
	next := &v1beta1.Application{}
	if err := yaml.UnmarshalStrict([]byte(objectsApp("kinds", "", secret)), next); err != nil {
		t.Fatal(err)
	}
	app.Spec = next.Spec
	if err := testClient.Update(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	waitInformer(t, w, "Secret@local", true)
	waitInformer(t, w, "ConfigMap@local", false)
	eventually(t, 15*time.Second, "the ConfigMap collected", func() error {
		if exists(t, &corev1.ConfigMap{}, ns, "kinds-cm") {
			return errNotYet
		}
		return nil
	})

	// Deleting the Application stops the last informer it needed.
	if err := testClient.Delete(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	waitInformer(t, w, "Secret@local", false)
}

func TestWatchMode_RestartRebuildsInformersFromTrackers(t *testing.T) {
	ns := newNamespace(t)
	_, stop := startWatching(t, watchOptions())
	createApp(t, ns, webApp)
	waitReady(t, ns, "web")
	stop()

	// A new process knows nothing but what the trackers say.
	w, stop := startWatching(t, watchOptions())
	waitInformer(t, w, "Deployment.apps@local", true)
	time.Sleep(time.Second) // the first pass records what it read
	deleteAndWaitRecreated(t, testClient, "the Deployment deleted after the restart back",
		func() (*appsv1.Deployment, error) { return getDeployment(t, ns, "web") })

	// Stopped again: a label removed while no process runs, and so
	// before any process applied the object, comes back too.
	stop()
	removeDeploymentLabels(t, ns, "web", v1beta1.LabelAppName)
	startWatching(t, watchOptions())
	eventually(t, 15*time.Second, "the ownership label removed before the restart back", labelledForWeb(t, ns))
}

func TestWatchMode_TargetClusterInformersStopWhenItIsDetached(t *testing.T) {
	ctx := context.Background()
	_, spokeClient := joinedSpoke(t, "mc-w")
	ns := newNamespace(t)
	w, _ := startWatching(t, watchOptions())
	createApp(t, ns, multiclusterApp("mc-w"))
	waitReady(t, ns, "fleet")
	waitInformer(t, w, "Deployment.apps@mc-w", true)
	time.Sleep(time.Second)

	// A delete in the target cluster is repaired from its own informer.
	deleteAndWaitRecreated(t, spokeClient, "the spoke's Deployment back",
		func() (*appsv1.Deployment, error) { return spokeDeployment(t, spokeClient, "fleet") })

	if _, err := cli.Detach(ctx, testClient, cli.DetachOptions{Name: "mc-w", Force: true}); err != nil {
		t.Fatal(err)
	}
	waitInformer(t, w, "Deployment.apps@mc-w", false)
}
