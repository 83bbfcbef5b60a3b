package cluster

import (
	"net"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"testing"

	"github.com/steward-oam/steward/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// FuzzCredentialsFromSecret reads a cluster Secret built from arbitrary
// labels, annotations and data, as anyone allowed to write Secrets in the
// cluster namespace (or `vela cluster join`, or a typo) can leave it.
// Reading never panics; a registration it accepts has a usable name, and
// credentials it accepts have an endpoint that is an http(s) URL with a
// host, from which a rest.Config and an HTTP client are built (or refused
// with an error) as the cluster Manager builds them.
func FuzzCredentialsFromSecret(f *testing.F) {
	f.Fuzz(func(t *testing.T, name, credType, endpointType, alias, userLabel, userValue string,
		endpoint, ca, caLegacy, token, cert, key, proxy []byte, has uint16) {
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: DefaultNamespace,
				Labels: map[string]string{userLabel: userValue}},
			Data: map[string][]byte{},
		}
		// has says which of the optional labels, annotations and keys are
		// present: an absent key and an empty one are different.
		present := func(bit uint) bool { return has&(1<<bit) != 0 }
		if present(0) {
			s.Labels[LabelCredentialType] = credType
		}
		if present(1) {
			s.Labels[LabelEndpointType] = endpointType
		}
		if present(2) {
			s.Annotations = map[string]string{AnnotationAlias: alias}
		}
		for i, kv := range []struct {
			key   string
			value []byte
		}{{keyEndpoint, endpoint}, {keyCA, ca}, {keyCALegacy, caLegacy}, {keyToken, token}, {keyCert, cert}, {keyKey, key}} {
			if present(uint(3+i)) || len(kv.value) > 0 {
				s.Data[kv.key] = kv.value
			}
		}
		if len(proxy) > 0 {
			s.Data[keyProxyURL] = proxy
		}

		c, err := ClusterFromSecret(s)
		if err == nil {
			if v1beta1.IsLocalCluster(c.Name) || c.Name != name {
				t.Fatalf("accepted cluster name %q from secret %q", c.Name, name)
			}
			for k := range c.Labels {
				if IsReservedLabel(k) {
					t.Fatalf("bookkeeping label %s among the cluster's labels", k)
				}
			}
		}
		cred, credErr := CredentialsFromSecret(s)
		if credErr != nil {
			return
		}
		if err != nil {
			t.Fatalf("credentials accepted from a secret whose registration is refused: %v", err)
		}
		if cred.Endpoint != c.Endpoint {
			t.Fatalf("credentials endpoint %q, registration endpoint %q", cred.Endpoint, c.Endpoint)
		}
		checkHTTPURL(t, cred.Endpoint)
		switch cred.Type() {
		case CredentialX509Certificate:
			if len(cred.KeyData) == 0 || cred.Token != "" {
				t.Fatalf("certificate credentials without a key, or with a token: %+v", cred)
			}
		case CredentialServiceAccountToken:
			if cred.Token == "" {
				t.Fatalf("token credentials without a token: %+v", cred)
			}
		}

		cfg, err := cred.RESTConfig()
		if err != nil {
			t.Fatalf("accepted credentials give no rest.Config: %v", err)
		}
		if cfg.Host != cred.Endpoint || cfg.BearerToken != cred.Token ||
			!reflect.DeepEqual(cfg.CAData, cred.CAData) || !reflect.DeepEqual(cfg.CertData, cred.CertData) {
			t.Fatalf("rest.Config %+v does not carry credentials %+v", cfg, cred)
		}
		if _, _, err := rest.DefaultServerURL(cfg.Host, "", schema.GroupVersion{}, true); err != nil {
			t.Fatalf("client-go refuses the accepted endpoint %q: %v", cfg.Host, err)
		}
		// What the Manager does next. A dialer of its own, as the Manager
		// sets, and a proxy function keep client-go from caching a
		// transport per fuzzed certificate.
		cfg.Dial = (&net.Dialer{}).DialContext
		if cfg.Proxy == nil {
			cfg.Proxy = func(*http.Request) (*url.URL, error) { return nil, nil }
		}
		if hc, err := rest.HTTPClientFor(cfg); err == nil {
			hc.CloseIdleConnections()
		}
	})
}

// checkHTTPURL fails unless endpoint is an http or https URL naming a host
// and, when it has one, a port a connection can be made to.
func checkHTTPURL(t *testing.T, endpoint string) {
	t.Helper()
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatalf("accepted endpoint %q does not parse: %v", endpoint, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		t.Fatalf("accepted endpoint %q has scheme %q", endpoint, u.Scheme)
	}
	if u.Hostname() == "" {
		t.Fatalf("accepted endpoint %q names no host", endpoint)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			t.Fatalf("accepted endpoint %q has port %q", endpoint, p)
		}
	}
}
