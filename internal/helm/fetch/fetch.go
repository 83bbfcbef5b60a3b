package fetch

import (
	"bytes"
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
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
	// DialContext, when set, makes every connection (repository index,
	// archive, OCI registry and its token service, each redirect): the
	// controller passes its egress policy's, which checks the address
	// actually dialled. With it set no proxy from the environment is
	// used, since a proxy would make the dialled address the proxy's.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// MaxConcurrentFetches bounds the downloads in flight at once,
	// whatever their sources (default 4); the rest wait their turn
	// within their Timeout.
	MaxConcurrentFetches int
}

// maxRedirects bounds the redirects one request follows.
const maxRedirects = 10

// Failures are remembered per resolution key, so that a source that
// fails is not fetched again on every render: first for
// failureBackoff, doubling to maxFailureBackoff.
const (
	failureBackoff    = 30 * time.Second
	maxFailureBackoff = 5 * time.Minute
)

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
	slots chan struct{} // MaxConcurrentFetches

	mu       sync.Mutex
	resolved map[string]resolution
	failed   map[string]failure
	archives map[string]*list.Element // digest → element of lru
	lru      *list.List               // of *archive, most recent first
	bytes    int64
}

// failure is a resolution key's last failed fetch.
type failure struct {
	err     error
	backoff time.Duration
	until   time.Time
}

type resolution struct {
	digest, name, version string
	expires               time.Time
}

// archive is a kept chart and the credential identities that fetched
// it: a fetch with other credentials (or none) that finds its digest
// named by an index or manifest downloads it itself, so that knowing a
// private chart's digest does not serve it.
type archive struct {
	digest     string
	data       []byte
	identities map[string]bool
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
	if o.MaxConcurrentFetches <= 0 {
		o.MaxConcurrentFetches = 4
	}
	return &Fetcher{o: o, slots: make(chan struct{}, o.MaxConcurrentFetches),
		resolved: map[string]resolution{}, failed: map[string]failure{},
		archives: map[string]*list.Element{}, lru: list.New()}
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
	if err := f.recentFailure(key); err != nil {
		return nil, err
	}
	v, err, _ := f.group.Do(key, func() (any, error) {
		if got := f.cached(key); got != nil {
			return got, nil
		}
		if err := f.recentFailure(key); err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.o.Timeout)
		defer cancel()
		select {
		case f.slots <- struct{}{}:
			defer func() { <-f.slots }()
		case <-ctx.Done():
			return nil, fmt.Errorf("%s: waited %s for one of the %d fetches in flight to finish", src, f.o.Timeout, cap(f.slots))
		}
		got, err := f.fetch(ctx, src, auth)
		if err != nil {
			f.observe("error")
			err = fmt.Errorf("%s: %w", src, err)
			f.fail(key, err)
			return nil, err
		}
		f.observe("fetch")
		f.keep(key, auth.identity(), got, ttl.For(src.Version))
		return got, nil
	})
	if err != nil {
		return nil, err
	}
	got := *v.(*Fetched)
	return &got, nil
}

// recentFailure is key's last failure while its backoff lasts.
func (f *Fetcher) recentFailure(key string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	fl, ok := f.failed[key]
	if !ok || time.Now().After(fl.until) {
		return nil
	}
	return fmt.Errorf("%w (failed %s ago; tried again after %s)", fl.err,
		time.Since(fl.until.Add(-fl.backoff)).Round(time.Second), fl.backoff)
}

// fail remembers key's failure: for failureBackoff the first time, for
// twice the last backoff (at most maxFailureBackoff) when it fails again
// soon after.
func (f *Fetcher) fail(key string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	backoff := failureBackoff
	if last, ok := f.failed[key]; ok && time.Since(last.until) < maxFailureBackoff {
		backoff = min(2*last.backoff, maxFailureBackoff)
	}
	if len(f.failed) >= maxResolutions {
		now := time.Now()
		for k, fl := range f.failed {
			if now.After(fl.until.Add(maxFailureBackoff)) || len(f.failed) >= maxResolutions {
				delete(f.failed, k)
			}
		}
	}
	f.failed[key] = failure{err: err, backoff: backoff, until: time.Now().Add(backoff)}
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

// byDigest is the archive kept under digest, nil when there is none or
// when it was fetched only with credentials other than identity's.
func (f *Fetcher) byDigest(digest, identity string) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	if el, ok := f.archives[digest]; ok {
		a := el.Value.(*archive)
		if !a.identities[identity] {
			return nil
		}
		f.lru.MoveToFront(el)
		return a.data
	}
	return nil
}

