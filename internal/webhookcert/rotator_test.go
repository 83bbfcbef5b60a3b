package webhookcert

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/internal/testcp"
)

// The rotator's Secret and configuration are the API server's: tested
// against a real one.
var plane *testcp.Plane

func TestMain(m *testing.M) { testcp.Main(m, "webhookcert", &plane) }

func testClient(t *testing.T) client.Client { return testcp.ClientT(t, plane) }

// setup returns a client, a namespace and a webhook configuration (two
// webhooks, no caBundle) for one test.
func setup(t *testing.T) (client.Client, string, string) {
	t.Helper()
	c := testClient(t)
	ctx := context.Background()
	name := fmt.Sprintf("wc-%d", time.Now().UnixNano()%1e9)
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	ignore, none := admissionregistrationv1.Ignore, admissionregistrationv1.SideEffectClassNone
	hook := func(n string) admissionregistrationv1.ValidatingWebhook {
		url := "https://127.0.0.1:1/" + n
		return admissionregistrationv1.ValidatingWebhook{Name: n + ".steward.test", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url},
			FailurePolicy: &ignore, SideEffects: &none, AdmissionReviewVersions: []string{"v1"}}
	}
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{hook("a"), hook("b")}}
	if err := c.Create(ctx, vwc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, vwc) })
	return c, name, name
}

func options(ns, vwc string, dir string, now *time.Time) Options {
	return Options{Namespace: ns, SecretName: "certs", DNSNames: []string{"steward-webhook." + ns + ".svc"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		WebhookConfigurations: []string{vwc}, CertDir: dir, Now: func() time.Time { return *now }}
}

func secretOf(t *testing.T, c client.Client, ns string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "certs"}, s); err != nil {
		t.Fatal(err)
	}
	return s
}

func bundleOf(t *testing.T, c client.Client, vwc string) [][]byte {
	t.Helper()
	live := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: vwc}, live); err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, w := range live.Webhooks {
		out = append(out, w.ClientConfig.CABundle)
	}
	return out
}

// serve runs a TLS server with the files in dir and calls it as the API
// server would: trusting only caBundle, by serverName.
func serve(t *testing.T, dir string, caBundle []byte, serverName string, at time.Time) error {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
	if err != nil {
		return err
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ErrorLog: log.New(io.Discard, "", 0), Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })}
	go func() { _ = srv.Serve(l) }()
	defer srv.Close()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caBundle) {
		t.Fatal("the caBundle holds no certificate")
	}
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: serverName, Time: func() time.Time { return at }}}}
	resp, err := hc.Get("https://" + l.Addr().String())
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// The API server, given the injected caBundle, trusts the webhook at its
// Service name and at 127.0.0.1; a second pass writes nothing.
func TestRotator_IssuesInjectsAndServes(t *testing.T) {
	c, ns, vwc := setup(t)
	now := time.Now()
	dir := t.TempDir()
	r := New(c, options(ns, vwc, dir, &now))
	if err := r.Ensure(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.Ready():
	default:
		t.Fatal("not ready after Ensure")
	}
	bundles := bundleOf(t, c, vwc)
	if len(bundles[0]) == 0 || string(bundles[0]) != string(bundles[1]) || string(bundles[0]) != string(secretOf(t, c, ns).Data[KeyCA]) {
		t.Fatal("the caBundle was not injected into every webhook")
	}
	for _, name := range []string{"steward-webhook." + ns + ".svc", "127.0.0.1"} {
		if err := serve(t, dir, bundles[0], name, now); err != nil {
			t.Fatalf("TLS to %s: %v", name, err)
		}
	}
	if err := serve(t, dir, bundles[0], "elsewhere.example", now); err == nil {
		t.Fatal("the certificate is valid for a name it was not issued for")
	}
	rv := secretOf(t, c, ns).ResourceVersion
	live := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	_ = c.Get(context.Background(), client.ObjectKey{Name: vwc}, live)
	if err := r.Ensure(context.Background()); err != nil {
		t.Fatal(err)
	}
	again := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	_ = c.Get(context.Background(), client.ObjectKey{Name: vwc}, again)
	if secretOf(t, c, ns).ResourceVersion != rv || again.ResourceVersion != live.ResourceVersion {
		t.Fatal("a second pass wrote although nothing was due")
	}
}

