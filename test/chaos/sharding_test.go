package chaos

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

const shardNS = "steward-system"

// shardProc is one `steward controller` replica of a shard, with the
// address of its metrics.
type shardProc struct {
	id      string
	metrics string
	proc    *controllerProc
}

func startShard(t *testing.T, p *plane, dir, id string, n int) *shardProc {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	s := &shardProc{id: id, metrics: addr, proc: &controllerProc{bin: stewardBin, kubeconfig: p.kubeconfig,
		logDir: dir + "/" + id + "-" + strconv.Itoa(n), args: []string{
			"--metrics-addr=" + addr, "--health-addr=0",
			"--enable-sharding", "--shard-id=" + id,
			"--sharding-lease-namespace=" + shardNS,
			"--sharding-lease-duration=4s", "--sharding-lease-renew-period=1s",
			"--sharding-reassign-grace=3s",
			"--application-re-sync-period=10s",
			"--kube-api-qps=200", "--kube-api-burst=400",
			"--zap-log-level=1",
		}}}
	if err := os.MkdirAll(s.proc.logDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := s.proc.start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.proc.stop)
	return s
}

// families reads this replica's metrics.
func (s *shardProc) families(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + s.metrics + "/metrics")
	if err != nil {
		t.Fatalf("shard %s: reading metrics: %v", s.id, err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("shard %s: parsing metrics: %v", s.id, err)
	}
	return families
}

// apps returns the Applications this replica reports a series of
// steward_tracked_resources for: those it has reconciled, and not seen
// deleted or moved away since.
func (s *shardProc) apps(t *testing.T) map[types.NamespacedName]bool {
	t.Helper()
	out := map[types.NamespacedName]bool{}
	for _, m := range s.families(t)["steward_tracked_resources"].GetMetric() {
		var k types.NamespacedName
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "namespace":
				k.Namespace = l.GetValue()
			case "app":
				k.Name = l.GetValue()
			}
		}
		out[k] = true
	}
	return out
}

// watchEvents returns how many watch events of a result
// (steward_watch_events_total) this replica has judged.
func (s *shardProc) watchEvents(t *testing.T, result string) int {
	t.Helper()
	for _, m := range s.families(t)["steward_watch_events_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "result" && l.GetValue() == result {
				return int(m.GetCounter().GetValue())
			}
		}
	}
	return 0
}

// fleet reads every Application's shard label and whether it is Ready at
// its generation.
func fleet(ctx context.Context, t *testing.T, c client.Client) (shard map[types.NamespacedName]string, ready int) {
	t.Helper()
	var list v1beta1.ApplicationList
	if err := c.List(ctx, &list, client.InNamespace(chaosNS)); err != nil {
		t.Fatal(err)
	}
	shard = map[types.NamespacedName]string{}
	for _, app := range list.Items {
		shard[types.NamespacedName{Namespace: app.Namespace, Name: app.Name}] = app.Labels[v1beta1.LabelScheduledShardID]
		if c := v1beta1.FindCondition(app.Status.Conditions, v1beta1.ConditionReady); c != nil && c.Status == metav1.ConditionTrue && app.Status.ObservedGeneration == app.Generation {
			ready++
		}
	}
	return shard, ready
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s, %s: %v", timeout, what, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func createShardApps(ctx context.Context, t *testing.T, c client.Client, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		name := fmt.Sprintf("app-%03d", i)
		app := appObject(&appModel{Name: name, Spec: spec{Components: map[string]component{
			name + "-cm": {Value: "v1"},
		}}})
		if err := c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
}

// countShards counts Applications per shard label.
func countShards(shard map[types.NamespacedName]string) map[string]int {
	out := map[string]int{}
	for _, id := range shard {
		out[id]++
	}
	return out
}

// ownersOf checks that each Application is reported by exactly one
// replica, the one of its shard label.
func ownersOf(t *testing.T, shards []*shardProc, shard map[types.NamespacedName]string) error {
	t.Helper()
	seen := map[types.NamespacedName][]string{}
	for _, s := range shards {
		for app := range s.apps(t) {
			seen[app] = append(seen[app], s.id)
		}
	}
	for app, id := range shard {
		if got := seen[app]; len(got) != 1 || got[0] != id {
			return fmt.Errorf("app %s (shard %q) is reconciled by %v", app.Name, id, got)
		}
	}
	if len(seen) != len(shard) {
		return fmt.Errorf("replicas report %d apps, the fleet has %d", len(seen), len(shard))
	}
	return nil
}

