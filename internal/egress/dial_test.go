package egress

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// These tests send traffic to 127.0.0.1 only: every other address they
// name is refused before a socket exists, or dialled through a fake.

// fakeResolver answers from a table; an entry with several answers gives
// the next one on each call (the last one repeats), as a rebinding DNS
// server would.
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][][]string
	calls   map[string]int
}

func newResolver(answers map[string][][]string) *fakeResolver {
	return &fakeResolver{answers: answers, calls: map[string]int{}}
}

func (r *fakeResolver) LookupNetIP(ctx context.Context, _, host string) ([]netip.Addr, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	seq, ok := r.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	n := r.calls[host]
	r.calls[host]++
	answer := seq[min(n, len(seq)-1)]
	ips := make([]netip.Addr, len(answer))
	for i, s := range answer {
		ips[i] = netip.MustParseAddr(s)
	}
	return ips, nil
}

func (r *fakeResolver) count(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[host]
}

// noDial fails the test if the policy ever opens a connection.
func noDial(t *testing.T) func(context.Context, string, string) (net.Conn, error) {
	return func(_ context.Context, network, address string) (net.Conn, error) {
		t.Errorf("dialled %s %s", network, address)
		return nil, errors.New("test: no dial expected")
	}
}

// loopbackServer listens on 127.0.0.1 and reports each connection's
// remote address.
func loopbackServer(t *testing.T) (port string, accepted <-chan string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	ch := make(chan string, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			ch <- c.RemoteAddr().String()
			c.Close()
		}
	}()
	_, port, _ = net.SplitHostPort(ln.Addr().String())
	return port, ch
}

func waitAccepted(t *testing.T, accepted <-chan string) {
	t.Helper()
	select {
	case <-accepted:
	case <-time.After(5 * time.Second):
		t.Fatal("the listener saw no connection")
	}
}

func TestDialContext_RefusesMetadataWithoutDialling(t *testing.T) {
	p := mustNew(t, Options{Resolver: newResolver(map[string][][]string{"metadata.example": {{"169.254.169.254"}}})})
	p.dial = noDial(t)
	conn, err := p.DialContext(context.Background(), "tcp", "metadata.example:80")
	if conn != nil {
		conn.Close()
		t.Fatal("DialContext returned a connection")
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("DialContext error %v is not an *Error", err)
	}
	want := Error{Host: "metadata.example", Addr: netip.MustParseAddrPort("169.254.169.254:80"), Rule: ruleLinkLocal}
	if *e != want {
		t.Errorf("error = %+v, want %+v", *e, want)
	}
	wantMsg := "egress to metadata.example (169.254.169.254:80) refused by link-local (169.254.0.0/16, fe80::/10: cloud metadata; allow with --egress-allow)"
	if err.Error() != wantMsg {
		t.Errorf("message\n%s\nwant\n%s", err, wantMsg)
	}
}

