package release

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/internal/boundary"
	"github.com/steward-oam/steward/internal/cueeval"
	"github.com/steward-oam/steward/internal/helm/chart"
	"github.com/steward-oam/steward/internal/helm/fetch"
)

// Reasons a chart cannot be prepared, as condition reasons.
const (
	// ReasonFetchFailed: the chart could not be fetched (unreachable
	// repository, missing version, refused credentials, not a chart).
	ReasonFetchFailed = "ChartFetchFailed"
	// ReasonFetching: the chart is being fetched; the render waits.
	ReasonFetching = "ChartFetching"
	// ReasonValuesFailed: valuesFrom or the credentials' Secret could not
	// be read, or the parameters are wrong.
	ReasonValuesFailed = "ChartValuesFailed"
)

// Error is a chart that cannot be prepared, naming its source.
type Error struct {
	Reason string
	Source string
	Err    error
	// Permanent says trying again does not help until the Application or
	// what it names changes: see Permanent.
	Permanent bool
}

func (e *Error) Error() string {
	if e.Source == "" {
		return e.Err.Error()
	}
	return fmt.Sprintf("chart %s: %v", e.Source, e.Err)
}
func (e *Error) Unwrap() error { return e.Err }

// Prepared is a chart ready to render, and what identifies the release's
// inputs.
type Prepared struct {
	Action *cueeval.ChartAction
	// Source and Digest name the chart fetched.
	Source string
	Digest string
	// Fingerprint changes when the chart or its merged values do.
	Fingerprint string
	Release     string
	Namespace   string
	// CreateNamespace asks for the release's namespace to be created when
	// it is missing (and never deleted, as Helm does).
	CreateNamespace bool
	MaxHistory      int
	Hit             bool
}

// Provider prepares vela/helm's #Render actions: it reads the
// credentials and valuesFrom, and fetches the chart in the background,
// waiting at most Wait for it, so that a slow repository does not hold a
// worker: the render is retried once the fetch is done.
type Provider struct {
	Fetcher *fetch.Fetcher
	// Wait is how long Prepare waits for a fetch (default 5s; negative
	// waits until the fetch ends).
	Wait time.Duration
	// Local lets a chart source be a path on this machine: a .tgz or a
	// chart directory (the CLI's offline render). Never in the controller.
	Local bool
	// Failures counts each render's permanent failures in a row, for the
	// controller to end the workflow after MaxRetries (the zero value is
	// ready).
	Failures Failures

	mu       sync.Mutex
	inflight map[string]*download
}

// download is one chart being fetched in the background, shared by
// every render that asks for it until it is done.
type download struct {
	done chan struct{}
	res  *fetch.Fetched
	err  error
}

// Prepare turns an action's parameters into the chart to render. r reads
// as the Application (on the hub); b is the Application's boundary (its
// namespace, and whether --no-cross-namespace-objects confines it), which
// the release namespace, the credentials' Secret and every valuesFrom
// source are held to before anything is read or fetched; kubeVersion is
// the target cluster's.
func (p *Provider) Prepare(ctx context.Context, r client.Reader, b boundary.Boundary, raw json.RawMessage, kubeVersion string) (*Prepared, error) {
	return p.prepare(ctx, r, b, raw, kubeVersion, p.Wait)
}

// Peek is Prepare that waits for no download: a chart not in the cache
// is fetched in the background and ReasonFetching returned at once. It is
// how a re-sync pass looks at whether a release's inputs moved.
func (p *Provider) Peek(ctx context.Context, r client.Reader, b boundary.Boundary, raw json.RawMessage, kubeVersion string) (*Prepared, error) {
	return p.prepare(ctx, r, b, raw, kubeVersion, time.Millisecond)
}

