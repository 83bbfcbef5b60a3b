package fetch_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/steward-oam/steward/internal/helm/chart"
	"github.com/steward-oam/steward/internal/helm/chart/charttest"
	"github.com/steward-oam/steward/internal/helm/fetch"
)

func defaults(t *testing.T) fetch.TTL {
	t.Helper()
	ttl, err := fetch.ParseTTL("", "", "")
	if err != nil {
		t.Fatal(err)
	}
	return ttl
}

func chartOf(t *testing.T, got *fetch.Fetched) string {
	t.Helper()
	md, err := chart.Metadata(got.Archive)
	if err != nil {
		t.Fatal(err)
	}
	return md.Name + "-" + md.Version
}

func TestFetch_RepositoryVersionsAndCache(t *testing.T) {
	repo := charttest.NewRepo()
	defer repo.Close()
	for _, v := range []string{"1.0.0", "1.2.0", "2.0.0", "2.1.0-rc.1"} {
		repo.Add(charttest.ConfigMapChart("demo", v))
	}
	var mu sync.Mutex
	events := map[string]int{}
	f := fetch.New(fetch.Options{Observe: func(e string) { mu.Lock(); events[e]++; mu.Unlock() }})
	ctx := context.Background()
	for version, want := range map[string]string{"1.0.0": "demo-1.0.0", "latest": "demo-2.0.0", "": "demo-2.0.0", "^1.0.0": "demo-1.2.0", "~2.0": "demo-2.0.0"} {
		got, err := f.Fetch(ctx, fetch.Source{Chart: "demo", RepoURL: repo.URL(), Version: version}, nil, defaults(t))
		if err != nil {
			t.Fatalf("version %q: %v", version, err)
		}
		if c := chartOf(t, got); c != want {
			t.Errorf("version %q fetched %s, want %s", version, c, want)
		}
	}
	// Fresh resolutions answer from memory: no request at all.
	before := repo.Requests.Load()
	got, err := f.Fetch(ctx, fetch.Source{Chart: "demo", RepoURL: repo.URL(), Version: "^1.0.0"}, nil, defaults(t))
	if err != nil || !got.Hit {
		t.Fatalf("second fetch: hit=%v err=%v", got != nil && got.Hit, err)
	}
	if n := repo.Requests.Load() - before; n != 0 {
		t.Errorf("a cached fetch made %d requests", n)
	}
	// "latest" and "" resolve to the same archive: downloaded once.
	if d := repo.Downloads.Load(); d != 3 {
		t.Errorf("downloads = %d, want 3 (1.0.0, 2.0.0, 1.2.0; each archive once)", d)
	}
	mu.Lock()
	if events["hit"] != 1 || events["fetch"] != 5 {
		t.Errorf("events = %v", events)
	}
	mu.Unlock()

	if _, err := f.Fetch(ctx, fetch.Source{Chart: "demo", RepoURL: repo.URL(), Version: "9.9.9"}, nil, defaults(t)); err == nil ||
		!strings.Contains(err.Error(), repo.URL()) || !strings.Contains(err.Error(), "9.9.9") {
		t.Errorf("a missing version: err = %v", err)
	}
}

func TestFetch_MutableVersionsExpire(t *testing.T) {
	repo := charttest.NewRepo()
	defer repo.Close()
	repo.Add(charttest.ConfigMapChart("demo", "1.0.0"))
	f := fetch.New(fetch.Options{})
	ttl, err := fetch.ParseTTL("", "1h", "50ms")
	if err != nil {
		t.Fatal(err)
	}
	src := fetch.Source{Chart: "demo", RepoURL: repo.URL(), Version: "latest"}
	if _, err := f.Fetch(context.Background(), src, nil, ttl); err != nil {
		t.Fatal(err)
	}
	repo.Add(charttest.ConfigMapChart("demo", "1.1.0"))
	got, _ := f.Fetch(context.Background(), src, nil, ttl)
	if c := chartOf(t, got); c != "demo-1.0.0" {
		t.Fatalf("within the mutable TTL: %s", c)
	}
	time.Sleep(80 * time.Millisecond)
	got, err = f.Fetch(context.Background(), src, nil, ttl)
	if err != nil {
		t.Fatal(err)
	}
	if c := chartOf(t, got); c != "demo-1.1.0" {
		t.Errorf("after the mutable TTL: %s, want the new latest", c)
	}
	// An exact version keeps its immutable TTL.
	exact := fetch.Source{Chart: "demo", RepoURL: repo.URL(), Version: "1.0.0"}
	if _, err := f.Fetch(context.Background(), exact, nil, ttl); err != nil {
		t.Fatal(err)
	}
	time.Sleep(80 * time.Millisecond)
	if got, _ := f.Fetch(context.Background(), exact, nil, ttl); !got.Hit {
		t.Error("an exact version expired with the mutable TTL")
	}
}

