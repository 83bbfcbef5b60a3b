package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// Reason is the condition/step reason of a refused connection, so that a
// tenant reads the same word wherever Steward refused to connect for them.
const Reason = "EgressDenied"

// The flags whose values are Options.Allow and Options.Deny: a Decision's
// Rule names the flag, so the operator knows what to change.
const (
	allowFlag = "--egress-allow"
	denyFlag  = "--egress-deny"
)

// The built-in refusals, as Decision.Rule reports them.
const (
	ruleLoopback    = "loopback (127.0.0.0/8, ::1; allow with " + allowFlag + ")"
	ruleLinkLocal   = "link-local (169.254.0.0/16, fe80::/10: cloud metadata; allow with " + allowFlag + ")"
	ruleMetadata    = "cloud metadata (fd00:ec2::254, 100.100.100.200; allow with " + allowFlag + ")"
	ruleUnspecified = "unspecified address"
	ruleMulticast   = "multicast"
	ruleBroadcast   = "broadcast"
	ruleInvalid     = "invalid address"
	ruleDefault     = "default allow"
	listenerPrefix  = "the controller's own listener "
)

// metadataAddrs are the cloud metadata services outside link-local (the
// link-local ones, 169.254.169.254 and fe80::a9fe:a9fe, are refused as
// link-local already).
var metadataAddrs = [...]netip.Addr{
	netip.MustParseAddr("fd00:ec2::254"),   // AWS IMDS over IPv6
	netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
}

// thisNetwork is 0.0.0.0/8: "this host on this network", never a
// destination; Linux connects 0.0.0.0 to the machine itself.
var thisNetwork = netip.MustParsePrefix("0.0.0.0/8")

// Options configure a Policy.
type Options struct {
	// Allow and Deny are rules: a CIDR ("10.0.0.0/8", "127.0.0.1/32",
	// "::1/128"), a single IP ("127.0.0.1"), a host name
	// ("hooks.example.com", matched case-insensitively, trailing dot
	// ignored) or a wildcard domain ("*.example.com": any subdomain, not
	// example.com itself). Invalid rules are an error from New.
	// IPv4-mapped IPv6 rules ("::ffff:127.0.0.1") are read as their IPv4
	// form, since that is what is dialled.
	Allow, Deny []string
	// Listeners are the controller's own listen addresses
	// ("127.0.0.1:8080", ":8090", "0.0.0.0:9443", "[::]:8081"). A tenant
	// must not reach the controller's metrics, probes or webhook through
	// it, so connecting to a listener is refused by default: to its own IP
	// and port, or, for a listener bound to an unspecified address (or an
	// empty host, or a host name), to its port on any loopback, unspecified
	// or LocalAddrs address. Empty strings, "0" and addresses without a
	// port are ignored; a port that is neither a number nor a service name
	// is an error from New.
	Listeners []string
	// Resolver resolves host names (net.DefaultResolver when nil).
	Resolver interface {
		LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
	}
	// LocalAddrs lists this machine's interface addresses (for the
	// own-listener rule when a listener is bound to 0.0.0.0 or ::); nil
	// uses net.InterfaceAddrs. It is called once, by New, and only when
	// such a listener is configured. Tests inject it.
	LocalAddrs func() ([]netip.Addr, error)
}

// resolver is Options.Resolver's type.
type resolver = interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Policy decides which addresses Steward may connect to on a tenant's
// behalf, and dials only those. It is immutable after New and safe for
// concurrent use. A nil *Policy is the default policy, New(Options{}): no
// operator rules, every built-in refusal.
type Policy struct {
	allow, deny []rule
	listeners   []listener
	local       map[netip.Addr]bool // interface addresses, for wildcard listeners
	resolver    resolver            // nil: net.DefaultResolver
	// dial opens the connection to an address already decided; nil uses a
	// net.Dialer that checks the address again. Tests replace it to see
	// what would be dialled.
	dial func(ctx context.Context, network, address string) (net.Conn, error)
}

// New checks the rules and listeners of o and returns the policy. Every
// invalid rule is reported, each named by its flag.
func New(o Options) (*Policy, error) {
	p := &Policy{resolver: o.Resolver}
	var errs []error
	var err error
	if p.allow, err = parseRules(allowFlag, o.Allow); err != nil {
		errs = append(errs, err)
	}
	if p.deny, err = parseRules(denyFlag, o.Deny); err != nil {
		errs = append(errs, err)
	}
	if p.listeners, err = parseListeners(o.Listeners); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if p.local, err = localAddrs(p.listeners, o.LocalAddrs); err != nil {
		return nil, err
	}
	return p, nil
}

// Decision is the verdict on one address.
type Decision struct {
	Allowed bool
	// Rule names what decided, for messages: `--egress-deny 10.0.0.0/8`,
	// `--egress-allow 127.0.0.1/32`, `loopback (...; allow with
	// --egress-allow)`, `the controller's own listener :8090`, `default
	// allow`, ...
	Rule string
}

