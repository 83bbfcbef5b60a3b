package webhookcert

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Keys of the Secret.
const (
	KeyCert   = corev1.TLSCertKey       // tls.crt: the serving certificate
	KeyKey    = corev1.TLSPrivateKeyKey // tls.key
	KeyCA     = "ca.crt"                // the caBundle: current CA first
	KeyCAKey  = "ca.key"                // the current CA's key
	maxPasses = 5
)

// Options configure a Rotator.
type Options struct {
	// Namespace and SecretName name the Secret (kubernetes.io/tls) that
	// holds the certificates.
	Namespace, SecretName string
	// DNSNames and IPAddresses are the serving certificate's names.
	DNSNames    []string
	IPAddresses []net.IP
	// WebhookConfigurations are the ValidatingWebhookConfigurations whose
	// webhooks get the CA bundle.
	WebhookConfigurations []string
	// CertDir receives tls.crt and tls.key.
	CertDir string
	// CAValidity and CertValidity default to a year and 90 days.
	CAValidity, CertValidity time.Duration
	// CheckInterval (default 1h) is how often the Secret is looked at.
	CheckInterval time.Duration
	// Now is the clock (tests).
	Now func() time.Time
}

// Rotator keeps the certificates (see the package documentation).
type Rotator struct {
	c     client.Client
	opts  Options
	ready chan struct{}
	once  sync.Once
}

// New returns a Rotator; c must read the API server directly.
func New(c client.Client, opts Options) *Rotator {
	if opts.CAValidity <= 0 {
		opts.CAValidity = 365 * 24 * time.Hour
	}
	if opts.CertValidity <= 0 {
		opts.CertValidity = 90 * 24 * time.Hour
	}
	if opts.CheckInterval <= 0 {
		opts.CheckInterval = time.Hour
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Rotator{c: c, opts: opts, ready: make(chan struct{})}
}

// NeedLeaderElection is false: every replica serves the webhook.
func (r *Rotator) NeedLeaderElection() bool { return false }

// Ready is closed once the certificate files exist.
func (r *Rotator) Ready() <-chan struct{} { return r.ready }

// Start ensures the certificates at once (retrying with back-off), then
// every CheckInterval, until ctx is done.
func (r *Rotator) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("webhookcert")
	ctx = ctrl.LoggerInto(ctx, log)
	backoff := wait.Backoff{Duration: time.Second, Factor: 2, Steps: 1 << 30, Cap: time.Minute}
	_ = wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
		if err := r.Ensure(ctx); err != nil {
			log.Error(err, "Keeping the webhook certificate failed; trying again")
			return false, nil
		}
		return true, nil
	})
	t := time.NewTicker(r.opts.CheckInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := r.Ensure(ctx); err != nil {
				log.Error(err, "Keeping the webhook certificate failed; trying at the next check")
			}
		}
	}
}

// Ensure makes the Secret hold a fresh CA and serving certificate, writes
// the files and injects the CA bundle.
func (r *Rotator) Ensure(ctx context.Context) error {
	var secret *corev1.Secret
	var err error
	for pass := 0; ; pass++ {
		secret, err = r.ensureSecret(ctx)
		if err == nil {
			break
		}
		if pass >= maxPasses || !(apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err)) {
			return err
		}
		// Another replica wrote it: read theirs.
	}
	// The bundle first: the API server trusts a new CA before this
	// replica serves a certificate it signed. The files are written even
	// when the bundle cannot be, and the error returned.
	var injectErr error
	for _, name := range r.opts.WebhookConfigurations {
		// Another replica injecting the same bundle conflicts: read again.
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error { return r.inject(ctx, name, secret.Data[KeyCA]) }); err != nil {
			injectErr = err
		}
	}
	if err := r.writeFiles(secret.Data[KeyCert], secret.Data[KeyKey]); err != nil {
		return err
	}
	r.once.Do(func() { close(r.ready) })
	return injectErr
}

// ensureSecret returns the Secret, created or updated when what it holds
// is missing, unreadable, stale or for other names.
func (r *Rotator) ensureSecret(ctx context.Context) (*corev1.Secret, error) {
	log := ctrl.LoggerFrom(ctx)
	now := r.opts.Now()
	key := client.ObjectKey{Namespace: r.opts.Namespace, Name: r.opts.SecretName}
	secret := &corev1.Secret{}
	err := r.c.Get(ctx, key, secret)
	if apierrors.IsNotFound(err) {
		data, err := r.issueAll(now, nil)
		if err != nil {
			return nil, err
		}
		secret = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
			Labels: map[string]string{"app.kubernetes.io/managed-by": "steward"}}, Type: corev1.SecretTypeTLS, Data: data}
		if err := r.c.Create(ctx, secret); err != nil {
			return nil, err
		}
		log.V(1).Info("Created the webhook certificate", "secret", key.String(), "notAfter", now.Add(r.opts.CertValidity))
		return secret, nil
	}
	if err != nil {
		return nil, err
	}
	data, why, err := r.renew(secret.Data, now)
	if err != nil {
		return nil, err
	}
	if data == nil {
		return secret, nil
	}
	secret.Data = data
	if err := r.c.Update(ctx, secret); err != nil {
		return nil, err
	}
	log.V(1).Info("Renewed the webhook certificate", "secret", key.String(), "reason", why)
	return secret, nil
}

