package provider

import (
	"bytes"
	"container/list"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/internal/egress"
)

// HTTPOptions bound what `vela/http` requests may do.
type HTTPOptions struct {
	// DefaultTimeout applies when a request names none (KubeVela's: 3s).
	DefaultTimeout time.Duration
	// MaxTimeout is the longest timeout a request may ask for (60s); a
	// longer one is refused, so a step cannot hold a worker for ever.
	MaxTimeout time.Duration
	// MaxRedirects is how many same-host redirects are followed (3).
	// Redirects to another host (or scheme) are never followed.
	MaxRedirects int
	// Egress decides every address a request dials (loopback, link-local
	// and the controller's own listeners are refused unless allowed); nil
	// is egress's default policy. The response (headers and body) is
	// bounded by Env.MaxResultBytes.
	Egress *egress.Policy
}

// maxHeaderBytes bounds the headers of a response, before the result's
// own bound counts them.
const maxHeaderBytes = 1 << 20

const (
	defaultHTTPTimeout  = 3 * time.Second
	defaultHTTPMax      = 60 * time.Second
	defaultHTTPRedirect = 3
	rateLimiterEntries  = 1024
)

func (o HTTPOptions) withDefaults() HTTPOptions {
	if o.DefaultTimeout <= 0 {
		o.DefaultTimeout = defaultHTTPTimeout
	}
	if o.MaxTimeout <= 0 {
		o.MaxTimeout = defaultHTTPMax
	}
	if o.DefaultTimeout > o.MaxTimeout {
		o.DefaultTimeout = o.MaxTimeout
	}
	if o.MaxRedirects < 0 {
		o.MaxRedirects = 0
	} else if o.MaxRedirects == 0 {
		o.MaxRedirects = defaultHTTPRedirect
	}
	return o
}

// httpParams are http.#HTTPDo's $params.
type httpParams struct {
	Method  string `json:"method"`
	URL     string `json:"url"`
	Request *struct {
		Timeout     string            `json:"timeout"`
		Body        string            `json:"body"`
		Header      map[string]string `json:"header"`
		Trailer     map[string]string `json:"trailer"`
		RateLimiter *struct {
			Limit  int    `json:"limit"`
			Period string `json:"period"`
		} `json:"ratelimiter"`
		HeadersFromSecret []struct {
			Header string `json:"header"`
			Secret string `json:"secret"`
			Key    string `json:"key"`
		} `json:"headersFromSecret"`
	} `json:"request"`
	TLSConfig *struct {
		Secret    string `json:"secret"`
		Namespace string `json:"namespace"`
	} `json:"tls_config"`
}

// httpReturns are http.#HTTPDo's $returns.
type httpReturns struct {
	Body       string      `json:"body"`
	Header     http.Header `json:"header,omitempty"`
	Trailer    http.Header `json:"trailer,omitempty"`
	StatusCode int         `json:"statusCode"`
}

// HTTP returns the `vela/http` actions: "http.do".
func HTTP(opts HTTPOptions) Registry {
	o := opts.withDefaults()
	h := &httpDoer{opts: o, limits: newRateLimits(rateLimiterEntries), transport: o.Egress.Transport(nil, maxHeaderBytes)}
	return Registry{"http.do": h.do}
}

type httpDoer struct {
	opts   HTTPOptions
	limits *rateLimits
	// transport is shared by requests without tls_config; it dials
	// through the egress policy.
	transport *http.Transport
}