func TestFetch_CredentialsAndLimits(t *testing.T) {
	repo := charttest.NewRepo()
	defer repo.Close()
	repo.Username, repo.Password = "alice", "s3cret"
	url := repo.Add(charttest.ConfigMapChart("private", "1.0.0"))
	f := fetch.New(fetch.Options{MaxChartBytes: 1 << 20})
	ctx := context.Background()
	src := fetch.Source{Chart: "private", RepoURL: repo.URL(), Version: "1.0.0"}
	good := &fetch.Auth{Username: "alice", Password: "s3cret"}
	if _, err := f.Fetch(ctx, src, good, defaults(t)); err != nil {
		t.Fatal(err)
	}
	// The same source without credentials is not served from the cache.
	if _, err := f.Fetch(ctx, src, nil, defaults(t)); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("no credentials: err = %v, want 401", err)
	}
	if _, err := f.Fetch(ctx, src, &fetch.Auth{Username: "alice", Password: "nope"}, defaults(t)); err == nil || !strings.Contains(err.Error(), "credentials were refused") {
		t.Errorf("wrong credentials: err = %v", err)
	}
	if _, err := f.Fetch(ctx, fetch.Source{Chart: url}, good, defaults(t)); err != nil {
		t.Errorf("by URL: %v", err)
	}
	big := charttest.Archive("big", "1.0.0", map[string]string{"templates/x.yaml": randomText(2 << 20)})
	repo.Add(big)
	if _, err := f.Fetch(ctx, fetch.Source{Chart: "big", RepoURL: repo.URL(), Version: "1.0.0"}, good, defaults(t)); err == nil || !strings.Contains(err.Error(), "allowed") {
		t.Errorf("a chart over the limit: err = %v", err)
	}
	repo.Close()
	if _, err := f.Fetch(ctx, fetch.Source{Chart: "private", RepoURL: repo.URL(), Version: "latest"}, good, defaults(t)); err == nil ||
		!strings.Contains(err.Error(), repo.URL()) || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("unreachable: err = %v", err)
	}
}

func TestFetch_BearerTokenOverTLS(t *testing.T) {
	repo := charttest.NewTLSRepo()
	defer repo.Close()
	repo.Token = "t0ken"
	repo.Add(charttest.ConfigMapChart("tokened", "2.0.0"))
	src := fetch.Source{Chart: "tokened", RepoURL: repo.URL(), Version: "2.0.0"}
	sec := &corev1.Secret{Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"token": []byte("t0ken"), "caFile": repo.CAPEM()}}
	a, err := fetch.AuthFromSecret(sec, src)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fetch.New(fetch.Options{}).Fetch(context.Background(), src, a, defaults(t)); err != nil {
		t.Fatal(err)
	}
}