// With the real dialer: every address is refused, so the refusal comes
// before any socket (nothing could answer 169.254.169.254 here anyway).
func TestDialContext_RefusesEveryAddressWithTheRealDialer(t *testing.T) {
	r := newResolver(map[string][][]string{"internal.example": {{"169.254.169.254", "fe80::1", "224.0.0.1", "fd00:ec2::254"}}})
	p := mustNew(t, Options{Resolver: r})
	start := time.Now()
	_, err := p.DialContext(context.Background(), "tcp", "internal.example:80")
	if !IsDenied(err) {
		t.Fatalf("DialContext error %v, want a refusal", err)
	}
	if !strings.Contains(err.Error(), "169.254.169.254:80") {
		t.Errorf("error %q does not name the first refused address", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("refusal took %s: did it dial?", d)
	}
}

func TestDialContext_IPLiteral(t *testing.T) {
	r := newResolver(nil)
	p := mustNew(t, Options{Resolver: r})
	p.dial = noDial(t)
	_, err := p.DialContext(context.Background(), "tcp", "169.254.169.254:80")
	want := "egress to 169.254.169.254:80 refused by " + ruleLinkLocal
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
	var e *Error
	if errors.As(err, &e) && e.Host != "" {
		t.Errorf("Host = %q for an IP literal", e.Host)
	}
	for _, addr := range []string{"[::1]:80", "[::ffff:127.0.0.1]:80", ":80", "0.0.0.0:80", "[fe80::1%lo]:80"} {
		if _, err := p.DialContext(context.Background(), "tcp", addr); !IsDenied(err) {
			t.Errorf("DialContext(%s): %v, want a refusal", addr, err)
		}
	}
	if len(r.calls) != 0 {
		t.Errorf("IP literals were resolved: %v", r.calls)
	}
}

func TestDialContext_AllowedLoopbackConnects(t *testing.T) {
	port, accepted := loopbackServer(t)
	p := mustNew(t, Options{Allow: []string{"127.0.0.1/32"}})
	conn, err := p.DialContext(context.Background(), "tcp", net.JoinHostPort("127.0.0.1", port))
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	waitAccepted(t, accepted)
}

func TestDialContext_NameRebindingToLoopbackIsRefused(t *testing.T) {
	port, accepted := loopbackServer(t)
	r := newResolver(map[string][][]string{"rebind.example": {{"127.0.0.1"}}})
	p := mustNew(t, Options{Resolver: r})
	_, err := p.DialContext(context.Background(), "tcp", net.JoinHostPort("rebind.example", port))
	var e *Error
	if !errors.As(err, &e) || e.Rule != ruleLoopback || e.Host != "rebind.example" {
		t.Fatalf("DialContext error %v, want a loopback refusal of rebind.example", err)
	}
	select {
	case a := <-accepted:
		t.Errorf("the listener saw a connection from %s", a)
	case <-time.After(50 * time.Millisecond):
	}
}

// The name is resolved once; the address dialled is the one allowed, even
// when the name would answer differently on a second look.
func TestDialContext_DialsTheCheckedAddress(t *testing.T) {
	port, accepted := loopbackServer(t)
	r := newResolver(map[string][][]string{"rebind.example": {
		{"169.254.169.254", "127.0.0.1"}, // the answer checked
		{"169.254.169.254"},              // what a second lookup would say
	}})
	p := mustNew(t, Options{Resolver: r, Allow: []string{"127.0.0.1/32"}})
	conn, err := p.DialContext(context.Background(), "tcp", net.JoinHostPort("rebind.example", port))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if got, want := conn.RemoteAddr().String(), net.JoinHostPort("127.0.0.1", port); got != want {
		t.Errorf("connected to %s, want %s", got, want)
	}
	waitAccepted(t, accepted)
	if n := r.count("rebind.example"); n != 1 {
		t.Errorf("resolved %d times, want 1", n)
	}
}

func TestDialContext_DialsByIP(t *testing.T) {
	r := newResolver(map[string][][]string{"svc.example": {{"10.0.0.1", "::ffff:127.0.0.1", "8.8.8.8"}}})
	p := mustNew(t, Options{Resolver: r, Deny: []string{"10.0.0.0/8"}, Allow: []string{"127.0.0.1"}})
	var dialled []string
	p.dial = func(_ context.Context, network, address string) (net.Conn, error) {
		dialled = append(dialled, network+" "+address)
		if len(dialled) == 1 {
			return nil, errors.New("connection refused")
		}
		c, _ := net.Pipe()
		return c, nil
	}
	conn, err := p.DialContext(context.Background(), "tcp", "svc.example:443")
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	// 10.0.0.1 is denied; the mapped loopback is dialled unmapped; when it
	// fails, the next allowed address is tried.
	want := []string{"tcp 127.0.0.1:443", "tcp 8.8.8.8:443"}
	if fmt.Sprint(dialled) != fmt.Sprint(want) {
		t.Errorf("dialled %q, want %q", dialled, want)
	}
}

func TestDialContext_Families(t *testing.T) {
	r := newResolver(map[string][][]string{"dual.example": {{"::1", "127.0.0.1"}}})
	p := mustNew(t, Options{Resolver: r, Allow: []string{"::1", "127.0.0.1"}})
	var dialled []string
	p.dial = func(_ context.Context, network, address string) (net.Conn, error) {
		dialled = append(dialled, network+" "+address)
		c, _ := net.Pipe()
		return c, nil
	}
	for _, network := range []string{"tcp4", "tcp6", "udp"} {
		conn, err := p.DialContext(context.Background(), network, "dual.example:53")
		if err != nil {
			t.Fatalf("%s: %v", network, err)
		}
		conn.Close()
	}
	want := []string{"tcp4 127.0.0.1:53", "tcp6 [::1]:53", "udp [::1]:53"}
	if fmt.Sprint(dialled) != fmt.Sprint(want) {
		t.Errorf("dialled %q, want %q", dialled, want)
	}
}

func TestDialContext_Errors(t *testing.T) {
	r := newResolver(map[string][][]string{"v6only.example": {{"2001:db8::1"}}})
	p := mustNew(t, Options{Resolver: r})
	p.dial = noDial(t)
	for _, tt := range []struct{ network, addr string }{
		{"unix", "/var/run/docker.sock"},
		{"tcp", "no-port.example"},
		{"tcp", "nxdomain.example:80"},
		{"tcp4", "v6only.example:80"},
		{"tcp", "v6only.example:notaport"},
	} {
		_, err := p.DialContext(context.Background(), tt.network, tt.addr)
		if err == nil || IsDenied(err) {
			t.Errorf("DialContext(%s, %s) = %v, want a non-policy error", tt.network, tt.addr, err)
		}
	}
	var dnsErr *net.DNSError
	if _, err := p.DialContext(context.Background(), "tcp", "nxdomain.example:80"); !errors.As(err, &dnsErr) {
		t.Errorf("resolver error %v is not kept", err)
	}
}

func TestDialContext_HonoursContext(t *testing.T) {
	port, _ := loopbackServer(t)
	r := newResolver(map[string][][]string{"ok.example": {{"127.0.0.1"}}})
	p := mustNew(t, Options{Resolver: r, Allow: []string{"127.0.0.1"}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, addr := range []string{"ok.example:" + port, "127.0.0.1:" + port} {
		if conn, err := p.DialContext(ctx, "tcp", addr); err == nil {
			conn.Close()
			t.Errorf("DialContext(%s) with a cancelled context connected", addr)
		} else if !errors.Is(err, context.Canceled) {
			t.Errorf("DialContext(%s) error %v, want context.Canceled", addr, err)
		}
	}
}

func TestDialContext_NilPolicyIsTheDefault(t *testing.T) {
	port, accepted := loopbackServer(t)
	var p *Policy
	_, err := p.DialContext(context.Background(), "tcp", net.JoinHostPort("127.0.0.1", port))
	if !IsDenied(err) {
		t.Fatalf("nil policy DialContext error %v, want a refusal", err)
	}
	select {
	case a := <-accepted:
		t.Errorf("the listener saw a connection from %s", a)
	case <-time.After(50 * time.Millisecond):
	}
}

func TestControl_ChecksTheSocketAddress(t *testing.T) {
	p := mustNew(t, Options{Allow: []string{"127.0.0.1"}})
	if err := p.control("x.example")("tcp4", "169.254.169.254:80", nil); !IsDenied(err) {
		t.Errorf("control(169.254.169.254:80) = %v, want a refusal", err)
	}
	if err := p.control("")("tcp4", "127.0.0.1:80", nil); err != nil {
		t.Errorf("control(127.0.0.1:80) = %v", err)
	}
	if err := p.control("")("tcp4", "garbage", nil); err == nil {
		t.Error("control accepted an address it cannot read")
	}
}

func TestTransport_RefusesLoopbackByDefault(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		t.Error("the server got a request")
	}))
	defer srv.Close()
	for name, p := range map[string]*Policy{"default": mustNew(t, Options{}), "nil": nil} {
		client := &http.Client{Transport: p.Transport(nil, 0)}
		_, err := client.Get(srv.URL)
		var ue *url.Error
		if !errors.As(err, &ue) {
			t.Fatalf("%s: GET error %v is not a *url.Error", name, err)
		}
		if !IsDenied(err) {
			t.Errorf("%s: GET error %v, want a refusal", name, err)
		}
		if !strings.Contains(err.Error(), "refused by "+ruleLoopback) {
			t.Errorf("%s: GET error %q does not name the loopback rule", name, err)
		}
	}
}