func (p *Provider) prepare(ctx context.Context, r client.Reader, b boundary.Boundary, raw json.RawMessage, kubeVersion string, wait time.Duration) (*Prepared, error) {
	params, err := ParseParams(raw)
	if err != nil {
		return nil, &Error{Reason: ReasonValuesFailed, Source: "?", Err: err, Permanent: true}
	}
	src := params.Source()
	// fail is a permanent failure unless the API server failed or refused
	// a read (see transientRead).
	fail := func(reason string, err error) error {
		return &Error{Reason: reason, Source: src.String(), Err: err, Permanent: !transientRead(err)}
	}
	appNamespace := b.Namespace
	releaseNS := params.ReleaseNamespace(appNamespace)
	if err := checkBoundary(b, params, releaseNS); err != nil {
		return nil, fail(boundary.As(err).Reason, err)
	}
	if n := len(params.ValuesFrom); n > MaxValuesFrom {
		return nil, fail(ReasonValuesFailed, fmt.Errorf("valuesFrom has %d entries, more than the %d allowed: merge them into fewer ConfigMaps or Secrets", n, MaxValuesFrom))
	}
	ttl, err := params.TTL()
	if err != nil {
		return nil, fail(ReasonValuesFailed, err)
	}
	timeout, err := params.Timeout()
	if err != nil {
		return nil, fail(ReasonValuesFailed, err)
	}
	var auth *fetch.Auth
	if params.Chart.Auth != nil && params.Chart.Auth.SecretRef != nil {
		ref := params.Chart.Auth.SecretRef
		ns := ref.Namespace
		if ns == "" {
			ns = releaseNS
		}
		if ns != releaseNS && ns != appNamespace {
			return nil, fail(ReasonValuesFailed, fmt.Errorf("auth.secretRef %s/%s: the Secret must be in the release's namespace %q or the Application's %q", ns, ref.Name, releaseNS, appNamespace))
		}
		var sec corev1.Secret
		if err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, &sec); err != nil {
			return nil, fail(ReasonValuesFailed, fmt.Errorf("auth.secretRef %s/%s: %w", ns, ref.Name, err))
		}
		if auth, err = fetch.AuthFromSecret(&sec, src); err != nil {
			return nil, fail(ReasonValuesFailed, fmt.Errorf("auth.secretRef %s/%s: %w", ns, ref.Name, err))
		}
	}
	if r == nil && len(params.ValuesFrom) > 0 {
		return nil, fail(ReasonValuesFailed, errors.New("valuesFrom is read from the cluster: render it connected to one"))
	}
	values, err := Values(ctx, r, params, appNamespace)
	if err != nil {
		return nil, fail(ReasonValuesFailed, err)
	}
	var got *fetch.Fetched
	switch {
	case p.Local && isLocal(src.Chart):
		if got, err = localChart(src.Chart); err != nil {
			return nil, &Error{Reason: ReasonFetchFailed, Source: src.String(), Err: err, Permanent: true}
		}
	case p.Fetcher == nil:
		return nil, fail(ReasonFetchFailed, errors.New("no chart is fetched here: give a local .tgz or chart directory as chart.source"))
	default:
		if got, err = p.fetch(ctx, src, auth, ttl, timeout, wait); err != nil {
			return nil, err
		}
	}
	rawValues, err := json.Marshal(values)
	if err != nil {
		return nil, fail(ReasonValuesFailed, err)
	}
	opts := chart.Options{
		ReleaseName: params.ReleaseName(), Namespace: releaseNS,
		IncludeCRDs: params.IncludeCRDs(), KeepTests: !params.SkipTests(), KubeVersion: kubeVersion,
	}
	sum := sha256.New()
	sum.Write([]byte(got.Digest))
	sum.Write(rawValues)
	optsJSON, _ := json.Marshal(opts)
	sum.Write(optsJSON)
	return &Prepared{
		Action:          &cueeval.ChartAction{Archive: got.Archive, Values: rawValues, Options: opts},
		Source:          src.String(),
		Digest:          got.Digest,
		Fingerprint:     hex.EncodeToString(sum.Sum(nil))[:16],
		Release:         opts.ReleaseName,
		Namespace:       releaseNS,
		CreateNamespace: params.CreateNamespace(),
		MaxHistory:      params.MaxHistory(),
		Hit:             got.Hit,
	}, nil
}

// checkBoundary holds the release namespace, the credentials' Secret and
// every valuesFrom source to the Application's boundary, before any of
// them is read: a confined Application reads and delivers nothing outside
// its namespace.
func checkBoundary(b boundary.Boundary, params *Params, releaseNS string) error {
	if err := b.CheckNamespace("the release namespace", releaseNS); err != nil {
		return err
	}
	if a := params.Chart.Auth; a != nil && a.SecretRef != nil {
		ns := a.SecretRef.Namespace
		if ns == "" {
			ns = releaseNS
		}
		if err := b.CheckNamespace(fmt.Sprintf("auth.secretRef Secret %s/%s", ns, a.SecretRef.Name), ns); err != nil {
			return err
		}
	}
	for i, vf := range params.ValuesFrom {
		ns := vf.Namespace
		if ns == "" {
			ns = releaseNS
		}
		if err := b.CheckNamespace(fmt.Sprintf("valuesFrom[%d] %s %s/%s", i, vf.Kind, ns, vf.Name), ns); err != nil {
			return err
		}
	}
	return nil
}

// maxInflight bounds the charts being fetched in the background at once,
// over all Applications: past it a render waits (ReasonFetching) and is
// tried again, rather than start one more.
const maxInflight = 256

// fetch fetches in the background and waits at most p.Wait; a fetch not
// done by then is left running, and ReasonFetching is returned.
func (p *Provider) fetch(ctx context.Context, src fetch.Source, auth *fetch.Auth, ttl fetch.TTL, timeout, wait time.Duration) (*fetch.Fetched, error) {
	key := src.String() + "\x00" + src.Version + "\x00" + authKey(auth)
	p.mu.Lock()
	if p.inflight == nil {
		p.inflight = map[string]*download{}
	}
	f, ok := p.inflight[key]
	if !ok && len(p.inflight) >= maxInflight {
		p.mu.Unlock()
		return nil, &Error{Reason: ReasonFetching, Source: src.String(), Err: fmt.Errorf("%d charts are being fetched; this one is fetched when they are done", maxInflight)}
	}
	if !ok {
		f = &download{done: make(chan struct{})}
		p.inflight[key] = f
		go func() {
			fctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			f.res, f.err = p.Fetcher.Fetch(fctx, src, auth, ttl)
			p.mu.Lock()
			delete(p.inflight, key)
			p.mu.Unlock()
			close(f.done)
		}()
	}
	p.mu.Unlock()
	switch {
	case wait < 0:
		// The CLI waits for the download.
		wait = timeout + time.Second
	case wait == 0:
		wait = 5 * time.Second
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-f.done:
		if f.err != nil {
			return nil, &Error{Reason: ReasonFetchFailed, Source: src.String(), Err: f.err, Permanent: fetch.IsPermanent(f.err)}
		}
		return f.res, nil
	case <-timer.C:
		return nil, &Error{Reason: ReasonFetching, Source: src.String(), Err: errors.New("still fetching; the render is retried when it is done")}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func authKey(a *fetch.Auth) string {
	if a == nil {
		return ""
	}
	b, _ := json.Marshal(a)
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