// configMaps returns the UID of every ConfigMap Steward manages in the
// test namespace, and the shard label each carries.
func configMaps(ctx context.Context, t *testing.T, c client.Client) (map[string]types.UID, map[string]string) {
	t.Helper()
	var list corev1.ConfigMapList
	if err := c.List(ctx, &list, client.InNamespace(chaosNS), client.HasLabels{v1beta1.LabelAppName}); err != nil {
		t.Fatal(err)
	}
	uids, shards := map[string]types.UID{}, map[string]string{}
	for _, cm := range list.Items {
		uids[cm.Name] = cm.UID
		shards[cm.Name] = cm.Labels[v1beta1.LabelScheduledShardID]
	}
	return uids, shards
}

// labelledLikeTheirApps checks that every managed ConfigMap (named after
// its app) carries its Application's shard label: each replica's watch
// selects its own shard's objects only.
func labelledLikeTheirApps(shard map[types.NamespacedName]string, cms map[string]string) error {
	for app, id := range shard {
		if got := cms[app.Name+"-cm"]; got != id {
			return fmt.Errorf("ConfigMap %s-cm is labelled shard %q, its app is in %q", app.Name, got, id)
		}
	}
	return nil
}

// Three replicas, one per shard, share 300 Applications: each Application
// is reconciled by exactly one of them and stays there; when one replica
// dies its Applications move to the others after the grace period, with
// nothing deleted or created twice; when it comes back it takes nothing
// back, only new work.
func TestSharding_ThreeReplicasShareTheFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane and three controllers")
	}
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "sharding-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !t.Failed() && os.Getenv("SHARDING_KEEP_LOGS") == "" {
			_ = os.RemoveAll(dir)
		} else {
			t.Logf("kept %s for the controller logs", dir)
		}
	})
	p, c := startInstalledPlane(ctx, t, dir)
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: shardNS}}); err != nil {
		t.Fatal(err)
	}
	ids := []string{"master", "shard-1", "shard-2"}
	var shards []*shardProc
	for _, id := range ids {
		shards = append(shards, startShard(t, p, dir, id, 1))
	}
	waitFor(t, time.Minute, "every shard holds a Lease", func() error {
		var leases coordinationv1.LeaseList
		if err := c.List(ctx, &leases, client.InNamespace(shardNS)); err != nil {
			return err
		}
		if len(leases.Items) != len(ids) {
			return fmt.Errorf("%d Leases", len(leases.Items))
		}
		return nil
	})

	const n = 300
	createShardApps(ctx, t, c, 0, n)
	waitFor(t, 5*time.Minute, "every app assigned and Ready", func() error {
		shard, ready := fleet(ctx, t, c)
		if ready != n {
			return fmt.Errorf("%d of %d Ready; per shard %v", ready, n, countShards(shard))
		}
		return nil
	})
	shard, _ := fleet(ctx, t, c)
	for _, id := range ids {
		if got := countShards(shard)[id]; got != n/len(ids) {
			t.Errorf("shard %s holds %d apps, want %d (balanced by count): %v", id, got, n/len(ids), countShards(shard))
		}
	}
	waitFor(t, 30*time.Second, "each app reconciled by exactly its shard's replica", func() error { return ownersOf(t, shards, shard) })

	// Steady state: two re-sync periods later nothing has moved.
	time.Sleep(25 * time.Second)
	after, ready := fleet(ctx, t, c)
	if !maps.Equal(shard, after) {
		t.Errorf("apps changed shard in steady state: %v → %v", countShards(shard), countShards(after))
	}
	if ready != n {
		t.Errorf("%d of %d Ready in steady state", ready, n)
	}
	if err := ownersOf(t, shards, after); err != nil {
		t.Errorf("steady state: %v", err)
	}
	// The managed objects carry their shard, and the API server sends each
	// replica its shard's objects only: a replica judges no events of the
	// 200 objects of other shards (at most its own objects' events that
	// arrive before it tracks them).
	if _, cms := configMaps(ctx, t, c); labelledLikeTheirApps(after, cms) != nil {
		t.Errorf("steady state: %v", labelledLikeTheirApps(after, cms))
	}
	for _, s := range shards {
		if got := s.watchEvents(t, "untracked"); got >= n/len(ids)/2 {
			t.Errorf("shard %s judged %d watch events on objects it does not track: it watches other shards' objects", s.id, got)
		}
	}

	// shard-2's replica dies.
	before, _ := configMaps(ctx, t, c)
	if len(before) != n {
		t.Fatalf("%d managed ConfigMaps, want %d", len(before), n)
	}
	shards[2].proc.stop()
	waitFor(t, 2*time.Minute, "shard-2's apps moved to the live shards and Ready", func() error {
		shard, ready := fleet(ctx, t, c)
		if got := countShards(shard); got["shard-2"] != 0 || ready != n {
			return fmt.Errorf("%d Ready; per shard %v", ready, got)
		}
		return ownersOf(t, shards[:2], shard)
	})
	moved, _ := fleet(ctx, t, c)
	if got := countShards(moved); got["master"] != n/2 || got["shard-1"] != n/2 {
		t.Errorf("after the move: %v, want %d each", got, n/2)
	}
	var trackers v1beta1.ResourceTrackerList
	if err := c.List(ctx, &trackers); err != nil {
		t.Fatal(err)
	}
	for _, rt := range trackers.Items {
		app := types.NamespacedName{Namespace: rt.Labels[v1beta1.LabelAppNamespace], Name: rt.Labels[v1beta1.LabelAppName]}
		if got, want := rt.Labels[v1beta1.LabelScheduledShardID], moved[app]; got != want {
			t.Errorf("tracker %s is in shard %q, its app in %q", rt.Name, got, want)
		}
	}
	got, cms := configMaps(ctx, t, c)
	if err := labelledLikeTheirApps(moved, cms); err != nil {
		t.Errorf("after the move: %v", err)
	}
	if !maps.Equal(before, got) {
		var changed []string
		for name, uid := range before {
			if got[name] != uid {
				changed = append(changed, name)
			}
		}
		slices.Sort(changed)
		t.Errorf("the move deleted or re-created objects: %d ConfigMaps before, %d after, changed %v", len(before), len(got), changed)
	}

	// A moved app's object is deleted: its new shard's watch sees it, as
	// its objects now carry that shard, and the object comes back.
	var victim types.NamespacedName
	for app, id := range shard {
		if id == "shard-2" {
			victim = app
			break
		}
	}
	owner := shards[0]
	if moved[victim] == "shard-1" {
		owner = shards[1]
	}
	changedBefore := owner.watchEvents(t, "changed")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: chaosNS, Name: victim.Name + "-cm"}}
	if err := c.Delete(ctx, cm); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the deleted ConfigMap of a moved app restored", func() error {
		return c.Get(ctx, client.ObjectKeyFromObject(cm), cm)
	})
	if got := owner.watchEvents(t, "changed"); got <= changedBefore {
		t.Errorf("shard %s, the new owner of %s, saw no watch event of its deleted ConfigMap (changed: %d before, %d after)", owner.id, victim.Name, changedBefore, got)
	}

	// It comes back: it takes nothing back, and gets the new apps.
	shards[2] = startShard(t, p, dir, "shard-2", 2)
	time.Sleep(8 * time.Second)
	back, _ := fleet(ctx, t, c)
	if !maps.Equal(moved, back) {
		t.Errorf("the returning shard changed assignments: %v → %v", countShards(moved), countShards(back))
	}
	createShardApps(ctx, t, c, n, n+10)
	waitFor(t, time.Minute, "the new apps assigned to the returning shard and Ready", func() error {
		shard, ready := fleet(ctx, t, c)
		if got := countShards(shard); got["shard-2"] != 10 || ready != n+10 {
			return fmt.Errorf("%d Ready; per shard %v", ready, got)
		}
		return ownersOf(t, shards, shard)
	})
}
