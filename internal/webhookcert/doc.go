// Package webhookcert keeps the serving certificate of Steward's admission
// webhook without cert-manager: a CA and a certificate signed by it, kept
// in one Secret (the one source of truth for every replica), written to
// the directory the webhook server reads, re-issued before they expire,
// with the CA injected into the caBundle of the webhook configurations.
//
//	rot := webhookcert.New(directClient, webhookcert.Options{Namespace: ns, SecretName: "steward-webhook-certs",
//		DNSNames: []string{"steward-webhook." + ns + ".svc"}, WebhookConfigurations: []string{"steward"}, CertDir: dir})
//	mgr.Add(rot) // Ensure at once, then every CheckInterval, on every replica
//
// Replicas converge through the Secret's resourceVersion: a replica that
// loses a race reads and uses what the other wrote.
package webhookcert
