package cluster

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func secret(name string, labels map[string]string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: DefaultNamespace, Labels: labels},
		Data:       map[string][]byte{},
	}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

func TestCredentialsFromSecret(t *testing.T) {
	x509 := map[string]string{LabelCredentialType: "X509Certificate", "region": "eu"}
	token := map[string]string{LabelCredentialType: "ServiceAccountToken"}
	tests := []struct {
		name    string
		secret  *corev1.Secret
		want    Credentials
		wantErr string
	}{{
		name:   "client certificate",
		secret: secret("eu", x509, map[string]string{"endpoint": "https://10.0.0.1:6443", "ca.crt": "CA", "tls.crt": "CERT", "tls.key": "KEY"}),
		want:   Credentials{Endpoint: "https://10.0.0.1:6443", CAData: []byte("CA"), CertData: []byte("CERT"), KeyData: []byte("KEY")},
	}, {
		name:   "token, legacy ca key, proxy",
		secret: secret("us", token, map[string]string{"endpoint": "https://k8s.example:443", "ca": "CA", "token": "T", "proxy-url": "http://proxy:3128"}),
		want:   Credentials{Endpoint: "https://k8s.example:443", CAData: []byte("CA"), Token: "T", ProxyURL: "http://proxy:3128"},
	}, {
		name:   "no CA uses system roots",
		secret: secret("us", token, map[string]string{"endpoint": "https://k8s.example", "token": "T"}),
		want:   Credentials{Endpoint: "https://k8s.example", Token: "T"},
	}, {
		name:    "not a cluster secret",
		secret:  secret("x", map[string]string{"a": "b"}, nil),
		wantErr: "secret vela-system/x is not a cluster secret: no cluster.core.oam.dev/cluster-credential-type label",
	}, {
		name:    "local is reserved",
		secret:  secret("local", token, map[string]string{"endpoint": "https://k8s", "token": "T"}),
		wantErr: `"local" is reserved for the hub cluster`,
	}, {
		name:    "missing endpoint",
		secret:  secret("eu", token, map[string]string{"token": "T"}),
		wantErr: `cluster secret vela-system/eu: no "endpoint" key`,
	}, {
		name:    "endpoint without scheme",
		secret:  secret("eu", token, map[string]string{"endpoint": "10.0.0.1:6443", "token": "T"}),
		wantErr: `endpoint "10.0.0.1:6443": want an http(s) URL`,
	}, {
		name:    "certificate without key",
		secret:  secret("eu", x509, map[string]string{"endpoint": "https://k8s", "tls.crt": "CERT"}),
		wantErr: `credential type X509Certificate needs the keys "tls.crt" and "tls.key"`,
	}, {
		name:    "token missing",
		secret:  secret("eu", token, map[string]string{"endpoint": "https://k8s"}),
		wantErr: `credential type ServiceAccountToken needs the key "token"`,
	}, {
		name:    "unknown credential type",
		secret:  secret("eu", map[string]string{LabelCredentialType: "Dynamic"}, map[string]string{"endpoint": "https://k8s"}),
		wantErr: `credential type "Dynamic" is not supported, want X509Certificate or ServiceAccountToken`,
	}, {
		name: "cluster-proxy endpoint",
		secret: secret("eu", map[string]string{LabelCredentialType: "ServiceAccountToken", LabelEndpointType: "ClusterProxy"},
			map[string]string{"token": "T"}),
		wantErr: `endpoint type "ClusterProxy" is not supported`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CredentialsFromSecret(tt.secret)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestClusterFromSecret_LabelsAndAlias(t *testing.T) {
	s := secret("eu-1", map[string]string{
		LabelCredentialType: "X509Certificate",
		LabelEndpointType:   "Const",
		"region":            "eu",
		"env":               "prod",
	}, map[string]string{"endpoint": "https://10.0.0.1:6443"})
	s.Annotations = map[string]string{AnnotationAlias: "Frankfurt"}
	got, err := ClusterFromSecret(s)
	if err != nil {
		t.Fatal(err)
	}
	want := Cluster{
		Name: "eu-1", Alias: "Frankfurt", Endpoint: "https://10.0.0.1:6443",
		Labels:         map[string]string{"region": "eu", "env": "prod"},
		CredentialType: CredentialX509Certificate,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestNewSecret_RoundTrips(t *testing.T) {
	for _, cred := range []Credentials{
		{Endpoint: "https://a:6443", CAData: []byte("CA"), CertData: []byte("C"), KeyData: []byte("K")},
		{Endpoint: "https://b:6443", Token: "T", ProxyURL: "http://p:3128"},
	} {
		s := NewSecret("ns", "c1", map[string]string{"env": "prod"}, "Alias", cred)
		if s.Labels[LabelCredentialType] != string(cred.Type()) {
			t.Fatalf("credential type label = %q, want %q", s.Labels[LabelCredentialType], cred.Type())
		}
		got, err := CredentialsFromSecret(s)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, cred) {
			t.Fatalf("round trip: got %+v, want %+v", got, cred)
		}
		c, _ := ClusterFromSecret(s)
		if c.Alias != "Alias" || !reflect.DeepEqual(c.Labels, map[string]string{"env": "prod"}) {
			t.Fatalf("cluster = %+v", c)
		}
	}
}

func TestCredentials_RESTConfig(t *testing.T) {
	cfg, err := Credentials{Endpoint: "https://a:6443", CAData: []byte("CA"), Token: "T", ProxyURL: "http://p:3128"}.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://a:6443" || cfg.BearerToken != "T" || string(cfg.CAData) != "CA" || cfg.Proxy == nil {
		t.Fatalf("config = %+v", cfg)
	}
}
