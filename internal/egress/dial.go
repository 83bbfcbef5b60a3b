package egress

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"syscall"
	"time"
)

// Dialer settings, as net/http's DefaultTransport has them.
const (
	dialTimeout         = 30 * time.Second
	keepAlive           = 30 * time.Second
	tlsHandshakeTimeout = 10 * time.Second
	idleConnTimeout     = 90 * time.Second
	maxIdleConns        = 100
	expectContinue      = time.Second
)

// Error is a refused connection. Reason is the condition or step reason
// that reports it.
type Error struct {
	Host string         // the name asked for ("" when an IP literal)
	Addr netip.AddrPort // the address refused
	Rule string         // what refused it (Decision.Rule)
}

func (e *Error) Error() string {
	if e.Host != "" {
		return fmt.Sprintf("egress to %s (%s) refused by %s", e.Host, e.Addr, e.Rule)
	}
	return fmt.Sprintf("egress to %s refused by %s", e.Addr, e.Rule)
}

// IsDenied reports whether err, wrapped anywhere (in a *url.Error from an
// http.Client, a *net.OpError, fmt.Errorf's %w), is an *Error: the policy
// refused, the network did not fail.
func IsDenied(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// DialContext resolves addr's host (unless it is an IP literal), decides
// every resolved address, and dials the first allowed one by IP, so DNS
// is asked once and the address connected to is the address checked (a
// name rebound to 127.0.0.1 between the check and the dial cannot pass).
// When that dial fails, the next allowed address is tried, as net.Dialer
// does. If no address is allowed it returns an *Error naming the first
// refused address and its rule, without opening any connection.
//
// It has net.Dialer.DialContext's signature, for http.Transport.DialContext
// and any client that takes a dial function; networks are tcp, tcp4, tcp6,
// udp, udp4 and udp6. A nil *Policy dials under the default policy.
func (p *Policy) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if p == nil {
		p = &Policy{}
	}
	family, err := ipFamily(network)
	if err != nil {
		return nil, err
	}
	hostPart, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("egress: dial %s %q: %w", network, addr, err)
	}
	port, err := dialPort(ctx, network, portText)
	if err != nil {
		return nil, fmt.Errorf("egress: dial %s %q: %w", network, addr, err)
	}
	host, ips, err := p.resolve(ctx, family, hostPart)
	if err != nil {
		return nil, fmt.Errorf("egress: dial %s %q: %w", network, addr, err)
	}
	allowed, refused := p.sort(host, ips, port)
	if len(allowed) == 0 {
		return nil, refused
	}
	var errs []error
	for _, ap := range allowed {
		conn, err := p.dialChecked(ctx, network, host, ap)
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// ipFamily is the network to resolve names in for a dial network.
func ipFamily(network string) (string, error) {
	switch network {
	case "tcp", "udp":
		return "ip", nil
	case "tcp4", "udp4":
		return "ip4", nil
	case "tcp6", "udp6":
		return "ip6", nil
	}
	return "", fmt.Errorf("egress: network %q is not supported (tcp or udp)", network)
}

// dialPort reads a port number or a service name, as net.Dial does.
func dialPort(ctx context.Context, network, s string) (int, error) {
	if n, err := strconv.ParseUint(s, 10, 16); err == nil {
		return int(n), nil
	}
	return net.DefaultResolver.LookupPort(ctx, network, s)
}

// resolve returns the host name asked for ("" for an IP literal) and the
// addresses it stands for in family. An empty host is this machine, as
// net.Dial has it: the unspecified address.
func (p *Policy) resolve(ctx context.Context, family, host string) (string, []netip.Addr, error) {
	if host == "" {
		if family == "ip6" {
			return "", []netip.Addr{netip.IPv6Unspecified()}, nil
		}
		return "", []netip.Addr{netip.IPv4Unspecified()}, nil
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return "", []netip.Addr{ip}, nil
	}
	r := p.resolver
	if r == nil {
		r = net.DefaultResolver
	}
	ips, err := r.LookupNetIP(ctx, family, host)
	if err != nil {
		return "", nil, err
	}
	out := ips[:0:0]
	for _, ip := range ips {
		if inFamily(family, ip) {
			out = append(out, ip)
		}
	}
	if len(out) == 0 {
		return "", nil, fmt.Errorf("resolve %s: no %s address", host, family)
	}
	return host, out, nil
}

func inFamily(family string, ip netip.Addr) bool {
	switch family {
	case "ip4":
		return ip.Unmap().Is4()
	case "ip6":
		return ip.Is6() && !ip.Is4In6()
	}
	return ip.IsValid()
}

// sort splits ips into the addresses to dial, in order and in the form
// decided (unmapped), and the error of the first refused one.
func (p *Policy) sort(host string, ips []netip.Addr, port int) ([]netip.AddrPort, *Error) {
	var allowed []netip.AddrPort
	var refused *Error
	for _, ip := range ips {
		d := p.Decide(host, ip, port)
		if d.Allowed {
			allowed = append(allowed, netip.AddrPortFrom(ip.Unmap(), uint16(port)))
		} else if refused == nil {
			refused = &Error{Host: host, Addr: netip.AddrPortFrom(ip, uint16(port)), Rule: d.Rule}
		}
	}
	return allowed, refused
}

// dialChecked connects to ap, an address already decided, as an IP
// literal (nothing left to resolve). The dialer's Control checks the
// socket's address once more before connect(2): a second lock on the
// same door, should the dial ever reach another address.
func (p *Policy) dialChecked(ctx context.Context, network, host string, ap netip.AddrPort) (net.Conn, error) {
	if p.dial != nil {
		return p.dial(ctx, network, ap.String())
	}
	d := &net.Dialer{Timeout: dialTimeout, KeepAlive: keepAlive, Control: p.control(host)}
	return d.DialContext(ctx, network, ap.String())
}

// control is a net.Dialer.Control that refuses a socket whose address the
// policy does not allow.
func (p *Policy) control(host string) func(network, address string, c syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("egress: unexpected dial address %q: %w", address, err)
		}
		if d := p.Decide(host, ap.Addr(), int(ap.Port())); !d.Allowed {
			return &Error{Host: host, Addr: ap, Rule: d.Rule}
		}
		return nil
	}
}

// Transport returns a fresh *http.Transport that dials through p. Proxy
// is nil, whatever HTTP_PROXY says: the policy is checked on the address
// dialled, which a proxy would hide. TLSClientConfig is a clone of tlsCfg
// (may be nil; the transport adds its ALPN protocols to its own copy),
// ForceAttemptHTTP2 is set unless tlsCfg chooses NextProtos, timeouts are
// DefaultTransport's (TLS handshake 10s, idle 90s, MaxIdleConns 100), and
// MaxResponseHeaderBytes is maxHeader when it is > 0. A nil *Policy gives
// a transport under the default policy.
func (p *Policy) Transport(tlsCfg *tls.Config, maxHeader int64) *http.Transport {
	t := &http.Transport{
		Proxy:                 nil,
		DialContext:           p.DialContext,
		TLSClientConfig:       tlsCfg.Clone(),
		ForceAttemptHTTP2:     tlsCfg == nil || len(tlsCfg.NextProtos) == 0,
		TLSHandshakeTimeout:   tlsHandshakeTimeout,
		IdleConnTimeout:       idleConnTimeout,
		MaxIdleConns:          maxIdleConns,
		ExpectContinueTimeout: expectContinue,
	}
	if maxHeader > 0 {
		t.MaxResponseHeaderBytes = maxHeader
	}
	return t
}
