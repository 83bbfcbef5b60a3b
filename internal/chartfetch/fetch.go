package chartfetch

import (
	"bytes"
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	repo "helm.sh/helm/v4/pkg/repo/v1"
	"sigs.k8s.io/yaml"
)

// Options bound a Fetcher.
type Options struct {
	// MaxChartBytes is the largest archive fetched (default 10 MiB).
	MaxChartBytes int64
	// MaxCacheBytes bounds the archives kept (default 64 MiB).
	MaxCacheBytes int64
	// Timeout bounds one fetch (default 1m).
	Timeout time.Duration
	// Observe, when set, is told of each cache event: "hit", "miss",
	// "fetch" (a download) and "error" (a failed one).
	Observe func(event string)
}

// maxIndexBytes bounds a repository's index.yaml.
const maxIndexBytes = 32 << 20

// Fetched is a chart archive and what it was resolved to.
type Fetched struct {
	Archive []byte
	// Digest is the archive's sha256, "sha256:<hex>".
	Digest string
	// Name and Version are the chart's, as the source resolved them
	// (empty for a URL).
	Name, Version string
	// Hit says the archive came from the cache.
	Hit bool
}

// Fetcher fetches chart archives and caches them: a source, version and
// set of credentials resolves to a digest for the TTL its version gets,
// and archives are kept once per digest, the least recently used dropped
// past MaxCacheBytes. Concurrent fetches of the same source share one
// download.
type Fetcher struct {
	o     Options
	group singleflight.Group

	mu       sync.Mutex
	resolved map[string]resolution
	archives map[string]*list.Element // digest → element of lru
	lru      *list.List               // of *archive, most recent first
	bytes    int64
}

type resolution struct {
	digest, name, version string
	expires               time.Time
}

type archive struct {
	digest string
	data   []byte
}

// New returns a Fetcher.
func New(o Options) *Fetcher {
	if o.MaxChartBytes <= 0 {
		o.MaxChartBytes = 10 << 20
	}
	if o.MaxCacheBytes <= 0 {
		o.MaxCacheBytes = 64 << 20
	}
	if o.Timeout <= 0 {
		o.Timeout = time.Minute
	}
	return &Fetcher{o: o, resolved: map[string]resolution{}, archives: map[string]*list.Element{}, lru: list.New()}
}

func (f *Fetcher) observe(event string) {
	if f.o.Observe != nil {
		f.o.Observe(event)
	}
}

// Fetch returns the chart src names at its version, from the cache while
// the resolution is fresh and the archive kept.
func (f *Fetcher) Fetch(ctx context.Context, src Source, auth *Auth, ttl TTL) (*Fetched, error) {
	key := string(src.Kind()) + "\x00" + src.Chart + "\x00" + src.RepoURL + "\x00" + src.Version + "\x00" + auth.identity()
	if got := f.cached(key); got != nil {
		f.observe("hit")
		return got, nil
	}
	f.observe("miss")
	v, err, _ := f.group.Do(key, func() (any, error) {
		if got := f.cached(key); got != nil {
			return got, nil
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.o.Timeout)
		defer cancel()
		got, err := f.fetch(ctx, src, auth)
		if err != nil {
			f.observe("error")
			return nil, fmt.Errorf("%s: %w", src, err)
		}
		f.observe("fetch")
		f.keep(key, got, ttl.For(src.Version))
		return got, nil
	})
	if err != nil {
		return nil, err
	}
	got := *v.(*Fetched)
	return &got, nil
}

// cached is the archive key resolves to, if fresh and kept.
func (f *Fetcher) cached(key string) *Fetched {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.resolved[key]
	if !ok || time.Now().After(r.expires) {
		delete(f.resolved, key)
		return nil
	}
	el, ok := f.archives[r.digest]
	if !ok {
		return nil
	}
	f.lru.MoveToFront(el)
	return &Fetched{Archive: el.Value.(*archive).data, Digest: r.digest, Name: r.name, Version: r.version, Hit: true}
}

// maxResolutions bounds the resolutions kept: sources, versions and
// credentials in use, a few hundred bytes each.
const maxResolutions = 16384

// sweep drops expired resolutions and, if that is not enough, a quarter
// of the rest (the archives they name stay in the LRU). The caller holds
// f.mu.
func (f *Fetcher) sweep() {
	now := time.Now()
	for k, r := range f.resolved {
		if now.After(r.expires) {
			delete(f.resolved, k)
		}
	}
	for k := range f.resolved {
		if len(f.resolved) < maxResolutions*3/4 {
			break
		}
		delete(f.resolved, k)
	}
}

// byDigest is the archive kept under digest, nil when there is none.
func (f *Fetcher) byDigest(digest string) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	if el, ok := f.archives[digest]; ok {
		f.lru.MoveToFront(el)
		return el.Value.(*archive).data
	}
	return nil
}

