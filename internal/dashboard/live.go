package dashboard

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/steward-oam/steward/api/v1beta1"
)

// broker tells open pages that an Application changed: subscribers of a
// "namespace/name" key hear of that Application, subscribers of "" of
// every one.
type broker struct {
	mu   sync.Mutex
	subs map[string]map[chan struct{}]bool
}

func newBroker() *broker { return &broker{subs: map[string]map[chan struct{}]bool{}} }

// feed publishes the Application informer's events.
func (b *broker) feed(ctx context.Context, apps cache.Cache) error {
	inf, err := apps.GetInformer(ctx, &v1beta1.Application{})
	if err != nil {
		return fmt.Errorf("watching applications: %w", err)
	}
	publish := func(obj any) {
		if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if a, ok := obj.(*v1beta1.Application); ok {
			b.publish(a.Namespace + "/" + a.Name)
		}
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    publish,
		UpdateFunc: func(_, obj any) { publish(obj) },
		DeleteFunc: publish,
	})
	return err
}

// subscribe signals ch (without blocking) whenever key changes, until the
// function it returns is called.
func (b *broker) subscribe(key string, ch chan struct{}) func() {
	b.mu.Lock()
	if b.subs[key] == nil {
		b.subs[key] = map[chan struct{}]bool{}
	}
	b.subs[key][ch] = true
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		delete(b.subs[key], ch)
		if len(b.subs[key]) == 0 {
			delete(b.subs, key)
		}
		b.mu.Unlock()
	}
}

func (b *broker) publish(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, k := range []string{key, ""} {
		for ch := range b.subs[k] {
			notify(ch)
		}
	}
}

// notify sends on ch without blocking: a pending signal already says it.
func notify(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// stream is one server-sent-event response.
type stream struct {
	w    http.ResponseWriter
	f    http.Flusher
	last []byte
}

func newStream(w http.ResponseWriter) (*stream, bool) {
	f, ok := w.(http.Flusher)
	if !ok {
		return nil, false
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	f.Flush()
	return &stream{w: w, f: f}, true
}

// send writes html as an "update" event unless it is what was sent last.
// Each line of html becomes its own "data:" line. A client ends a line at
// "\r\n", "\r" or "\n" alike, so html is split on all three: a bare "\r"
// inside text from the cluster (an Application's message) would otherwise
// start a new field, such as "event:" or "data:", and rewrite the page.
func (s *stream) send(html []byte) error {
	if bytes.Equal(html, s.last) {
		return nil
	}
	s.last = html
	var b strings.Builder
	b.WriteString("event: update\n")
	for _, line := range sseLines(string(html)) {
		b.WriteString("data: ")
		b.WriteString(line)
		b.WriteString("\n")
	}
	b.WriteString("\n")
	if _, err := s.w.Write([]byte(b.String())); err != nil {
		return err
	}
	s.f.Flush()
	return nil
}

// sseLines splits s at every line end a server-sent-events client knows:
// "\r\n", "\r" and "\n". No line it returns holds either character.
func sseLines(s string) []string {
	var lines []string
	for {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			return append(lines, s)
		}
		lines = append(lines, s[:i])
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			i++
		}
		s = s[i+1:]
	}
}

// ping keeps the connection open through proxies.
func (s *stream) ping() error {
	if _, err := s.w.Write([]byte(": ping\n\n")); err != nil {
		return err
	}
	s.f.Flush()
	return nil
}

// run sends render() now, and again after each signal on wake (a burst
// settled for quiet first, so that it costs one render), until ctx ends or
// the client is gone. It pings in between to keep the connection open.
func (s *stream) run(ctx context.Context, render func() []byte, wake chan struct{}, quiet time.Duration) {
	ping := time.NewTicker(pingEvery)
	defer ping.Stop()
	for {
		if s.send(render()) != nil {
			return
		}
	wait:
		for {
			select {
			case <-ctx.Done():
				return
			case <-ping.C:
				if s.ping() != nil {
					return
				}
			case <-wake:
				break wait
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(quiet):
		}
		select {
		case <-wake:
		default:
		}
	}
}

const pingEvery = 25 * time.Second

// fragment renders the template name with data for a live update, or err
// in its place.
func (s *Server) fragment(name string, data any, err error) []byte {
	var buf bytes.Buffer
	if err == nil {
		err = s.pages.ExecuteTemplate(&buf, name, data)
	}
	if err != nil {
		buf.Reset()
		_ = s.pages.ExecuteTemplate(&buf, "liveError", err.Error())
	}
	return buf.Bytes()
}

// liveList streams the list page's table whenever an Application changes.
func (s *Server) liveList(w http.ResponseWriter, r *http.Request) {
	st, ok := newStream(w)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	wake := make(chan struct{}, 1)
	defer s.broker.subscribe("", wake)()
	q := parseListQuery(r.URL.Query(), s.opts.PageSize)
	st.run(r.Context(), func() []byte {
		v, err := s.listApps(r, q)
		return s.fragment("listBody", v, err)
	}, wake, time.Second)
}

// liveApp streams an Application's page when the Application changes, when
// a watch of its objects sees one change, and every Poll.
func (s *Server) liveApp(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	if s.opts.Namespace != "" && ns != s.opts.Namespace {
		http.NotFound(w, r)
		return
	}
	st, ok := newStream(w)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	ctx := r.Context()
	wake := make(chan struct{}, 1)
	defer s.broker.subscribe(ns+"/"+name, wake)()
	objects := newObjectWatch(s.opts.Clusters, ns, name, wake, s.opts.Log)
	defer objects.stop()
	go func() {
		poll := time.NewTicker(s.opts.Poll)
		defer poll.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-poll.C:
				notify(wake)
			}
		}
	}()
	st.run(ctx, func() []byte {
		var view *appView
		d, err := s.detail(r, ns, name)
		if err == nil {
			objects.ensure(ctx, d.Tree)
			view = &appView{AppDetail: d, Now: time.Now()}
		}
		return s.fragment("appBody", view, err)
	}, wake, 200*time.Millisecond)
}