func (h *httpDoer) do(ctx context.Context, env *Env, raw json.RawMessage) (json.RawMessage, error) {
	var p httpParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("http.do: invalid $params: %w", err)
	}
	if p.Method == "" {
		p.Method = http.MethodGet
	}
	if p.URL == "" {
		return nil, errors.New("http.do: url is required")
	}
	timeout := h.opts.DefaultTimeout
	header := http.Header{}
	var trailer http.Header
	var body io.Reader
	if r := p.Request; r != nil {
		if r.Timeout != "" {
			d, err := time.ParseDuration(r.Timeout)
			if err != nil || d <= 0 {
				return nil, fmt.Errorf("http.do: invalid timeout %q", r.Timeout)
			}
			if d > h.opts.MaxTimeout {
				return nil, fmt.Errorf("http.do: timeout %s exceeds the maximum of %s", d, h.opts.MaxTimeout)
			}
			timeout = d
		}
		if rl := r.RateLimiter; rl != nil {
			period, err := time.ParseDuration(rl.Period)
			if err != nil || period <= 0 {
				return nil, fmt.Errorf("http.do: invalid ratelimiter period %q", rl.Period)
			}
			if rl.Limit <= 0 {
				return nil, fmt.Errorf("http.do: invalid ratelimiter limit %d", rl.Limit)
			}
			// KubeVela keys its limiter by method and URL without query;
			// ours is also per Application, so that one tenant's steps
			// cannot use up another's allowance.
			key := strings.Join([]string{env.Namespace, env.App, p.Method, strings.SplitN(p.URL, "?", 2)[0]}, "\x00")
			if !h.limits.allow(key, rl.Limit, period) {
				return nil, fmt.Errorf("http.do: request exceeds the rate limiter (%d per %s)", rl.Limit, period)
			}
		}
		body = strings.NewReader(r.Body)
		for k, v := range r.Header {
			header.Add(k, v)
		}
		if len(r.Trailer) > 0 {
			trailer = http.Header{}
			for k, v := range r.Trailer {
				trailer.Add(k, v)
			}
		}
		if len(header) == 0 {
			header.Set("Content-Type", "application/json")
		}
		for _, hs := range r.HeadersFromSecret {
			// The Application's own namespace, which the boundary always
			// allows: a header's Secret is never another namespace's.
			v, err := secretValue(ctx, env, env.Namespace, hs.Secret, hs.Key)
			if err != nil {
				return nil, fmt.Errorf("http.do: header %q: %w", hs.Header, err)
			}
			header.Set(hs.Header, string(v))
		}
	} else {
		header.Set("Content-Type", "application/json")
	}

	transport := h.transport
	if p.TLSConfig != nil {
		tr, err := h.tlsTransport(ctx, env, p.TLSConfig.Secret, p.TLSConfig.Namespace)
		if err != nil {
			return nil, fmt.Errorf("http.do: tls_config: %w", err)
		}
		defer tr.CloseIdleConnections()
		transport = tr
	}

	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, p.Method, p.URL, body)
	if err != nil {
		return nil, fmt.Errorf("http.do: %w", err)
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return nil, fmt.Errorf("http.do: url scheme %q is not http or https", req.URL.Scheme)
	}
	req.Header = header
	if trailer != nil {
		req.Trailer = trailer
		if req.Body != nil && req.ContentLength > 0 {
			req.ContentLength = -1 // trailers go only with a chunked body
		}
	}
	cl := &http.Client{Transport: transport, Timeout: timeout, CheckRedirect: h.checkRedirect}
	resp, err := cl.Do(req)
	if err != nil {
		if egress.IsDenied(err) {
			return nil, Refused(fmt.Errorf("http.do: %s %s: %w", p.Method, p.URL, err))
		}
		return nil, fmt.Errorf("http.do: %s %s: %w", p.Method, p.URL, err)
	}
	defer func() { _ = resp.Body.Close() }()
	budget := resultBudget{what: fmt.Sprintf("the response of %s %s", p.Method, p.URL), limit: env.maxResult()}
	if err := budget.addBytes(headerLen(resp.Header)); err != nil {
		return nil, err
	}
	b, err := readBounded(resp.Body, &budget)
	if err != nil {
		var tl *TooLargeError
		if errors.As(err, &tl) {
			return nil, err
		}
		return nil, fmt.Errorf("http.do: %s %s: reading the response: %w", p.Method, p.URL, err)
	}
	if err := budget.addBytes(headerLen(resp.Trailer)); err != nil {
		return nil, err
	}
	return json.Marshal(httpReturns{Body: string(b), Header: resp.Header, Trailer: resp.Trailer, StatusCode: resp.StatusCode})
}

// readBounded reads a body while its size as a JSON string stays within
// the budget: reading stops at the first chunk past it, so a response of
// characters JSON escapes six times over costs no more than the bound.
func readBounded(r io.Reader, b *resultBudget) ([]byte, error) {
	var out []byte
	buf := make([]byte, 32<<10)
	if err := b.addBytes(2); err != nil { // the quotes
		return nil, err
	}
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if berr := b.addBytes(jsonStringLen(buf[:n]) - 2); berr != nil {
				return nil, berr
			}
			out = append(out, buf[:n]...)
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// headerLen is about what h costs as JSON: every name and value encoded,
// with their punctuation.
func headerLen(h http.Header) int64 {
	var n int64
	for k, vs := range h {
		n += jsonStringLen([]byte(k)) + 3
		for _, v := range vs {
			n += jsonStringLen([]byte(v)) + 1
		}
	}
	return n
}

// checkRedirect follows a redirect only to the same scheme and host, at
// most MaxRedirects times.
func (h *httpDoer) checkRedirect(req *http.Request, via []*http.Request) error {
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
		return fmt.Errorf("redirect to %s://%s refused: only redirects to the same host (%s://%s) are followed", req.URL.Scheme, req.URL.Host, first.Scheme, first.Host)
	}
	if len(via) > h.opts.MaxRedirects {
		return fmt.Errorf("stopped after %d redirects", h.opts.MaxRedirects)
	}
	return nil
}

