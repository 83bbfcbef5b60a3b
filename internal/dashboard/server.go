package dashboard

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/internal/cluster"
)

//go:embed assets
var assets embed.FS

// Options configure a dashboard Server.
type Options struct {
	// Apps is an informer cache holding Applications: the list page reads
	// it and its events drive live updates. `steward dashboard` builds one
	// with NewAppCache; the controller passes its own.
	Apps cache.Cache
	// Hub reads an Application's detail (the Application, its trackers,
	// events) straight from the API server, with the identity whose pages
	// these are.
	Hub client.Client
	// Clusters reaches the target clusters (and the hub as "local") for the
	// live state of tracked objects and the clusters page.
	Clusters *cluster.Manager
	// Namespace restricts every page to one namespace; empty is all.
	Namespace string
	// Identity says whose reads these are, shown in the page footer.
	Identity string
	// Poll is how often an open Application page re-reads its objects
	// besides the watch events (default 10s); it catches what a watch
	// cannot see (a cluster it may not watch).
	Poll time.Duration
	// Events is how many events an Application page shows (default 20).
	Events int
	// PageSize is how many Applications a list page shows (default 100).
	PageSize int
	Log      logr.Logger
}

// Server is the dashboard's HTTP handler.
type Server struct {
	opts   Options
	pages  *template.Template
	static http.Handler
	broker *broker
	mux    *http.ServeMux
}

// New returns a Server. Start registers its live-update handler on the
// Application informer; call it before serving.
func New(o Options) (*Server, error) {
	if o.Apps == nil || o.Hub == nil || o.Clusters == nil {
		return nil, errors.New("dashboard: Apps, Hub and Clusters are required")
	}
	if o.Poll <= 0 {
		o.Poll = 10 * time.Second
	}
	if o.Events <= 0 {
		o.Events = 20
	}
	if o.PageSize <= 0 {
		o.PageSize = 100
	}
	pages, err := parseTemplates()
	if err != nil {
		return nil, err
	}
	static, err := fs.Sub(assets, "assets/static")
	if err != nil {
		return nil, err
	}
	s := &Server{opts: o, pages: pages, static: http.StripPrefix("/static/", http.FileServerFS(static)), broker: newBroker()}
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("GET /{$}", s.list)
	s.mux.HandleFunc("GET /apps/{namespace}/{name}", s.app)
	s.mux.HandleFunc("GET /clusters", s.clusters)
	s.mux.HandleFunc("GET /live/list", s.liveList)
	s.mux.HandleFunc("GET /live/apps/{namespace}/{name}", s.liveApp)
	s.mux.HandleFunc("GET /static/", func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") {
			// No directory listings.
			http.NotFound(w, r)
			return
		}
		s.static.ServeHTTP(w, r)
	})
	return s, nil
}

// Start feeds live updates from the Application informer.
func (s *Server) Start(ctx context.Context) error {
	return s.broker.feed(ctx, s.opts.Apps)
}

// contentSecurityPolicy allows only the dashboard's own script, styles and
// live-update stream; no inline code, no frames, no forms elsewhere.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// ServeHTTP answers GET and HEAD only, with safe headers on every answer.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
	if !strings.HasPrefix(r.URL.Path, "/static/") {
		h.Set("Cache-Control", "no-store")
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "the dashboard is read-only", http.StatusMethodNotAllowed)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// HostGuard answers 421 to requests not addressed to one of hosts (names
// or IPs, without port): a page on another site that rebinds its name to
// 127.0.0.1 sends its own name and is refused.
func HostGuard(next http.Handler, hosts ...string) http.Handler {
	allowed := map[string]bool{}
	for _, h := range hosts {
		allowed[strings.ToLower(strings.Trim(h, "[]"))] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if !allowed[strings.ToLower(strings.Trim(host, "[]"))] {
			http.Error(w, "unexpected host "+r.Host, http.StatusMisdirectedRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// guard restricts h to the loopback hosts Listen returned; with none (an
// address beyond loopback, allowed) it warns that whoever reaches the
// dashboard reads what identity reads.
func guard(h http.Handler, hosts []string, log logr.Logger, identity string) http.Handler {
	if hosts == nil {
		log.Info("WARNING: the dashboard serves on a non-loopback address with no authentication of its own: whoever reaches it reads what " + identity + " reads")
		return h
	}
	return HostGuard(h, hosts...)
}

// Listen opens addr. A host that is not loopback (or empty, which is every
// interface) is refused unless allowRemote, because the dashboard has no
// authentication of its own: whoever reaches it reads what its identity
// reads. It returns the hosts the server answers to, for HostGuard; nil
// when any host is allowed.
func Listen(addr string, allowRemote bool) (net.Listener, []string, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, nil, fmt.Errorf("--address %q: %w", addr, err)
	}
	loopback := isLoopback(host)
	if !loopback && !allowRemote {
		return nil, nil, fmt.Errorf("refusing to serve the dashboard on %q: it is not a loopback address, and the dashboard has no authentication of its own "+
			"(whoever reaches it reads what its identity reads); pass --allow-remote to do it anyway", addr)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	if !loopback {
		return l, nil, nil
	}
	return l, []string{"localhost", "127.0.0.1", "::1", host}, nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Serve serves h on l until ctx ends, then shuts down within 5 seconds.
func Serve(ctx context.Context, l net.Listener, h http.Handler) error {
	// Handlers get ctx, so that live streams end with the server.
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	return nil
}
