package charttest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	repo "helm.sh/helm/v4/pkg/repo/v1"
	"sigs.k8s.io/yaml"
)

// Repo is a Helm repository on 127.0.0.1: an index.yaml and the archives
// added to it.
type Repo struct {
	Server *httptest.Server
	// Username and Password, or Token, when set, are required.
	Username, Password, Token string

	mu       sync.Mutex
	archives map[string][]byte
	index    *repo.IndexFile
	// Requests counts requests, Downloads the archives served.
	Requests, Downloads atomic.Int64
}

// NewRepo starts an empty repository over HTTP; it stops with Close.
func NewRepo() *Repo { return newRepo(false) }

// NewTLSRepo starts an empty repository over HTTPS; CAPEM is the
// certificate to trust.
func NewTLSRepo() *Repo { return newRepo(true) }

func newRepo(tls bool) *Repo {
	r := &Repo{archives: map[string][]byte{}, index: repo.NewIndexFile()}
	r.Server = httptest.NewUnstartedServer(http.HandlerFunc(r.serve))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	r.Server.Listener = l
	if tls {
		r.Server.StartTLS()
	} else {
		r.Server.Start()
	}
	return r
}

// CAPEM is the PEM of the certificate an HTTPS repository serves.
func (r *Repo) CAPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: r.Server.Certificate().Raw})
}

// URL is the repository's URL.
func (r *Repo) URL() string { return r.Server.URL }

// Close stops the repository: it is unreachable from then on.
func (r *Repo) Close() { r.Server.Close() }

// Add publishes an archive built by Archive; it returns its URL.
func (r *Repo) Add(archive []byte) string {
	c, err := loader.LoadArchive(strings.NewReader(string(archive)))
	if err != nil {
		panic(err)
	}
	file := fmt.Sprintf("%s-%s.tgz", c.Name(), c.Metadata.Version)
	sum := sha256.Sum256(archive)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.archives["/"+file] = archive
	if err := r.index.MustAdd(c.Metadata, file, r.Server.URL, "sha256:"+hex.EncodeToString(sum[:])); err != nil {
		panic(err)
	}
	r.index.SortEntries()
	return r.Server.URL + "/" + file
}

func (r *Repo) serve(w http.ResponseWriter, req *http.Request) {
	r.Requests.Add(1)
	switch {
	case r.Token != "":
		if req.Header.Get("Authorization") != "Bearer "+r.Token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
	case r.Username != "":
		u, p, ok := req.BasicAuth()
		if !ok || u != r.Username || p != r.Password {
			w.Header().Set("WWW-Authenticate", `Basic realm="charts"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if req.URL.Path == "/index.yaml" {
		b, err := yaml.Marshal(r.index)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = w.Write(b)
		return
	}
	a, ok := r.archives[req.URL.Path]
	if !ok {
		http.NotFound(w, req)
		return
	}
	r.Downloads.Add(1)
	w.Header().Set("Content-Type", "application/gzip")
	_, _ = w.Write(a)
}
