package fetch

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Auth are the credentials of a chart source, read from a Secret.
type Auth struct {
	Username, Password string
	// Token is a bearer token (HTTPS repositories and URLs only).
	Token string
	// CAData, CertData and KeyData are PEM: a CA to trust, and a client
	// certificate and key.
	CAData, CertData, KeyData []byte
	InsecureSkipTLS           bool
	// PlainHTTP reaches an OCI registry over HTTP.
	PlainHTTP bool
}

// identity is what separates one set of credentials from another in the
// cache: a hash, so that no secret is kept as a key.
func (a *Auth) identity() string {
	if a == nil {
		return ""
	}
	b, _ := json.Marshal(a)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// AuthFromSecret reads credentials from a Secret of one of the shapes
// KubeVela's helmchart documents:
//
//   - kubernetes.io/basic-auth: username, password;
//   - kubernetes.io/dockerconfigjson: .dockerconfigjson, the entry of the
//     source's host;
//   - kubernetes.io/tls: tls.crt, tls.key, optional ca.crt;
//   - Opaque: username and password, or token; optional caFile, certFile,
//     keyFile (PEM), insecureSkipTLS, and insecurePlainHTTP (OCI only).
//
// It refuses what KubeVela refuses: a bearer token with an OCI source
// (the registry exchanges basic credentials for its own token), over
// plain HTTP, with insecureSkipTLS, or beside basic credentials.
func AuthFromSecret(sec *corev1.Secret, src Source) (*Auth, error) {
	d := sec.Data
	a := &Auth{}
	switch sec.Type {
	case corev1.SecretTypeBasicAuth:
		a.Username, a.Password = string(d[corev1.BasicAuthUsernameKey]), string(d[corev1.BasicAuthPasswordKey])
	case corev1.SecretTypeDockerConfigJson:
		u, p, err := dockerEntry(d[corev1.DockerConfigJsonKey], src)
		if err != nil {
			return nil, err
		}
		a.Username, a.Password = u, p
	case corev1.SecretTypeTLS:
		a.CertData, a.KeyData, a.CAData = d[corev1.TLSCertKey], d[corev1.TLSPrivateKeyKey], d["ca.crt"]
	case corev1.SecretTypeOpaque, "":
		a.Username, a.Password, a.Token = string(d["username"]), string(d["password"]), string(d["token"])
		a.CAData, a.CertData, a.KeyData = d["caFile"], d["certFile"], d["keyFile"]
		var err error
		if a.InsecureSkipTLS, err = boolKey(d, "insecureSkipTLS"); err != nil {
			return nil, err
		}
		if a.PlainHTTP, err = boolKey(d, "insecurePlainHTTP"); err != nil {
			return nil, err
		}
		if a.PlainHTTP && src.Kind() != KindOCI {
			return nil, errors.New("insecurePlainHTTP applies to OCI sources only")
		}
	default:
		return nil, fmt.Errorf("type %q: want kubernetes.io/basic-auth, kubernetes.io/dockerconfigjson, kubernetes.io/tls or Opaque", sec.Type)
	}
	if (a.Username == "") != (a.Password == "") {
		return nil, errors.New("username and password must be given together")
	}
	if (len(a.CertData) == 0) != (len(a.KeyData) == 0) {
		return nil, errors.New("a client certificate and its key must be given together")
	}
	if a.Token != "" {
		switch {
		case a.Username != "":
			return nil, errors.New("both basic-auth keys and a token: set one credential method per Secret")
		case src.Kind() == KindOCI:
			return nil, errors.New("a bearer token cannot be used with an OCI source: the registry exchanges basic credentials for its own token")
		case a.InsecureSkipTLS:
			return nil, errors.New("insecureSkipTLS with a bearer token: a token is never sent without TLS verification")
		case strings.HasPrefix(src.httpURL(), "http://"):
			return nil, fmt.Errorf("%s is plain HTTP: a bearer token is only sent over HTTPS", redact(src.httpURL()))
		}
		for _, r := range a.Token {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-._~+/=", r)) {
				return nil, errors.New("the token has characters a bearer token cannot have")
			}
		}
	}
	return a, nil
}

// httpURL is where an HTTP source is fetched from.
func (s Source) httpURL() string {
	if s.Kind() == KindRepo {
		return s.RepoURL
	}
	return s.Chart
}

func boolKey(d map[string][]byte, key string) (bool, error) {
	v, ok := d[key]
	if !ok || len(v) == 0 {
		return false, nil
	}
	b, err := strconv.ParseBool(strings.TrimSpace(string(v)))
	if err != nil {
		return false, fmt.Errorf("%s %q: want true or false", key, v)
	}
	return b, nil
}

// dockerEntry finds the credentials of the source's host in a
// .dockerconfigjson.
func dockerEntry(raw []byte, src Source) (string, string, error) {
	var cfg struct {
		Auths map[string]struct {
			Username string `json:"username"`
			Password string `json:"password"`
			Auth     string `json:"auth"`
		} `json:"auths"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return "", "", fmt.Errorf(".dockerconfigjson does not parse: %w", err)
	}
	host := hostOf(src)
	for key, e := range cfg.Auths {
		k := key
		if u, err := url.Parse(key); err == nil && u.Host != "" {
			k = u.Host
		}
		if k != host && !(host == "docker.io" && k == "index.docker.io") {
			continue
		}
		if e.Username == "" && e.Auth != "" {
			dec, err := base64.StdEncoding.DecodeString(e.Auth)
			if err != nil {
				return "", "", fmt.Errorf(".dockerconfigjson: the auth of %s is not base64", key)
			}
			e.Username, e.Password, _ = strings.Cut(string(dec), ":")
		}
		return e.Username, e.Password, nil
	}
	return "", "", fmt.Errorf(".dockerconfigjson has no entry for %s", host)
}

// hostOf is the host a source is fetched from.
func hostOf(s Source) string {
	raw := s.httpURL()
	if s.Kind() == KindOCI {
		raw = "https://" + strings.TrimPrefix(s.Chart, "oci://")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Host
}

// tlsConfig is the TLS configuration of a, nil when a sets none.
func (a *Auth) tlsConfig() (*tls.Config, error) {
	if a == nil || (len(a.CAData) == 0 && len(a.CertData) == 0 && !a.InsecureSkipTLS) {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: a.InsecureSkipTLS} //nolint:gosec // the Secret asks for it
	if len(a.CAData) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(a.CAData) {
			return nil, errors.New("the CA is not PEM")
		}
		cfg.RootCAs = pool
	}
	if len(a.CertData) > 0 {
		cert, err := tls.X509KeyPair(a.CertData, a.KeyData)
		if err != nil {
			return nil, fmt.Errorf("the client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