// keep caches an archive by digest and key's resolution for ttl.
func (f *Fetcher) keep(key string, got *Fetched, ttl time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ttl > 0 {
		if len(f.resolved) >= maxResolutions {
			f.sweep()
		}
		f.resolved[key] = resolution{digest: got.Digest, name: got.Name, version: got.Version, expires: time.Now().Add(ttl)}
	}
	if el, ok := f.archives[got.Digest]; ok {
		f.lru.MoveToFront(el)
		got.Archive = el.Value.(*archive).data // one copy per digest
		return
	}
	if ttl <= 0 {
		return
	}
	f.archives[got.Digest] = f.lru.PushFront(&archive{digest: got.Digest, data: got.Archive})
	f.bytes += int64(len(got.Archive))
	for f.bytes > f.o.MaxCacheBytes && f.lru.Len() > 1 {
		old := f.lru.Back()
		a := old.Value.(*archive)
		f.lru.Remove(old)
		delete(f.archives, a.digest)
		f.bytes -= int64(len(a.data))
	}
}

// fetch resolves and downloads, without the cache.
func (f *Fetcher) fetch(ctx context.Context, src Source, auth *Auth) (*Fetched, error) {
	switch src.Kind() {
	case KindOCI:
		return f.fetchOCI(ctx, src, auth)
	case KindURL:
		c, err := httpClient(auth)
		if err != nil {
			return nil, err
		}
		data, err := f.get(ctx, c, src.Chart, auth, f.o.MaxChartBytes)
		if err != nil {
			return nil, err
		}
		return fetched(data, "", ""), nil
	}
	if src.RepoURL == "" {
		return nil, errors.New("chart.repoURL is empty: a chart given by name needs its repository")
	}
	c, err := httpClient(auth)
	if err != nil {
		return nil, err
	}
	base := strings.TrimSuffix(src.RepoURL, "/")
	raw, err := f.get(ctx, c, base+"/index.yaml", auth, maxIndexBytes)
	if err != nil {
		return nil, err
	}
	var idx repo.IndexFile
	if err := yaml.Unmarshal(raw, &idx); err != nil {
		return nil, fmt.Errorf("the repository's index.yaml does not parse: %w", err)
	}
	idx.SortEntries()
	version := src.Version
	if strings.EqualFold(version, "latest") {
		version = ""
	}
	cv, err := idx.Get(src.Chart, version)
	if err != nil {
		return nil, fmt.Errorf("no version matches %q in the repository: %w", src.Version, err)
	}
	if len(cv.URLs) == 0 {
		return nil, fmt.Errorf("%s %s has no URL in the repository's index", cv.Name, cv.Version)
	}
	u, err := repo.ResolveReferenceURL(base, cv.URLs[0])
	if err != nil {
		return nil, err
	}
	if cv.Digest != "" {
		// Content-addressed: an archive kept under the index's digest is
		// not downloaded again (another version string resolved to it).
		if data := f.byDigest("sha256:" + strings.TrimPrefix(cv.Digest, "sha256:")); data != nil {
			return fetched(data, cv.Name, cv.Version), nil
		}
	}
	// Credentials go to the repository's own host only, as Helm's
	// --pass-credentials default.
	sendAuth := auth
	if hostOf(Source{RepoURL: u}) != hostOf(src) {
		sendAuth = nil
	}
	data, err := f.get(ctx, c, u, sendAuth, f.o.MaxChartBytes)
	if err != nil {
		return nil, err
	}
	got := fetched(data, cv.Name, cv.Version)
	if cv.Digest != "" && "sha256:"+strings.TrimPrefix(cv.Digest, "sha256:") != got.Digest {
		return nil, fmt.Errorf("%s %s: the archive's digest %s is not the index's %s", cv.Name, cv.Version, got.Digest, cv.Digest)
	}
	return got, nil
}

func fetched(data []byte, name, version string) *Fetched {
	sum := sha256.Sum256(data)
	return &Fetched{Archive: data, Digest: "sha256:" + hex.EncodeToString(sum[:]), Name: name, Version: version}
}

// httpClient is an HTTP client with auth's TLS settings.
func httpClient(auth *Auth) (*http.Client, error) {
	cfg, err := auth.tlsConfig()
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = http.ProxyFromEnvironment
	if cfg != nil {
		tr.TLSClientConfig = cfg
	}
	return &http.Client{Transport: tr}, nil
}

// get downloads at most limit bytes of u.
func (f *Fetcher) get(ctx context.Context, c *http.Client, u string, auth *Auth, limit int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if auth != nil {
		switch {
		case auth.Token != "":
			req.Header.Set("Authorization", "Bearer "+auth.Token)
		case auth.Username != "":
			req.SetBasicAuth(auth.Username, auth.Password)
		}
	}
	res, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("unreachable: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		msg := fmt.Sprintf("GET %s: %s", redact(u), res.Status)
		if res.StatusCode == http.StatusUnauthorized || res.StatusCode == http.StatusForbidden {
			msg += " (the credentials were refused, or none were given)"
		}
		return nil, errors.New(msg)
	}
	if res.ContentLength > limit {
		return nil, fmt.Errorf("%s is %d bytes, more than the %d allowed", redact(u), res.ContentLength, limit)
	}
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(res.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", redact(u), err)
	}
	if n > limit {
		return nil, fmt.Errorf("%s is more than the %d bytes allowed", redact(u), limit)
	}
	return buf.Bytes(), nil
}
