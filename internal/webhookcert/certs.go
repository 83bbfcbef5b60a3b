package webhookcert

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"slices"
	"time"
)

// keyPair is a certificate and its key, parsed and as PEM.
type keyPair struct {
	cert            *x509.Certificate
	key             *ecdsa.PrivateKey
	certPEM, keyPEM []byte
}

func newCA(now time.Time, validity time.Duration) (*keyPair, error) {
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: fmt.Sprintf("steward-webhook-ca@%d", now.Unix())},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	return issue(tmpl, nil)
}

func newServing(ca *keyPair, now time.Time, validity time.Duration, dns []string, ips []net.IP) (*keyPair, error) {
	cn := "steward-webhook"
	if len(dns) > 0 {
		cn = dns[0]
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		DNSNames:    dns,
		IPAddresses: ips,
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    now.Add(validity),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	return issue(tmpl, ca)
}

// issue signs tmpl with a new key, by ca (self-signed when nil).
func issue(tmpl *x509.Certificate, ca *keyPair) (*keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial
	parent, signer := tmpl, key
	if ca != nil {
		parent, signer = ca.cert, ca.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return &keyPair{cert: cert, key: key,
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})}, nil
}

// parsePair reads a certificate and its key, checking they match.
func parsePair(certPEM, keyPEM []byte) (*keyPair, error) {
	certs, err := parseCerts(certPEM)
	if err != nil {
		return nil, err
	}
	if len(certs) == 0 {
		return nil, errors.New("no certificate")
	}
	block, _ := pem.Decode(keyPEM)
	if block == nil {
		return nil, errors.New("no key")
	}
	key, err := x509.ParseECPrivateKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	pub, ok := certs[0].PublicKey.(*ecdsa.PublicKey)
	if !ok || !pub.Equal(&key.PublicKey) {
		return nil, errors.New("the key does not match the certificate")
	}
	first, _ := pem.Decode(certPEM)
	return &keyPair{cert: certs[0], key: key, certPEM: pem.EncodeToMemory(first), keyPEM: keyPEM}, nil
}

func parseCerts(data []byte) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return out, nil
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
}

// fresh reports whether c has at least a third of its lifetime left.
func fresh(c *x509.Certificate, now time.Time) bool {
	life := c.NotAfter.Sub(c.NotBefore)
	return c.NotAfter.Sub(now) > life/3
}

// servingFits reports whether serving is signed by ca, fresh, and for
// exactly the names wanted.
func servingFits(serving, ca *keyPair, now time.Time, dns []string, ips []net.IP) bool {
	if serving.cert.CheckSignatureFrom(ca.cert) != nil || !fresh(serving.cert, now) {
		return false
	}
	if !slices.Equal(sorted(serving.cert.DNSNames), sorted(dns)) {
		return false
	}
	var have, want []string
	for _, ip := range serving.cert.IPAddresses {
		have = append(have, ip.String())
	}
	for _, ip := range ips {
		want = append(want, ip.String())
	}
	return slices.Equal(sorted(have), sorted(want))
}

func sorted(in []string) []string {
	out := slices.Clone(in)
	slices.Sort(out)
	return out
}

// bundle is the caBundle: the current CA, then earlier ones still valid.
func bundle(current *x509.Certificate, currentPEM, previous []byte, now time.Time) []byte {
	out := bytes.Clone(currentPEM)
	olds, _ := parseCerts(previous)
	for _, c := range olds {
		if c.Equal(current) || now.After(c.NotAfter) {
			continue
		}
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})...)
	}
	return out
}
