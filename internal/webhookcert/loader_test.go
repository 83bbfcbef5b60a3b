package webhookcert

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The webhook server must pick up a certificate the Rotator (or
// cert-manager) replaced in place, and keep serving the last good one
// while the two files are caught between their renames.
func TestLoader_ServesTheCertificateOnDiskAndItsReplacement(t *testing.T) {
	dir := t.TempDir()
	l := &Loader{Dir: dir}
	if _, err := l.GetCertificate(nil); err == nil {
		t.Fatal("a directory without a certificate served one")
	}
	now := time.Now()
	ca, err := newCA(now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	write := func(cn string, modTime time.Time) *keyPair {
		t.Helper()
		kp, err := newServing(ca, now, time.Hour, []string{cn}, nil)
		if err != nil {
			t.Fatal(err)
		}
		crt, key := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
		if err := os.WriteFile(crt, kp.certPEM, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(key, kp.keyPEM, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(crt, modTime, modTime); err != nil {
			t.Fatal(err)
		}
		return kp
	}
	served := func() string {
		t.Helper()
		c, err := l.GetCertificate(nil)
		if err != nil {
			t.Fatal(err)
		}
		return c.Leaf.Subject.CommonName
	}

	write("first.svc", now.Add(-time.Minute))
	if got := served(); got != "first.svc" {
		t.Fatalf("served %q, want first.svc", got)
	}
	write("second.svc", now)
	if got := served(); got != "second.svc" {
		t.Fatalf("after the files changed, served %q, want second.svc", got)
	}
	// A new certificate beside the old key: between the two renames.
	kp, err := newServing(ca, now, time.Hour, []string{"third.svc"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	crt := filepath.Join(dir, "tls.crt")
	if err := os.WriteFile(crt, kp.certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(crt, now.Add(time.Minute), now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := served(); got != "second.svc" {
		t.Fatalf("with a certificate and a key that do not match, served %q, want the last good one (second.svc)", got)
	}
}