// Decide is the pure decision for connecting to ip:port, reached through
// host (the name asked for; "" or the IP literal when none). The first
// that applies decides:
//
//  1. a Deny rule matching ip, or a Deny host rule matching host, refuses;
//  2. an Allow rule matching ip, or an Allow host rule matching host,
//     allows, whatever the built-in refusals below say;
//  3. built-in refusals: the controller's own listeners, unspecified
//     (0.0.0.0/8, ::), loopback, link-local, cloud metadata, multicast and
//     broadcast;
//  4. anything else is allowed ("default allow"), private ranges included.
//
// IPv4-mapped addresses are decided as their IPv4 form, and zones are
// ignored. An invalid ip is refused.
func (p *Policy) Decide(host string, ip netip.Addr, port int) Decision {
	if p == nil {
		p = &Policy{}
	}
	if !ip.IsValid() {
		return Decision{Rule: ruleInvalid}
	}
	ip = canonical(ip)
	host = normalHost(host)
	for _, r := range p.deny {
		if r.matches(host, ip) {
			return Decision{Rule: denyFlag + " " + r.text}
		}
	}
	for _, r := range p.allow {
		if r.matches(host, ip) {
			return Decision{Allowed: true, Rule: allowFlag + " " + r.text}
		}
	}
	if rule := p.builtin(ip, port); rule != "" {
		return Decision{Rule: rule}
	}
	return Decision{Allowed: true, Rule: ruleDefault}
}

// builtin returns the built-in refusal of a canonical ip:port, or "".
func (p *Policy) builtin(ip netip.Addr, port int) string {
	for _, l := range p.listeners {
		if l.reaches(ip, port, p.local) {
			return listenerPrefix + l.text
		}
	}
	switch {
	case ip.IsUnspecified() || thisNetwork.Contains(ip):
		return ruleUnspecified
	case ip.IsLoopback():
		return ruleLoopback
	case ip.IsLinkLocalUnicast():
		return ruleLinkLocal
	case isMetadata(ip):
		return ruleMetadata
	case ip.IsMulticast():
		return ruleMulticast
	case ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return ruleBroadcast
	}
	return ""
}

func isMetadata(ip netip.Addr) bool {
	for _, m := range metadataAddrs {
		if ip == m {
			return true
		}
	}
	return false
}

// canonical is the form of ip that rules and ranges are matched against:
// no zone (netip.Prefix never contains a zoned address), and IPv4-mapped
// IPv6 as IPv4 (::ffff:127.0.0.1 is 127.0.0.1 on the wire).
func canonical(ip netip.Addr) netip.Addr {
	return ip.WithZone("").Unmap()
}

// normalHost is host as host rules are matched: lower case, without the
// trailing dot of a fully qualified name.
func normalHost(host string) string {
	return strings.TrimSuffix(strings.ToLower(host), ".")
}

// listener is one of the controller's own listen addresses.
type listener struct {
	text string     // as configured, for messages
	ip   netip.Addr // canonical; invalid when bound to every address
	port int
}

// reaches reports whether connecting to the canonical ip:port reaches l.
func (l listener) reaches(ip netip.Addr, port int, local map[netip.Addr]bool) bool {
	if port != l.port {
		return false
	}
	if l.ip.IsValid() {
		return ip == l.ip
	}
	return ip.IsLoopback() || ip.IsUnspecified() || thisNetwork.Contains(ip) || local[ip]
}

// parseListeners reads Options.Listeners, skipping the ones that listen
// nowhere or on a port chosen by the kernel.
func parseListeners(addrs []string) ([]listener, error) {
	var out []listener
	var errs []error
	for _, a := range addrs {
		a = strings.TrimSpace(a)
		if a == "" || a == "0" {
			continue
		}
		host, portText, err := net.SplitHostPort(a)
		if err != nil {
			continue // no port: not a listen address we can match
		}
		port, err := parsePort(portText)
		if err != nil {
			errs = append(errs, fmt.Errorf("listener %q: %w", a, err))
			continue
		}
		if port == 0 {
			continue
		}
		l := listener{text: a, port: port}
		if ip, err := netip.ParseAddr(host); err == nil && !ip.IsUnspecified() {
			l.ip = canonical(ip)
		}
		// An empty host, an unspecified address or a host name (we cannot
		// know which of our addresses it was bound to) is every address.
		out = append(out, l)
	}
	return out, errors.Join(errs...)
}

// parsePort reads a port number or a service name ("https").
func parsePort(s string) (int, error) {
	if n, err := strconv.ParseUint(s, 10, 16); err == nil {
		return int(n), nil
	}
	n, err := net.LookupPort("tcp", s)
	if err != nil {
		return 0, fmt.Errorf("invalid port %q: %w", s, err)
	}
	return n, nil
}