// maxIdentities bounds the credential identities recorded per archive;
// past it the archive is re-downloaded by the ones not recorded.
const maxIdentities = 64

// keep caches an archive by digest, as fetched by identity, and key's
// resolution for ttl.
func (f *Fetcher) keep(key, identity string, got *Fetched, ttl time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ttl > 0 {
		if len(f.resolved) >= maxResolutions {
			f.sweep()
		}
		f.resolved[key] = resolution{digest: got.Digest, name: got.Name, version: got.Version, expires: time.Now().Add(ttl)}
	}
	delete(f.failed, key)
	if el, ok := f.archives[got.Digest]; ok {
		f.lru.MoveToFront(el)
		a := el.Value.(*archive)
		if len(a.identities) < maxIdentities {
			a.identities[identity] = true
		}
		got.Archive = a.data // one copy per digest
		return
	}
	if ttl <= 0 {
		return
	}
	f.archives[got.Digest] = f.lru.PushFront(&archive{digest: got.Digest, data: got.Archive, identities: map[string]bool{identity: true}})
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
		c, err := f.httpClient(auth)
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
		return nil, permanent(errors.New("chart.repoURL is empty: a chart given by name needs its repository"))
	}
	c, err := f.httpClient(auth)
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
		return nil, permanent(fmt.Errorf("no version matches %q in the repository: %w", src.Version, err))
	}
	if len(cv.URLs) == 0 {
		return nil, permanent(fmt.Errorf("%s %s has no URL in the repository's index", cv.Name, cv.Version))
	}
	u, err := repo.ResolveReferenceURL(base, cv.URLs[0])
	if err != nil {
		return nil, err
	}
	if cv.Digest != "" {
		// Content-addressed: an archive kept under the index's digest is
		// not downloaded again (another version string resolved to it).
		if data := f.byDigest("sha256:"+strings.TrimPrefix(cv.Digest, "sha256:"), auth.identity()); data != nil {
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

// httpClient is an HTTP client with auth's TLS settings, dialling with
// Options.DialContext, whose redirects are checked by checkRedirect.
func (f *Fetcher) httpClient(auth *Auth) (*http.Client, error) {
	cfg, err := auth.tlsConfig()
	if err != nil {
		return nil, permanent(err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = http.ProxyFromEnvironment
	if f.o.DialContext != nil {
		tr.Proxy = nil
		tr.DialContext = f.o.DialContext
	}
	if cfg != nil {
		tr.TLSClientConfig = cfg
	}
	return &http.Client{Transport: tr, CheckRedirect: checkRedirect}, nil
}

// checkRedirect follows at most maxRedirects redirects, never from
// https to http, and sends the credentials only while the redirect stays
// on the first request's scheme and host (net/http would keep them for a
// subdomain, and a basic-auth header set by hand on any host).
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	first := via[0].URL
	if first.Scheme == "https" && req.URL.Scheme != "https" {
		return fmt.Errorf("refused a redirect from https to %s", redact(req.URL.String()))
	}
	if req.URL.Scheme != first.Scheme || !strings.EqualFold(req.URL.Host, first.Host) {
		req.Header.Del("Authorization")
	}
	return nil
}

// get downloads at most limit bytes of u.
func (f *Fetcher) get(ctx context.Context, c *http.Client, u string, auth *Auth, limit int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, permanent(err)
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
		if permanentStatus(res.StatusCode) {
			return nil, permanent(errors.New(msg))
		}
		return nil, errors.New(msg)
	}
	if res.ContentLength > limit {
		return nil, permanent(fmt.Errorf("%s is %d bytes, more than the %d allowed", redact(u), res.ContentLength, limit))
	}
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(res.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", redact(u), err)
	}
	if n > limit {
		return nil, permanent(fmt.Errorf("%s is more than the %d bytes allowed", redact(u), limit))
	}
	return buf.Bytes(), nil
}