// renew returns the Secret's new data and why, or nil when it holds what
// is wanted.
func (r *Rotator) renew(data map[string][]byte, now time.Time) (map[string][]byte, string, error) {
	cas, _ := parseCerts(data[KeyCA])
	var ca *keyPair
	if len(cas) > 0 {
		var err error
		if ca, err = parsePair(data[KeyCA], data[KeyCAKey]); err != nil {
			ca = nil
		}
	}
	serving, servErr := parsePair(data[KeyCert], data[KeyKey])
	switch {
	case ca == nil || servErr != nil:
		out, err := r.issueAll(now, nil)
		return out, "the Secret held no valid certificate and key", err
	case !fresh(ca.cert, now):
		out, err := r.issueAll(now, data[KeyCA])
		return out, "the CA is near its expiry; the old CA stays in the bundle", err
	case !servingFits(serving, ca, now, r.opts.DNSNames, r.opts.IPAddresses):
		s, err := newServing(ca, now, r.opts.CertValidity, r.opts.DNSNames, r.opts.IPAddresses)
		if err != nil {
			return nil, "", err
		}
		out := map[string][]byte{KeyCert: s.certPEM, KeyKey: s.keyPEM, KeyCAKey: data[KeyCAKey],
			KeyCA: bundle(ca.cert, ca.certPEM, data[KeyCA], now)}
		return out, "the serving certificate is near its expiry, for other names, or not signed by the CA", nil
	}
	if b := bundle(ca.cert, ca.certPEM, data[KeyCA], now); !bytes.Equal(b, data[KeyCA]) {
		// An old CA expired: out of the bundle.
		out := map[string][]byte{KeyCert: data[KeyCert], KeyKey: data[KeyKey], KeyCAKey: data[KeyCAKey], KeyCA: b}
		return out, "an earlier CA expired", nil
	}
	return nil, "", nil
}

// issueAll makes a new CA and serving certificate; previous CAs still
// valid stay in the bundle.
func (r *Rotator) issueAll(now time.Time, previous []byte) (map[string][]byte, error) {
	ca, err := newCA(now, r.opts.CAValidity)
	if err != nil {
		return nil, err
	}
	s, err := newServing(ca, now, r.opts.CertValidity, r.opts.DNSNames, r.opts.IPAddresses)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{KeyCert: s.certPEM, KeyKey: s.keyPEM, KeyCA: bundle(ca.cert, ca.certPEM, previous, now), KeyCAKey: ca.keyPEM}, nil
}

// writeFiles writes the certificate and key where the webhook server reads
// them, each by rename, the key first: a reader sees old or new files.
func (r *Rotator) writeFiles(cert, key []byte) error {
	if r.opts.CertDir == "" {
		return nil
	}
	if err := os.MkdirAll(r.opts.CertDir, 0o700); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{KeyKey, key}, {KeyCert, cert}} {
		path := filepath.Join(r.opts.CertDir, f.name)
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, f.data) {
			continue
		}
		tmp, err := os.CreateTemp(r.opts.CertDir, "."+f.name+"-*")
		if err != nil {
			return err
		}
		_, werr := tmp.Write(f.data)
		cerr := tmp.Close()
		if werr != nil || cerr != nil {
			_ = os.Remove(tmp.Name())
			return fmt.Errorf("writing %s: %w", path, errorsJoin(werr, cerr))
		}
		if err := os.Chmod(tmp.Name(), 0o600); err != nil {
			return err
		}
		if err := os.Rename(tmp.Name(), path); err != nil {
			return err
		}
	}
	return nil
}

func errorsJoin(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// inject sets every webhook's caBundle of configuration name, writing only
// when one differs.
func (r *Rotator) inject(ctx context.Context, name string, caBundle []byte) error {
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := r.c.Get(ctx, client.ObjectKey{Name: name}, vwc); err != nil {
		if apierrors.IsNotFound(err) {
			ctrl.LoggerFrom(ctx).V(1).Info("No ValidatingWebhookConfiguration to inject the CA into yet", "name", name)
			return nil
		}
		return err
	}
	changed := false
	for i := range vwc.Webhooks {
		if !bytes.Equal(vwc.Webhooks[i].ClientConfig.CABundle, caBundle) {
			vwc.Webhooks[i].ClientConfig.CABundle = caBundle
			changed = true
		}
	}
	if !changed {
		return nil
	}
	if err := r.c.Update(ctx, vwc); err != nil {
		if apierrors.IsConflict(err) {
			return err
		}
		return fmt.Errorf("injecting the CA into ValidatingWebhookConfiguration %s: %w", name, err)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("Injected the webhook CA", "validatingWebhookConfiguration", name)
	return nil
}