func TestTransport_AllowedLoopback(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	p := mustNew(t, Options{Allow: []string{"127.0.0.1/32"}})
	client := &http.Client{Transport: p.Transport(nil, 0)}
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(body) != "ok" {
		t.Errorf("GET = %d %q", resp.StatusCode, body)
	}
}

// A redirect is a new dial, decided like the first: a host rule allowing
// one name does not let its server send the client to loopback.
func TestTransport_RedirectIsDecidedAgain(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		t.Error("the redirect target got a request")
	}))
	defer target.Close()
	_, targetPort, _ := net.SplitHostPort(strings.TrimPrefix(target.URL, "http://"))
	trusted := httptest.NewServer(http.RedirectHandler("http://internal.example:"+targetPort+"/", http.StatusFound))
	defer trusted.Close()
	_, trustedPort, _ := net.SplitHostPort(strings.TrimPrefix(trusted.URL, "http://"))

	r := newResolver(map[string][][]string{"charts.example": {{"127.0.0.1"}}, "internal.example": {{"127.0.0.1"}}})
	p := mustNew(t, Options{Resolver: r, Allow: []string{"charts.example"}})
	client := &http.Client{Transport: p.Transport(nil, 0)}
	_, err := client.Get("http://charts.example:" + trustedPort + "/index.yaml")
	var e *Error
	if !errors.As(err, &e) || e.Host != "internal.example" || e.Rule != ruleLoopback {
		t.Fatalf("GET error %v, want a loopback refusal of internal.example", err)
	}
}

