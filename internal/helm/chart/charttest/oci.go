package charttest

import (
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/google/go-containerregistry/pkg/registry"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	helmregistry "helm.sh/helm/v4/pkg/registry"
)

// Registry is an in-memory OCI registry on 127.0.0.1
// (go-containerregistry's), optionally behind basic auth.
type Registry struct {
	Server             *httptest.Server
	Username, Password string
	// Blobs counts blob downloads (chart layers and configs).
	Blobs atomic.Int64
}

// NewRegistry starts a registry; it stops with Close.
func NewRegistry() *Registry {
	r := &Registry{}
	inner := registry.New(registry.Logger(nopLogger()))
	r.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if r.Username != "" {
			u, p, ok := req.BasicAuth()
			if !ok || u != r.Username || p != r.Password {
				w.Header().Set("WWW-Authenticate", `Basic realm="registry"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		if req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/blobs/") {
			r.Blobs.Add(1)
		}
		inner.ServeHTTP(w, req)
	}))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	r.Server.Listener = l
	r.Server.Start()
	return r
}

// Host is the registry's host:port.
func (r *Registry) Host() string { return strings.TrimPrefix(r.Server.URL, "http://") }

// Close stops the registry.
func (r *Registry) Close() { r.Server.Close() }

// Push pushes an archive as Helm does (`helm push`) to
// <host>/<path>/<chart name>:<version> and returns the oci:// reference
// without the tag.
func (r *Registry) Push(path string, archive []byte) string {
	c, err := loader.LoadArchive(strings.NewReader(string(archive)))
	if err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "charttest-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	opts := []helmregistry.ClientOption{helmregistry.ClientOptPlainHTTP(), helmregistry.ClientOptCredentialsFile(filepath.Join(dir, "config.json"))}
	if r.Username != "" {
		opts = append(opts, helmregistry.ClientOptBasicAuth(r.Username, r.Password))
	}
	client, err := helmregistry.NewClient(opts...)
	if err != nil {
		panic(err)
	}
	ref := fmt.Sprintf("%s/%s/%s", r.Host(), strings.Trim(path, "/"), c.Name())
	if _, err := client.Push(archive, ref+":"+c.Metadata.Version); err != nil {
		panic(err)
	}
	return "oci://" + ref
}

func nopLogger() *log.Logger { return log.New(io.Discard, "", 0) }
