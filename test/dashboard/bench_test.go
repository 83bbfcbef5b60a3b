package dashboard

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/manager"
	"github.com/steward-oam/steward/internal/dashboard"
	"github.com/steward-oam/steward/internal/testcp"
)

// benchApps is how many Applications the list benchmark serves
// (STEWARD_DASHBOARD_APPS overrides it).
func benchApps() int {
	if n, err := strconv.Atoi(os.Getenv("STEWARD_DASHBOARD_APPS")); err == nil && n > 0 {
		return n
	}
	return 10000
}

var (
	benchOnce sync.Once
	benchBase string
	benchErr  error
)

// benchDashboard starts a plane with benchApps() Applications, each with
// two components and the status a running Application has, and a
// dashboard over them; once for every benchmark of the run.
func benchDashboard(b *testing.B) string {
	benchOnce.Do(func() {
		if os.Getenv("KUBEBUILDER_ASSETS") == "" {
			benchErr = fmt.Errorf("KUBEBUILDER_ASSETS is not set (make bench-dashboard sets it)")
			return
		}
		ctrllog.SetLogger(logr.Discard())
		ctx := context.Background()
		planes, err := testcp.Start(ctx, testcp.Options{CRDDirectoryPaths: []string{filepath.Join("..", "..", "config", "crd")}}, "bench")
		if err != nil {
			benchErr = err
			return
		}
		plane := planes[0]
		hub, err := plane.Client(client.Options{Scheme: manager.NewScheme()})
		if err != nil {
			benchErr = err
			return
		}
		start := time.Now()
		if benchErr = createFleet(ctx, hub, benchApps()); benchErr != nil {
			return
		}
		fmt.Fprintf(os.Stderr, "created %d Applications with status in %s\n", benchApps(), time.Since(start).Round(time.Second))
		urls := make(chan string, 1)
		go func() {
			benchErr = dashboard.Run(ctx, plane.Config, hub, dashboard.RunOptions{Address: "127.0.0.1:0", AllNamespaces: true,
				Ready: func(u string) { urls <- u }})
		}()
		start = time.Now()
		select {
		case benchBase = <-urls:
			fmt.Fprintf(os.Stderr, "dashboard ready (informer synced) in %s\n", time.Since(start).Round(time.Millisecond))
		case <-time.After(5 * time.Minute):
			benchErr = fmt.Errorf("the dashboard did not start")
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchBase
}

// createFleet creates n Applications over ten namespaces, 16 at a time.
func createFleet(ctx context.Context, c client.Client, n int) error {
	work := make(chan int)
	errs := make(chan error, 16)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := range work {
				if err := createApp(ctx, c, i); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for ns := range 10 {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("team-%d", ns)}}); err != nil {
			return err
		}
	}
	for i := range n {
		select {
		case work <- i:
		case err := <-errs:
			close(work)
			wg.Wait()
			return err
		}
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

func createApp(ctx context.Context, c client.Client, i int) error {
	app := &v1beta1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprintf("team-%d", i%10), Name: fmt.Sprintf("app-%05d", i)}}
	for _, name := range []string{"web", "worker"} {
		app.Spec.Components = append(app.Spec.Components, v1beta1.ApplicationComponent{Name: name, Type: "webservice",
			Properties: &runtime.RawExtension{Raw: []byte(`{"image":"registry.example.com/shop/` + name + `:1.4.2","port":8080,"env":[{"name":"MODE","value":"production"}]}`)}})
	}
	if err := c.Create(ctx, app); err != nil {
		return err
	}
	now := metav1.Now()
	app.Status.Phase = v1beta1.ApplicationRunning
	if i%17 == 0 {
		app.Status.Phase = v1beta1.ApplicationUnhealthy
	}
	for _, t := range []string{"Parsed", "Rendered", "Recorded", "Applied", "Healthy", "Ready"} {
		app.Status.Conditions = append(app.Status.Conditions, v1beta1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: "Succeeded",
			Message: "the version was " + strings.ToLower(t), LastTransitionTime: now})
	}
	for _, name := range []string{"web", "worker"} {
		app.Status.Services = append(app.Status.Services, v1beta1.ApplicationComponentStatus{Name: name, Cluster: "local", Namespace: app.Namespace,
			Healthy: i%17 != 0 || name == "web", Message: "Ready:1/1"})
	}
	return c.Status().Update(ctx, app)
}

// BenchmarkDashboard_List measures the list page's server time (its
// Server-Timing header) over benchApps() Applications, for the default
// page and for every Application on one page, and the dashboard's heap
// after GC. The dashboard runs in this process; the API server and etcd
// do not.
func BenchmarkDashboard_List(b *testing.B) {
	base := benchDashboard(b)
	for _, tc := range []struct{ name, query string }{
		{"page", ""},
		{"sorted-by-health", "?sort=health"},
		{"all-on-one-page", "?limit=" + strconv.Itoa(benchApps())},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var server time.Duration
			var size int
			for b.Loop() {
				resp, err := http.Get(base + tc.query)
				if err != nil {
					b.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "app-00000") && tc.query != "?sort=health" {
					b.Fatalf("GET %s: %d", tc.query, resp.StatusCode)
				}
				size = len(body)
				server += serverTiming(b, resp.Header.Get("Server-Timing"))
			}
			b.ReportMetric(float64(server.Microseconds())/1000/float64(b.N), "server-ms/op")
			b.ReportMetric(float64(size)/1024, "page-KiB")
			b.ReportMetric(heapMiB(), "heap-MiB")
		})
	}
}

func serverTiming(b *testing.B, h string) time.Duration {
	_, v, ok := strings.Cut(h, "dur=")
	if !ok {
		b.Fatalf("Server-Timing %q", h)
	}
	ms, err := strconv.ParseFloat(v, 64)
	if err != nil {
		b.Fatal(err)
	}
	return time.Duration(ms * float64(time.Millisecond))
}

func heapMiB() float64 {
	goruntime.GC()
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}
