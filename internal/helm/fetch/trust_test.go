package fetch_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	repo "helm.sh/helm/v4/pkg/repo/v1"
	"sigs.k8s.io/yaml"

	"github.com/steward-oam/steward/internal/egress"
	"github.com/steward-oam/steward/internal/helm/chart"
	"github.com/steward-oam/steward/internal/helm/chart/charttest"
	"github.com/steward-oam/steward/internal/helm/fetch"
)

// A chart fetched with credentials is never served from the cache to a
// fetch without them, even when that fetch's own repository names its
// digest: knowing a private chart's digest does not get the chart.
func TestFetch_DigestServedOnlyToWhoFetchedIt(t *testing.T) {
	private := charttest.NewRepo()
	defer private.Close()
	private.Username, private.Password = "alice", "s3cret"
	archive := charttest.ConfigMapChart("private", "1.0.0")
	private.Add(archive)
	f := fetch.New(fetch.Options{})
	ctx := context.Background()
	if _, err := f.Fetch(ctx, fetch.Source{Chart: "private", RepoURL: private.URL(), Version: "1.0.0"},
		&fetch.Auth{Username: "alice", Password: "s3cret"}, defaults(t)); err != nil {
		t.Fatal(err)
	}

	// The tenant's public repository: an index naming the private
	// archive's digest, and no archive.
	md, err := chart.Metadata(archive)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(archive)
	var downloads atomic.Int64
	var tenant *httptest.Server
	tenant = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/index.yaml" {
			downloads.Add(1)
			http.NotFound(w, r)
			return
		}
		idx := repo.NewIndexFile()
		if err := idx.MustAdd(md, "private-1.0.0.tgz", tenant.URL, "sha256:"+hex.EncodeToString(sum[:])); err != nil {
			t.Error(err)
		}
		b, _ := yaml.Marshal(idx)
		_, _ = w.Write(b)
	}))
	defer tenant.Close()
	got, err := f.Fetch(ctx, fetch.Source{Chart: "private", RepoURL: tenant.URL, Version: "1.0.0"}, nil, defaults(t))
	if err == nil {
		t.Fatalf("the tenant got the private chart (%s) from the cache", got.Digest)
	}
	if downloads.Load() != 1 || !strings.Contains(err.Error(), "404") {
		t.Errorf("the tenant's fetch: %d downloads, err %v; want its own download, refused", downloads.Load(), err)
	}
}

// Credentials follow a redirect only on the same scheme and host; a
// redirect from https to http is refused.
func TestFetch_RedirectsKeepCredentialsHome(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]string{}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen["other"] = r.Header.Get("Authorization")
		mu.Unlock()
		_, _ = w.Write(charttest.ConfigMapChart("moved", "1.0.0"))
	}))
	defer other.Close()
	home := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen["home"] = r.Header.Get("Authorization")
		mu.Unlock()
		http.Redirect(w, r, other.URL+"/moved.tgz", http.StatusFound)
	}))
	defer home.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: home.Certificate().Raw})
	f := fetch.New(fetch.Options{})
	_, err := f.Fetch(context.Background(), fetch.Source{Chart: home.URL + "/c.tgz"},
		&fetch.Auth{Token: "t0ken", CAData: ca}, defaults(t))
	if err == nil || !strings.Contains(err.Error(), "https to http") {
		t.Errorf("a redirect from https to http: err = %v, want refused", err)
	}
	mu.Lock()
	if seen["home"] != "Bearer t0ken" {
		t.Errorf("the configured host got Authorization %q", seen["home"])
	}
	if _, ok := seen["other"]; ok {
		t.Errorf("the downgraded redirect was followed (Authorization %q)", seen["other"])
	}
	mu.Unlock()

	// Plain http to another host (another port is another host): followed,
	// without the credentials.
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/moved.tgz", http.StatusFound)
	}))
	defer plain.Close()
	if _, err := f.Fetch(context.Background(), fetch.Source{Chart: plain.URL + "/c.tgz"},
		&fetch.Auth{Username: "alice", Password: "s3cret"}, defaults(t)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if got := seen["other"]; got != "" {
		t.Errorf("another host got Authorization %q", got)
	}
	mu.Unlock()
}

// A failed source is not fetched again while its backoff lasts, and the
// error says so.
func TestFetch_FailuresAreRemembered(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	defer srv.Close()
	f := fetch.New(fetch.Options{})
	src := fetch.Source{Chart: "demo", RepoURL: srv.URL, Version: "1.0.0"}
	for i := range 5 {
		_, err := f.Fetch(context.Background(), src, nil, defaults(t))
		if err == nil || !strings.Contains(err.Error(), "500") {
			t.Fatalf("fetch %d: err = %v, want the 500", i, err)
		}
		if i > 0 && !strings.Contains(err.Error(), "tried again after 30s") {
			t.Errorf("fetch %d: err = %v, want the backoff named", i, err)
		}
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("5 fetches of a failing source made %d requests, want 1", n)
	}
}

// Every connection goes through Options.DialContext: with the egress
// policy's, a repository on loopback is refused by default.
func TestFetch_DialsThroughTheEgressPolicy(t *testing.T) {
	repo := charttest.NewRepo()
	defer repo.Close()
	repo.Add(charttest.ConfigMapChart("demo", "1.0.0"))
	policy, err := egress.New(egress.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := fetch.New(fetch.Options{DialContext: policy.DialContext})
	_, err = f.Fetch(context.Background(), fetch.Source{Chart: "demo", RepoURL: repo.URL(), Version: "1.0.0"}, nil, defaults(t))
	if !egress.IsDenied(err) || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Fatalf("a loopback repository: err = %v, want EgressDenied naming the address", err)
	}
	if n := repo.Requests.Load(); n != 0 {
		t.Errorf("the refused repository got %d requests", n)
	}
	allowing, err := egress.New(egress.Options{Allow: []string{"127.0.0.1/32"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fetch.New(fetch.Options{DialContext: allowing.DialContext}).Fetch(context.Background(),
		fetch.Source{Chart: "demo", RepoURL: repo.URL(), Version: "1.0.0"}, nil, defaults(t)); err != nil {
		t.Fatalf("with loopback allowed: %v", err)
	}
}

// Downloads in flight are bounded whatever the number of sources.
func TestFetch_ConcurrentFetchesBounded(t *testing.T) {
	var inflight, most atomic.Int64
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inflight.Add(1)
		defer inflight.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		<-release
		_, _ = w.Write(charttest.ConfigMapChart("demo", "1.0.0"))
	}))
	defer srv.Close()
	f := fetch.New(fetch.Options{MaxConcurrentFetches: 2, Timeout: 30 * time.Second})
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := f.Fetch(context.Background(), fetch.Source{Chart: fmt.Sprintf("%s/c%d.tgz", srv.URL, i)}, nil, defaults(t))
			errs <- err
		}()
	}
	deadline := time.Now().Add(5 * time.Second)
	for inflight.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // a third, if unbounded, would arrive now
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if m := most.Load(); m != 2 {
		t.Errorf("at most %d downloads were in flight, want 2", m)
	}
}
