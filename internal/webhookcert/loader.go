package webhookcert

import (
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Loader serves the certificate in Dir (tls.crt, tls.key) to the webhook
// server's TLS handshakes, reading it again when the files change: the
// Rotator (or cert-manager, through a mounted Secret) replaces them in
// place.
type Loader struct {
	Dir string

	mu      sync.Mutex
	cert    *tls.Certificate
	modTime time.Time
}

// GetCertificate is a tls.Config's GetCertificate.
func (l *Loader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	crt, key := filepath.Join(l.Dir, "tls.crt"), filepath.Join(l.Dir, "tls.key")
	st, err := os.Stat(crt)
	if err != nil {
		return nil, fmt.Errorf("no serving certificate yet: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cert != nil && st.ModTime().Equal(l.modTime) {
		return l.cert, nil
	}
	c, err := tls.LoadX509KeyPair(crt, key)
	if err != nil {
		if l.cert != nil {
			// Caught between the two files' renames: the last good one.
			return l.cert, nil
		}
		return nil, err
	}
	l.cert, l.modTime = &c, st.ModTime()
	return l.cert, nil
}
