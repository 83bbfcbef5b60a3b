package dashboard

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/steward-oam/steward/internal/readmodel"
)

// page is the layout's data: the title, the active navigation entry, the
// live-update stream of the page (empty for none) and the page's own data.
type page struct {
	Title    string
	Nav      string
	Live     string
	Identity string
	Body     any
}

// render writes the page named name inside the layout, with the server
// time it took in a Server-Timing header (benchmarks read it).
func (s *Server) render(w http.ResponseWriter, r *http.Request, start time.Time, name string, p page) {
	p.Identity = s.opts.Identity
	var buf bytes.Buffer
	if err := s.pages.ExecuteTemplate(&buf, name, p); err != nil {
		s.opts.Log.Error(err, "rendering the dashboard", "page", name, "path", r.URL.Path)
		http.Error(w, "rendering failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.Header().Set("Server-Timing", fmt.Sprintf("render;dur=%.1f", float64(time.Since(start).Microseconds())/1000))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(buf.Bytes())
}

// fail shows an error page with status code.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, code int, err error) {
	w.WriteHeader(code)
	_ = s.pages.ExecuteTemplate(w, "error", page{Title: http.StatusText(code), Identity: s.opts.Identity, Body: err.Error()})
}

// detail reads what an Application's page shows.
func (s *Server) detail(r *http.Request, namespace, name string) (*readmodel.AppDetail, error) {
	return readmodel.Inspect(r.Context(), s.opts.Hub, s.opts.Clusters, namespace, name, s.opts.Events)
}

// appView is an Application's page.
type appView struct {
	*readmodel.AppDetail
	Now time.Time
}

// app serves an Application's page.
func (s *Server) app(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	if s.opts.Namespace != "" && ns != s.opts.Namespace {
		s.fail(w, r, http.StatusNotFound, fmt.Errorf("application %s/%s is outside the dashboard's namespace %s", ns, name, s.opts.Namespace))
		return
	}
	d, err := s.detail(r, ns, name)
	if err != nil {
		code := http.StatusBadGateway
		if readmodel.IsAppNotFound(err) {
			code = http.StatusNotFound
		}
		s.fail(w, r, code, err)
		return
	}
	s.render(w, r, start, "app", page{Title: ns + "/" + name, Nav: "apps", Live: "/live/apps/" + ns + "/" + name,
		Body: appView{AppDetail: d, Now: time.Now()}})
}

// clusters serves the clusters page: every registered cluster and whether
// it answers now.
func (s *Server) clusters(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rows, err := readmodel.Clusters(r.Context(), s.opts.Clusters)
	if err != nil {
		s.fail(w, r, http.StatusBadGateway, err)
		return
	}
	s.render(w, r, start, "clusters", page{Title: "Clusters", Nav: "clusters", Body: rows})
}