// The serving certificate is re-issued by the same CA past two thirds of
// its life; the CA past two thirds of its own is replaced, the old one
// staying in the bundle, so that a client holding the old bundle keeps
// trusting the webhook until the switch; an expired CA leaves the bundle.
func TestRotator_RotatesBeforeExpiry(t *testing.T) {
	c, ns, vwc := setup(t)
	now := time.Now()
	dir := t.TempDir()
	opts := options(ns, vwc, dir, &now)
	r := New(c, opts)
	ctx := context.Background()
	if err := r.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	first := secretOf(t, c, ns)
	now = now.Add(70 * 24 * time.Hour) // 90-day certificate: a third left is 30 days
	if err := r.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	second := secretOf(t, c, ns)
	if string(second.Data[KeyCert]) == string(first.Data[KeyCert]) || string(second.Data[KeyCA]) != string(first.Data[KeyCA]) {
		t.Fatal("the serving certificate was not re-issued by the same CA")
	}
	now = now.Add(200 * 24 * time.Hour) // past two thirds of the CA's year
	if err := r.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	third := secretOf(t, c, ns)
	cas, _ := parseCerts(third.Data[KeyCA])
	if len(cas) != 2 {
		t.Fatalf("bundle of %d CAs; want the new and the old", len(cas))
	}
	if err := serve(t, dir, third.Data[KeyCA], "127.0.0.1", now); err != nil {
		t.Fatalf("the new certificate is not trusted through the bundle: %v", err)
	}
	oldCA, _ := parseCerts(first.Data[KeyCA])
	if !oldCA[0].Equal(cas[1]) {
		t.Fatal("the old CA is not the bundle's second")
	}
	now = now.Add(200 * 24 * time.Hour) // the old CA expired
	if err := r.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if cas, _ := parseCerts(secretOf(t, c, ns).Data[KeyCA]); len(cas) != 1 {
		t.Fatalf("bundle of %d CAs after the old one expired", len(cas))
	}
}

// A Secret whose contents cannot be read is regenerated; new names re-issue
// the certificate.
func TestRotator_RepairsAndFollowsNames(t *testing.T) {
	c, ns, vwc := setup(t)
	now := time.Now()
	dir := t.TempDir()
	opts := options(ns, vwc, dir, &now)
	ctx := context.Background()
	if err := New(c, opts).Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	s := secretOf(t, c, ns)
	s.Data[KeyKey] = []byte("not a key")
	if err := c.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	if err := New(c, opts).Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if err := serve(t, dir, secretOf(t, c, ns).Data[KeyCA], "127.0.0.1", now); err != nil {
		t.Fatalf("after repair: %v", err)
	}
	opts.DNSNames = []string{"steward-webhook.other.svc"}
	if err := New(c, opts).Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if err := serve(t, dir, secretOf(t, c, ns).Data[KeyCA], "steward-webhook.other.svc", now); err != nil {
		t.Fatalf("after a name change: %v", err)
	}
}

// Replicas racing on an empty namespace converge on one certificate: each
// serves the same files.
func TestRotator_ReplicasConverge(t *testing.T) {
	c, ns, vwc := setup(t)
	now := time.Now()
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	var wg sync.WaitGroup
	errs := make([]error, len(dirs))
	for i, dir := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				if errs[i] = New(c, options(ns, vwc, dir, &now)).Ensure(context.Background()); errs[i] != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	want, _ := os.ReadFile(filepath.Join(dirs[0], "tls.crt"))
	for _, dir := range dirs[1:] {
		got, _ := os.ReadFile(filepath.Join(dir, "tls.crt"))
		if string(got) != string(want) {
			t.Fatal("replicas serve different certificates")
		}
	}
	if string(want) != string(secretOf(t, c, ns).Data[KeyCert]) {
		t.Fatal("the files are not the Secret's")
	}
}