// tlsTransport builds a transport trusting the CA and presenting the
// client certificate of a Secret (keys ca.crt, client.crt, client.key,
// as KubeVela reads them). Unlike KubeVela, which ignores a tls_config
// it cannot use, a missing Secret or a bad certificate fails the action.
func (h *httpDoer) tlsTransport(ctx context.Context, env *Env, name, namespace string) (*http.Transport, error) {
	if name == "" {
		return nil, errors.New("secret is required")
	}
	if ns, n, ok := strings.Cut(name, "/"); ok {
		namespace, name = ns, n
	}
	if namespace == "" {
		namespace = env.Namespace
	}
	if err := env.Boundary.CheckNamespace(fmt.Sprintf("Secret %s/%s", namespace, name), namespace); err != nil {
		return nil, Refused(err)
	}
	sec, err := getSecret(ctx, env, namespace, name)
	if err != nil {
		return nil, err
	}
	tr := h.transport.Clone()
	cfg := &tls.Config{NextProtos: []string{"http/1.1"}, MinVersion: tls.VersionTLS12}
	if tr.TLSClientConfig != nil {
		cfg = tr.TLSClientConfig.Clone()
		cfg.NextProtos = []string{"http/1.1"}
	}
	tr.ForceAttemptHTTP2 = false
	if ca, ok := sec.Data["ca.crt"]; ok {
		pem, err := pemData(ca)
		if err != nil {
			return nil, fmt.Errorf("secret %s/%s key ca.crt: %w", namespace, name, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("secret %s/%s key ca.crt holds no PEM certificate", namespace, name)
		}
		cfg.RootCAs = pool
	}
	crt, hasCrt := sec.Data["client.crt"]
	key, hasKey := sec.Data["client.key"]
	if hasCrt != hasKey {
		return nil, fmt.Errorf("secret %s/%s must hold both client.crt and client.key, or neither", namespace, name)
	}
	if hasCrt {
		crtPEM, err := pemData(crt)
		if err != nil {
			return nil, fmt.Errorf("secret %s/%s key client.crt: %w", namespace, name, err)
		}
		keyPEM, err := pemData(key)
		if err != nil {
			return nil, fmt.Errorf("secret %s/%s key client.key: %w", namespace, name, err)
		}
		pair, err := tls.X509KeyPair(crtPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("secret %s/%s: client key pair: %w", namespace, name, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	tr.TLSClientConfig = cfg
	return tr, nil
}

// pemData returns a Secret value as PEM: KubeVela stores the PEM
// base64-encoded once more inside the Secret's data; plain PEM is
// accepted too.
func pemData(v []byte) ([]byte, error) {
	if bytes.Contains(v, []byte("-----BEGIN")) {
		return v, nil
	}
	out, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(v)))
	if err != nil {
		return nil, errors.New("neither PEM nor base64-encoded PEM")
	}
	return out, nil
}

func getSecret(ctx context.Context, env *Env, namespace, name string) (*corev1.Secret, error) {
	if env.Client == nil {
		return nil, errors.New("no client to read Secrets with")
	}
	sec := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, sec); err != nil {
		return nil, fmt.Errorf("reading Secret %s/%s: %w", namespace, name, err)
	}
	return sec, nil
}

func secretValue(ctx context.Context, env *Env, namespace, name, key string) ([]byte, error) {
	sec, err := getSecret(ctx, env, namespace, name)
	if err != nil {
		return nil, err
	}
	v, ok := sec.Data[key]
	if !ok {
		return nil, fmt.Errorf("key %q not found in Secret %s/%s", key, namespace, name)
	}
	return v, nil
}

// rateLimits holds KubeVela's per-request-key token buckets (a burst of
// limit, refilled one token per period), least recently used evicted.
type rateLimits struct {
	mu    sync.Mutex
	max   int
	order *list.List // of *rateEntry, most recent first
	byKey map[string]*list.Element
}

type rateEntry struct {
	key string
	lim *rate.Limiter
}

func newRateLimits(max int) *rateLimits {
	return &rateLimits{max: max, order: list.New(), byKey: map[string]*list.Element{}}
}

func (r *rateLimits) allow(key string, limit int, period time.Duration) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	every := rate.Every(period)
	if el, ok := r.byKey[key]; ok {
		e := el.Value.(*rateEntry)
		r.order.MoveToFront(el)
		if e.lim.Limit() != every || e.lim.Burst() != limit {
			e.lim = rate.NewLimiter(every, limit)
		}
		return e.lim.Allow()
	}
	e := &rateEntry{key: key, lim: rate.NewLimiter(every, limit)}
	r.byKey[key] = r.order.PushFront(e)
	for r.order.Len() > r.max {
		last := r.order.Back()
		r.order.Remove(last)
		delete(r.byKey, last.Value.(*rateEntry).key)
	}
	return e.lim.Allow()
}
