package provider

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta/testrestmapper"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/steward-oam/steward/internal/egress"
)

func testEnv(t testing.TB, objs ...client.Object) *Env {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return &Env{
		Namespace: "team-a",
		App:       "app",
		Step:      "step",
		Client:    fake.NewClientBuilder().WithScheme(s).WithRESTMapper(testrestmapper.TestOnlyStaticRESTMapper(s)).WithObjects(objs...).Build(),
		Log:       logr.Discard(),
	}
}

// loopbackAllowed is an egress policy that lets the tests reach their
// loopback servers (refused by default).
func loopbackAllowed(t *testing.T) *egress.Policy {
	t.Helper()
	p, err := egress.New(egress.Options{Allow: []string{"127.0.0.1/32", "::1/128"}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func doHTTP(t *testing.T, reg Registry, env *Env, params any) (httpReturns, error) {
	t.Helper()
	out, err := reg.Do(context.Background(), env, Call{Provider: "http", Do: "do", Params: mustJSON(t, params)})
	var r httpReturns
	if err == nil {
		if uerr := json.Unmarshal(out, &r); uerr != nil {
			t.Fatalf("returns %s: %v", out, uerr)
		}
	}
	return r, err
}

func TestHTTPDo_PostWithHeadersFromSecretAnd404AsStatus(t *testing.T) {
	var got *http.Request
	var gotBody string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Clone(context.Background())
		b, _ := io.ReadAll(r.Body)
		gotBody = string(b)
		w.Header().Set("X-Reply", "yes")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"missing":true}`)
	}))
	defer srv.Close()
	env := testEnv(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "token", Namespace: "team-a"},
		Data:       map[string][]byte{"value": []byte("Bearer s3cret")},
	})
	r, err := doHTTP(t, HTTP(HTTPOptions{Egress: loopbackAllowed(t)}), env, map[string]any{
		"method": "POST", "url": srv.URL + "/hook?x=1",
		"request": map[string]any{
			"body":              `{"a":1}`,
			"header":            map[string]string{"X-Custom": "c"},
			"headersFromSecret": []map[string]string{{"header": "Authorization", "secret": "token", "key": "value"}},
		},
	})
	if err != nil {
		t.Fatalf("a 404 is a status, not an error: %v", err)
	}
	if r.StatusCode != 404 || r.Body != `{"missing":true}` || r.Header.Get("X-Reply") != "yes" {
		t.Fatalf("returns %+v", r)
	}
	if got.Method != "POST" || got.URL.Path != "/hook" || gotBody != `{"a":1}` {
		t.Fatalf("request %s %s %q", got.Method, got.URL, gotBody)
	}
	if got.Header.Get("Authorization") != "Bearer s3cret" || got.Header.Get("X-Custom") != "c" {
		t.Fatalf("headers %v", got.Header)
	}
}

func TestHTTPDo_DefaultContentTypeAndMissingSecret(t *testing.T) {
	var ct string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ct = r.Header.Get("Content-Type")
	}))
	defer srv.Close()
	env := testEnv(t)
	if _, err := doHTTP(t, HTTP(HTTPOptions{Egress: loopbackAllowed(t)}), env, map[string]any{"url": srv.URL}); err != nil {
		t.Fatal(err)
	}
	if ct != "application/json" {
		t.Fatalf("content-type %q, want KubeVela's default application/json", ct)
	}
	_, err := doHTTP(t, HTTP(HTTPOptions{Egress: loopbackAllowed(t)}), env, map[string]any{"url": srv.URL, "request": map[string]any{
		"headersFromSecret": []map[string]string{{"header": "Authorization", "secret": "absent", "key": "v"}},
	}})
	if err == nil || !strings.Contains(err.Error(), "team-a/absent") {
		t.Fatalf("want an error naming the missing Secret, got %v", err)
	}
}

func TestHTTPDo_RedirectToAnotherHostRefused(t *testing.T) {
	hit := false
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hit = true }))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/elsewhere", http.StatusFound)
	}))
	defer srv.Close()
	_, err := doHTTP(t, HTTP(HTTPOptions{Egress: loopbackAllowed(t)}), testEnv(t), map[string]any{"url": srv.URL})
	if err == nil || !strings.Contains(err.Error(), "redirect to http://"+strings.TrimPrefix(other.URL, "http://")+" refused") {
		t.Fatalf("want the cross-host redirect refused, got %v", err)
	}
	if hit {
		t.Fatal("the other host was reached")
	}
}

func TestHTTPDo_SameHostRedirectFollowedWithinLimit(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/old":
			http.Redirect(w, r, "/new", http.StatusMovedPermanently)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		default:
			_, _ = io.WriteString(w, "moved here")
		}
	}))
	defer srv.Close()
	reg := HTTP(HTTPOptions{Egress: loopbackAllowed(t)})
	r, err := doHTTP(t, reg, testEnv(t), map[string]any{"url": srv.URL + "/old"})
	if err != nil || r.StatusCode != 200 || r.Body != "moved here" {
		t.Fatalf("returns %+v, err %v", r, err)
	}
	if _, err := doHTTP(t, reg, testEnv(t), map[string]any{"url": srv.URL + "/loop"}); err == nil || !strings.Contains(err.Error(), "stopped after 3 redirects") {
		t.Fatalf("want a redirect loop stopped, got %v", err)
	}
}

// The response is bounded as the step will hold it, as JSON: a body of
// characters JSON escapes six times over is refused at a sixth of the
// size, and headers count too; reading stops at the bound.
func TestHTTPDo_ResultBound(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/escaped":
			_, _ = io.WriteString(w, strings.Repeat("<", 2048))
		case "/header":
			w.Header().Set("X-Big", strings.Repeat("h", 3000))
		default:
			_, _ = io.WriteString(w, strings.Repeat("x", 2048))
		}
	}))
	defer srv.Close()
	reg := HTTP(HTTPOptions{Egress: loopbackAllowed(t)})
	env := testEnv(t)
	env.MaxResultBytes = 3000
	r, err := doHTTP(t, reg, env, map[string]any{"url": srv.URL})
	if err != nil || len(r.Body) != 2048 {
		t.Fatalf("a body within the bound is read: %d bytes, %v", len(r.Body), err)
	}
	for _, path := range []string{"/escaped", "/header"} {
		_, err = doHTTP(t, reg, env, map[string]any{"url": srv.URL + path})
		var tl *TooLargeError
		if !errors.As(err, &tl) || !strings.Contains(err.Error(), "--max-step-action-result-size") {
			t.Fatalf("%s: want the result bound named, got %v", path, err)
		}
	}
}

func TestHTTPDo_Timeouts(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	start := time.Now()
	_, err := doHTTP(t, HTTP(HTTPOptions{Egress: loopbackAllowed(t)}), testEnv(t), map[string]any{"url": srv.URL, "request": map[string]any{"timeout": "200ms"}})
	if err == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("want a timeout after 200ms, got %v after %s", err, time.Since(start))
	}
	start = time.Now()
	_, err = doHTTP(t, HTTP(HTTPOptions{DefaultTimeout: 150 * time.Millisecond, Egress: loopbackAllowed(t)}), testEnv(t), map[string]any{"url": srv.URL})
	if err == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("want the default timeout, got %v after %s", err, time.Since(start))
	}
	fast := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer fast.Close()
	_, err = doHTTP(t, HTTP(HTTPOptions{Egress: loopbackAllowed(t)}), testEnv(t), map[string]any{"url": fast.URL, "request": map[string]any{"timeout": "10m"}})
	if err == nil || !strings.Contains(err.Error(), "exceeds the maximum of 1m0s") {
		t.Fatalf("want a timeout above the maximum refused, got %v", err)
	}
}

func TestHTTPDo_RateLimiter(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	reg := HTTP(HTTPOptions{Egress: loopbackAllowed(t)})
	p := map[string]any{"url": srv.URL + "/x?a=1", "request": map[string]any{"ratelimiter": map[string]any{"limit": 2, "period": "1h"}}}
	for i := 0; i < 2; i++ {
		if _, err := doHTTP(t, reg, testEnv(t), p); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	p["url"] = srv.URL + "/x?a=2" // the query does not count, as in KubeVela
	if _, err := doHTTP(t, reg, testEnv(t), p); err == nil || !strings.Contains(err.Error(), "rate limiter") {
		t.Fatalf("third request within the period: want refused, got %v", err)
	}
	other := testEnv(t)
	other.App = "other-app"
	if _, err := doHTTP(t, reg, other, p); err != nil {
		t.Fatalf("another Application has its own allowance: %v", err)
	}
}

func TestHTTPDo_TLSConfigFromSecret(t *testing.T) {
	clientCert, clientKey := selfSignedPEM(t)
	var sawClientCert bool
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawClientCert = len(r.TLS.PeerCertificates) == 1
		_, _ = io.WriteString(w, "secure")
	}))
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAnyClientCert}
	srv.StartTLS()
	defer srv.Close()
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	b64 := func(b []byte) []byte { return []byte(base64.StdEncoding.EncodeToString(b)) }
	env := testEnv(t,
		// KubeVela's format: PEM base64-encoded inside the Secret's data.
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tls", Namespace: "certs"},
			Data: map[string][]byte{"ca.crt": b64(caPEM), "client.crt": b64(clientCert), "client.key": b64(clientKey)}},
		// Plain PEM, in the Application's namespace.
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tls-plain", Namespace: "team-a"},
			Data: map[string][]byte{"ca.crt": caPEM, "client.crt": clientCert, "client.key": clientKey}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "half", Namespace: "team-a"},
			Data: map[string][]byte{"ca.crt": caPEM, "client.crt": clientCert}},
	)
	reg := HTTP(HTTPOptions{Egress: loopbackAllowed(t)})
	for _, tc := range []map[string]string{{"secret": "tls", "namespace": "certs"}, {"secret": "tls-plain"}} {
		sawClientCert = false
		r, err := doHTTP(t, reg, env, map[string]any{"url": srv.URL, "tls_config": tc})
		if err != nil || r.Body != "secure" || !sawClientCert {
			t.Fatalf("%v: returns %+v, client cert %v, err %v", tc, r, sawClientCert, err)
		}
	}
	if _, err := doHTTP(t, reg, env, map[string]any{"url": srv.URL}); err == nil {
		t.Fatal("without tls_config the test server's CA is not trusted")
	}
	if _, err := doHTTP(t, reg, env, map[string]any{"url": srv.URL, "tls_config": map[string]string{"secret": "absent"}}); err == nil || !strings.Contains(err.Error(), "team-a/absent") {
		t.Fatalf("a missing tls Secret fails clearly, got %v", err)
	}
	if _, err := doHTTP(t, reg, env, map[string]any{"url": srv.URL, "tls_config": map[string]string{"secret": "half"}}); err == nil || !strings.Contains(err.Error(), "both client.crt and client.key") {
		t.Fatalf("half a key pair fails clearly, got %v", err)
	}
}

func selfSignedPEM(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "step-client"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}
