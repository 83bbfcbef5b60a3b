package manager

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/steward-oam/steward/internal/admission"
	"github.com/steward-oam/steward/internal/controller/application"
	"github.com/steward-oam/steward/internal/webhookcert"
)

// Certificate management of the webhook (--webhook-certs).
const (
	// WebhookCertsSelf: Steward issues, stores (--webhook-cert-secret),
	// rotates and injects its serving certificate itself.
	WebhookCertsSelf = "self"
	// WebhookCertsExternal: another issuer (cert-manager) writes the
	// files in --webhook-cert-dir and injects the caBundle.
	WebhookCertsExternal = "external"
)

// webhookServer is the manager's webhook server when admission is on:
// its certificate is read from the cert directory at each new connection
// (the files are rotated in place), so it starts before any exists.
func webhookServer(opts Options) webhook.Server {
	if !opts.UseWebhook {
		return nil
	}
	loader := &webhookcert.Loader{Dir: opts.WebhookCertDir}
	return webhook.NewServer(webhook.Options{
		Host: opts.WebhookHost,
		Port: opts.WebhookPort,
		TLSOpts: []func(*tls.Config){func(c *tls.Config) {
			c.GetCertificate = loader.GetCertificate
			c.MinVersion = tls.VersionTLS12
		}},
	})
}

// setupAdmission registers the checks on the webhook server and, with
// self-managed certificates, the rotator (and, with --webhook-url, the
// configuration itself).
func setupAdmission(mgr manager.Manager, cfg *rest.Config, opts Options, r *application.Reconciler) error {
	if !opts.UseWebhook {
		return nil
	}
	checker := r.AdmissionChecker()
	checker.Mapper = mgr.GetRESTMapper()
	if opts.DefinitionRevisions {
		checker.Revisions = mgr.GetClient()
	}
	admission.Register(mgr.GetWebhookServer(), checker, admission.DefaultTimeout)
	admission.RegisterDefaulting(mgr.GetWebhookServer(), mgr.GetRESTMapper())
	if err := mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker()); err != nil {
		return err
	}
	if opts.WebhookCerts != WebhookCertsSelf {
		return nil
	}
	direct, err := client.New(cfg, client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		return err
	}
	certOpts := webhookcert.Options{
		Namespace:             leaseNamespace(opts),
		SecretName:            opts.WebhookCertSecret,
		WebhookConfigurations: []string{opts.WebhookConfiguration},
		CertDir:               opts.WebhookCertDir,
	}
	var cc admission.ClientConfig
	if opts.WebhookURL != "" {
		u, err := url.Parse(opts.WebhookURL)
		if err != nil {
			return fmt.Errorf("--webhook-url: %w", err)
		}
		if ip := net.ParseIP(u.Hostname()); ip != nil {
			certOpts.IPAddresses = []net.IP{ip}
		} else {
			certOpts.DNSNames = []string{u.Hostname()}
		}
		cc.URL = opts.WebhookURL
	} else {
		ns := leaseNamespace(opts)
		certOpts.DNSNames = []string{opts.WebhookService + "." + ns + ".svc", opts.WebhookService + "." + ns + ".svc.cluster.local"}
	}
	return mgr.Add(&webhookSetup{
		client:    direct,
		rotator:   webhookcert.New(direct, certOpts),
		configure: opts.WebhookURL != "",
		config:    admission.Configuration(opts.WebhookConfiguration, cc, nil),
		mutating:  admission.MutatingConfiguration(opts.WebhookConfiguration, cc, nil),
	})
}

// webhookSetup writes the configuration (when Steward runs outside the
// cluster, --webhook-url) and then runs the certificate rotator, which
// injects the caBundle. It runs on every replica: each serves the webhook.
type webhookSetup struct {
	client    client.Client
	rotator   *webhookcert.Rotator
	configure bool
	config    *admissionregistrationv1.ValidatingWebhookConfiguration
	mutating  *admissionregistrationv1.MutatingWebhookConfiguration
}

func (w *webhookSetup) NeedLeaderElection() bool { return false }

func (w *webhookSetup) Start(ctx context.Context) error {
	if w.configure {
		err := wait.ExponentialBackoffWithContext(ctx, wait.Backoff{Duration: time.Second, Factor: 2, Steps: 1 << 30, Cap: time.Minute},
			func(ctx context.Context) (bool, error) {
				err := admission.EnsureConfiguration(ctx, w.client, w.config.DeepCopy())
				if err == nil {
					err = admission.EnsureMutatingConfiguration(ctx, w.client, w.mutating.DeepCopy())
				}
				if err != nil {
					ctrl.LoggerFrom(ctx).Error(err, "Writing the webhook configuration failed; trying again")
					return false, nil
				}
				return true, nil
			})
		if err != nil {
			return nil // stopping
		}
	}
	go admission.MirrorCABundle(ctx, w.client, w.config.Name, time.Minute)
	return w.rotator.Start(ctx)
}