func TestTransport_Settings(t *testing.T) {
	var p *Policy
	tr := p.Transport(nil, 0)
	if tr.Proxy != nil || tr.DialContext == nil || !tr.ForceAttemptHTTP2 || tr.TLSClientConfig != nil {
		t.Errorf("Transport(nil, 0) = %+v", tr)
	}
	if tr.TLSHandshakeTimeout != 10*time.Second || tr.IdleConnTimeout != 90*time.Second || tr.MaxIdleConns != 100 {
		t.Errorf("timeouts: handshake %s, idle %s, max idle %d", tr.TLSHandshakeTimeout, tr.IdleConnTimeout, tr.MaxIdleConns)
	}
	if tr.MaxResponseHeaderBytes != 0 {
		t.Errorf("MaxResponseHeaderBytes = %d, want the default", tr.MaxResponseHeaderBytes)
	}

	cfg := &tls.Config{ServerName: "charts.example", NextProtos: []string{"http/1.1"}}
	tr = p.Transport(cfg, 1<<16)
	if tr.ForceAttemptHTTP2 {
		t.Error("ForceAttemptHTTP2 set although tlsCfg chooses NextProtos")
	}
	if tr.TLSClientConfig == cfg || tr.TLSClientConfig.ServerName != "charts.example" {
		t.Errorf("TLSClientConfig = %p %+v, want a clone of %p", tr.TLSClientConfig, tr.TLSClientConfig, cfg)
	}
	if tr.MaxResponseHeaderBytes != 1<<16 {
		t.Errorf("MaxResponseHeaderBytes = %d", tr.MaxResponseHeaderBytes)
	}
	if tr2 := p.Transport(cfg, 0); tr2 == tr {
		t.Error("Transport returned the same transport twice")
	}
}

func TestIsDenied(t *testing.T) {
	e := &Error{Addr: netip.MustParseAddrPort("127.0.0.1:80"), Rule: ruleLoopback}
	wrapped := []error{
		e,
		fmt.Errorf("fetch chart: %w", e),
		&url.Error{Op: "Get", URL: "http://x", Err: &net.OpError{Op: "dial", Net: "tcp", Err: e}},
	}
	for _, err := range wrapped {
		if !IsDenied(err) {
			t.Errorf("IsDenied(%v) = false", err)
		}
	}
	for _, err := range []error{nil, errors.New("egress to 127.0.0.1:80 refused"), context.DeadlineExceeded} {
		if IsDenied(err) {
			t.Errorf("IsDenied(%v) = true", err)
		}
	}
}