func TestFetch_OCI(t *testing.T) {
	reg := charttest.NewRegistry()
	defer reg.Close()
	ref := reg.Push("charts", charttest.ConfigMapChart("podinfo", "6.7.0"))
	reg.Push("charts", charttest.ConfigMapChart("podinfo", "6.8.0"))
	reg.Push("charts", charttest.ConfigMapChart("podinfo", "7.0.0-beta.1"))
	f := fetch.New(fetch.Options{})
	ctx := context.Background()
	plain := &fetch.Auth{PlainHTTP: true}
	for version, want := range map[string]string{"6.7.0": "podinfo-6.7.0", "latest": "podinfo-6.8.0", "^6.0.0": "podinfo-6.8.0"} {
		got, err := f.Fetch(ctx, fetch.Source{Chart: ref, Version: version}, plain, defaults(t))
		if err != nil {
			t.Fatalf("version %q: %v", version, err)
		}
		if c := chartOf(t, got); c != want {
			t.Errorf("version %q: %s, want %s", version, c, want)
		}
	}
	before := reg.Blobs.Load()
	if got, err := f.Fetch(ctx, fetch.Source{Chart: ref, Version: "6.7.0"}, plain, defaults(t)); err != nil || !got.Hit || reg.Blobs.Load() != before {
		t.Errorf("a cached OCI chart was pulled again (hit %v, err %v)", got != nil && got.Hit, err)
	}

	private := charttest.NewRegistry()
	defer private.Close()
	private.Username, private.Password = "bob", "pw"
	pref := private.Push("team", charttest.ConfigMapChart("secret-app", "1.0.0"))
	sec := &corev1.Secret{Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"username": []byte("bob"), "password": []byte("pw"), "insecurePlainHTTP": []byte("true")}}
	a, err := fetch.AuthFromSecret(sec, fetch.Source{Chart: pref})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Fetch(ctx, fetch.Source{Chart: pref, Version: "1.0.0"}, a, defaults(t)); err != nil {
		t.Fatalf("private registry: %v", err)
	}
	if _, err := f.Fetch(ctx, fetch.Source{Chart: pref, Version: "1.0.0"}, plain, defaults(t)); err == nil {
		t.Error("a private registry answered without credentials")
	}
}

func TestAuthFromSecret_ShapesAndRefusals(t *testing.T) {
	https := fetch.Source{Chart: "app", RepoURL: "https://charts.example.com"}
	oci := fetch.Source{Chart: "oci://registry.example.com/charts/app"}
	docker := `{"auths":{"registry.example.com":{"auth":"` + "Ym9iOnB3" + `"}}}`
	cases := []struct {
		name string
		sec  corev1.Secret
		src  fetch.Source
		want string // user:password, or the error
	}{
		{"basic-auth", corev1.Secret{Type: corev1.SecretTypeBasicAuth, Data: map[string][]byte{"username": []byte("a"), "password": []byte("b")}}, https, "a:b"},
		{"dockerconfigjson", corev1.Secret{Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{".dockerconfigjson": []byte(docker)}}, oci, "bob:pw"},
		{"dockerconfigjson other host", corev1.Secret{Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{".dockerconfigjson": []byte(docker)}}, https, "error: no entry for charts.example.com"},
		{"token with OCI", corev1.Secret{Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"token": []byte("x")}}, oci, "error: cannot be used with an OCI source"},
		{"token over HTTP", corev1.Secret{Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"token": []byte("x")}}, fetch.Source{Chart: "a", RepoURL: "http://x"}, "error: only sent over HTTPS"},
		{"token and basic", corev1.Secret{Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"token": []byte("x"), "username": []byte("a"), "password": []byte("b")}}, https, "error: one credential method"},
		{"token and insecureSkipTLS", corev1.Secret{Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"token": []byte("x"), "insecureSkipTLS": []byte("true")}}, https, "error: never sent without TLS verification"},
		{"plain HTTP not OCI", corev1.Secret{Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"insecurePlainHTTP": []byte("true")}}, https, "error: OCI sources only"},
		{"unknown type", corev1.Secret{Type: "example.com/other"}, https, "error: want kubernetes.io/basic-auth"},
	}
	for _, c := range cases {
		a, err := fetch.AuthFromSecret(&c.sec, c.src)
		got := ""
		if err != nil {
			got = "error: " + err.Error()
		} else {
			got = a.Username + ":" + a.Password
		}
		if !strings.HasPrefix(c.want, "error: ") && got != c.want || strings.HasPrefix(c.want, "error: ") && !strings.Contains(got, strings.TrimPrefix(c.want, "error: ")) {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

// randomText is n bytes that gzip does not shrink much.
func randomText(n int) string {
	var b strings.Builder
	x := uint32(2463534242)
	for b.Len() < n {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b.WriteByte(byte('a' + x%26))
	}
	return b.String()
}