// localAddrs reads this machine's interface addresses when a listener is
// bound to all of them.
func localAddrs(ls []listener, list func() ([]netip.Addr, error)) (map[netip.Addr]bool, error) {
	wildcard := false
	for _, l := range ls {
		wildcard = wildcard || !l.ip.IsValid()
	}
	if !wildcard {
		return nil, nil
	}
	if list == nil {
		list = interfaceAddrs
	}
	addrs, err := list()
	if err != nil {
		return nil, fmt.Errorf("list local addresses for the controller's own listeners: %w", err)
	}
	local := make(map[netip.Addr]bool, len(addrs))
	for _, a := range addrs {
		if a.IsValid() {
			local[canonical(a)] = true
		}
	}
	return local, nil
}

// interfaceAddrs is net.InterfaceAddrs as netip addresses.
func interfaceAddrs() ([]netip.Addr, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		var ip net.IP
		switch a := a.(type) {
		case *net.IPNet:
			ip = a.IP
		case *net.IPAddr:
			ip = a.IP
		}
		if ip, ok := netip.AddrFromSlice(ip); ok {
			out = append(out, ip)
		}
	}
	return out, nil
}

// rule is one Allow or Deny rule: an IP prefix, an exact host name, or a
// wildcard domain.
type rule struct {
	text   string       // as written, for messages
	prefix netip.Prefix // IP rules; invalid for host rules
	host   string       // exact host rules, normalised
	suffix string       // wildcard rules: ".example.com" for "*.example.com"
}

// matches reports whether r applies to a connection to the canonical ip
// reached through the normalised host. Host rules never match an IP
// literal: a rule's host is never one.
func (r rule) matches(host string, ip netip.Addr) bool {
	switch {
	case r.prefix.IsValid():
		return r.prefix.Contains(ip)
	case r.suffix != "":
		return len(host) > len(r.suffix) && strings.HasSuffix(host, r.suffix)
	default:
		return host != "" && host == r.host
	}
}

// parseRules reads the values of one flag.
func parseRules(flag string, texts []string) ([]rule, error) {
	var out []rule
	var errs []error
	for _, t := range texts {
		r, err := parseRule(t)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %w", flag, t, err))
			continue
		}
		out = append(out, r)
	}
	return out, errors.Join(errs...)
}

// parseRule reads one rule (surrounding spaces ignored, as a flag list
// "a, b" leaves them).
func parseRule(text string) (rule, error) {
	text = strings.TrimSpace(text)
	r := rule{text: text}
	switch {
	case text == "":
		return rule{}, errors.New("empty rule")
	case strings.Contains(text, "/"):
		prefix, err := netip.ParsePrefix(text)
		if err != nil {
			return rule{}, fmt.Errorf("invalid CIDR: %w", err)
		}
		r.prefix = canonicalPrefix(prefix)
		return r, nil
	case strings.Contains(text, ":") || isIPv4Like(text):
		ip, err := netip.ParseAddr(text)
		if err != nil {
			return rule{}, fmt.Errorf("invalid IP address: %w", err)
		}
		if ip.Zone() != "" {
			return rule{}, errors.New("an IP rule cannot have a zone")
		}
		r.prefix = canonicalPrefix(netip.PrefixFrom(ip, ip.BitLen()))
		return r, nil
	}
	name := normalHost(text)
	if rest, ok := strings.CutPrefix(name, "*."); ok {
		if err := checkHostName(rest); err != nil {
			return rule{}, err
		}
		r.suffix = "." + rest
		return r, nil
	}
	if err := checkHostName(name); err != nil {
		return rule{}, err
	}
	r.host = name
	return r, nil
}

// canonicalPrefix masks p and reads an IPv4-mapped IPv6 prefix as IPv4,
// the form addresses are matched in.
func canonicalPrefix(p netip.Prefix) netip.Prefix {
	p = p.Masked()
	if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p
}

// isIPv4Like reports whether text is dots and digits only: an IPv4
// address, or a mistyped one, never a host name (no top-level domain is
// numeric).
func isIPv4Like(text string) bool {
	return strings.Trim(text, "0123456789.") == ""
}

// checkHostName accepts a DNS name in normal form: labels of 1 to 63
// letters, digits, hyphens or underscores, not starting or ending with a
// hyphen, 253 characters at most, and a top-level label that is not
// all digits (so that no host rule can look like an IP address).
func checkHostName(name string) error {
	if name == "" {
		return errors.New("empty host name")
	}
	if len(name) > 253 {
		return errors.New("host name longer than 253 characters")
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if err := checkLabel(l); err != nil {
			return err
		}
	}
	if strings.Trim(labels[len(labels)-1], "0123456789") == "" {
		return errors.New("a host name's last label cannot be numeric (an IP address?)")
	}
	return nil
}

func checkLabel(l string) error {
	if l == "" || len(l) > 63 {
		return fmt.Errorf("host name label %q must be 1 to 63 characters", l)
	}
	if l[0] == '-' || l[len(l)-1] == '-' {
		return fmt.Errorf("host name label %q cannot start or end with a hyphen", l)
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("host name label %q: character %q is not allowed (a host name, *.domain, an IP or a CIDR)", l, c)
		}
	}
	return nil
}
