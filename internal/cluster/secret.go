package cluster

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/steward-oam/steward/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// Credentials are what a cluster Secret holds to reach the cluster's API
// server. Exactly one of Token or CertData/KeyData is set.
type Credentials struct {
	// Endpoint is the API server URL.
	Endpoint string
	// CAData verifies the API server; empty means the system roots.
	CAData []byte
	// Token is a bearer token (ServiceAccountToken).
	Token string
	// CertData and KeyData are a client certificate (X509Certificate).
	CertData []byte
	KeyData  []byte
	// ProxyURL, when set, is the HTTP(S) proxy to reach the endpoint through.
	ProxyURL string
}

// Type returns the credential type the credentials are of.
func (c Credentials) Type() CredentialType {
	if len(c.CertData) > 0 {
		return CredentialX509Certificate
	}
	return CredentialServiceAccountToken
}

// IsClusterSecret reports whether a Secret registers a cluster.
func IsClusterSecret(s *corev1.Secret) bool {
	_, ok := s.Labels[LabelCredentialType]
	return ok
}

// ClusterFromSecret reads the registration of a cluster (name, labels,
// endpoint) without checking its credentials, so that a cluster with broken
// credentials is still listed and placed on, and fails where it is used.
func ClusterFromSecret(s *corev1.Secret) (Cluster, error) {
	t, ok := s.Labels[LabelCredentialType]
	if !ok {
		return Cluster{}, fmt.Errorf("secret %s/%s is not a cluster secret: no %s label", s.Namespace, s.Name, LabelCredentialType)
	}
	if v1beta1.IsLocalCluster(s.Name) {
		return Cluster{}, fmt.Errorf("secret %s/%s: %q is reserved for the hub cluster", s.Namespace, s.Name, v1beta1.ClusterLocal)
	}
	return Cluster{
		Name:           s.Name,
		Alias:          s.Annotations[AnnotationAlias],
		Labels:         userLabels(s.Labels),
		Endpoint:       string(s.Data[keyEndpoint]),
		CredentialType: CredentialType(t),
	}, nil
}

// CredentialsFromSecret reads and checks the credentials of a cluster
// Secret. Errors name the Secret and what to fix.
func CredentialsFromSecret(s *corev1.Secret) (Credentials, error) {
	c, err := ClusterFromSecret(s)
	if err != nil {
		return Credentials{}, err
	}
	where := fmt.Sprintf("cluster secret %s/%s", s.Namespace, s.Name)
	if et, ok := s.Labels[LabelEndpointType]; ok && et != "Const" {
		return Credentials{}, fmt.Errorf("%s: endpoint type %q is not supported, only a constant endpoint in the %q key", where, et, keyEndpoint)
	}
	cred := Credentials{
		Endpoint: string(s.Data[keyEndpoint]),
		CAData:   s.Data[keyCA],
		ProxyURL: string(s.Data[keyProxyURL]),
	}
	if len(cred.CAData) == 0 {
		cred.CAData = s.Data[keyCALegacy]
	}
	if err := checkEndpoint(cred.Endpoint); err != nil {
		return Credentials{}, fmt.Errorf("%s: %w", where, err)
	}
	switch c.CredentialType {
	case CredentialX509Certificate:
		cred.CertData, cred.KeyData = s.Data[keyCert], s.Data[keyKey]
		if len(cred.CertData) == 0 || len(cred.KeyData) == 0 {
			return Credentials{}, fmt.Errorf("%s: credential type %s needs the keys %q and %q", where, c.CredentialType, keyCert, keyKey)
		}
	case CredentialServiceAccountToken:
		cred.Token = string(s.Data[keyToken])
		if cred.Token == "" {
			return Credentials{}, fmt.Errorf("%s: credential type %s needs the key %q", where, c.CredentialType, keyToken)
		}
	default:
		return Credentials{}, fmt.Errorf("%s: credential type %q is not supported, want %s or %s",
			where, c.CredentialType, CredentialX509Certificate, CredentialServiceAccountToken)
	}
	if cred.ProxyURL != "" {
		if _, err := url.Parse(cred.ProxyURL); err != nil {
			return Credentials{}, fmt.Errorf("%s: %q: %w", where, keyProxyURL, err)
		}
	}
	return cred, nil
}

func checkEndpoint(endpoint string) error {
	if endpoint == "" {
		return fmt.Errorf("no %q key", keyEndpoint)
	}
	u, err := url.Parse(endpoint)
	// A host is required: "https://:6443" would dial the controller's own
	// host. So is a port that can be dialled, when one is given.
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Hostname() == "" || !validPort(u.Port()) {
		return fmt.Errorf("endpoint %q: want an http(s) URL like https://10.0.0.1:6443", endpoint)
	}
	return nil
}

// validPort reports whether p, a URL's port, is empty or 1 to 65535.
func validPort(p string) bool {
	if p == "" {
		return true
	}
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535
}

// NewSecret builds the cluster Secret that registers a cluster under name in
// namespace, in KubeVela's format. labels are the cluster's user labels.
func NewSecret(namespace, name string, labels map[string]string, alias string, cred Credentials) *corev1.Secret {
	l := make(map[string]string, len(labels)+1)
	for k, v := range labels {
		l[k] = v
	}
	l[LabelCredentialType] = string(cred.Type())
	s := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: l},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{keyEndpoint: []byte(cred.Endpoint)},
	}
	if alias != "" {
		s.Annotations = map[string]string{AnnotationAlias: alias}
	}
	if len(cred.CAData) > 0 {
		s.Data[keyCA] = cred.CAData
	}
	if cred.ProxyURL != "" {
		s.Data[keyProxyURL] = []byte(cred.ProxyURL)
	}
	if cred.Type() == CredentialX509Certificate {
		s.Data[keyCert], s.Data[keyKey] = cred.CertData, cred.KeyData
	} else {
		s.Data[keyToken] = []byte(cred.Token)
	}
	return s
}

// RESTConfig returns the connection part of a rest.Config: endpoint, TLS,
// credentials and proxy. Rate limits and timeouts are the caller's.
func (c Credentials) RESTConfig() (*rest.Config, error) {
	if err := checkEndpoint(c.Endpoint); err != nil {
		return nil, err
	}
	cfg := &rest.Config{
		Host: c.Endpoint,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   c.CAData,
			CertData: c.CertData,
			KeyData:  c.KeyData,
		},
		BearerToken: c.Token,
	}
	if c.ProxyURL != "" {
		u, err := url.Parse(c.ProxyURL)
		if err != nil {
			return nil, fmt.Errorf("proxy url %q: %w", c.ProxyURL, err)
		}
		cfg.Proxy = http.ProxyURL(u)
	}
	return cfg, nil
}
