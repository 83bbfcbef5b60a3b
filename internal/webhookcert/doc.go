// Package webhookcert keeps the serving certificate of Steward's admission
// webhook without cert-manager: a CA and a certificate signed by it, kept
// in one Secret (the one source of truth for every replica), written to
// the directory the webhook server reads, re-issued before they expire,
// with the CA injected into the caBundle of the webhook configurations.
//
// Usage:
//
//	rot := webhookcert.New(directClient, webhookcert.Options{Namespace: ns, SecretName: "steward-webhook-certs",
//		DNSNames: []string{"steward-webhook." + ns + ".svc"}, WebhookConfigurations: []string{"steward"}, CertDir: dir})
//	mgr.Add(rot) // Ensure at once, then every CheckInterval, on every replica
//	loader := &webhookcert.Loader{Dir: dir}          // the webhook server's side
//	tlsConfig.GetCertificate = loader.GetCertificate // the files as they are at each handshake
//
// Replicas converge through the Secret's resourceVersion: a replica that
// loses a race reads and uses what the other wrote.
//
// Files:
//
//	certs.go    the CA and serving key pairs: issued, parsed, checked for freshness, bundled with the previous CA
//	loader.go   Loader: the webhook server's certificate, read again from CertDir when the files change
//	rotator.go  Rotator and Options: the Secret, the files in CertDir and the caBundle kept in step
package webhookcert
