package egress

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func mustNew(t testing.TB, o Options) *Policy {
	t.Helper()
	p, err := New(o)
	if err != nil {
		t.Fatalf("New(%+v): %v", o, err)
	}
	return p
}

func TestDecide(t *testing.T) {
	localAddrs := func() ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("10.0.0.5"), netip.MustParseAddr("::ffff:10.0.0.6")}, nil
	}
	listeners := Options{Listeners: []string{":8090", "127.0.0.1:8080", "", "0", "no-port"}, LocalAddrs: localAddrs}
	tests := []struct {
		name string
		opts Options
		host string
		ip   string
		port int
		want Decision
	}{
		{name: "metadata is link-local", ip: "169.254.169.254", port: 80, want: Decision{Rule: ruleLinkLocal}},
		{name: "metadata through a name", host: "metadata.internal", ip: "169.254.169.254", port: 80, want: Decision{Rule: ruleLinkLocal}},
		{name: "ipv6 link-local", ip: "fe80::1", port: 80, want: Decision{Rule: ruleLinkLocal}},
		{name: "ipv6 link-local with zone", ip: "fe80::1%eth0", port: 80, want: Decision{Rule: ruleLinkLocal}},
		{name: "aws ipv6 metadata", ip: "fd00:ec2::254", port: 80, want: Decision{Rule: ruleMetadata}},
		{name: "alibaba metadata", ip: "100.100.100.200", port: 80, want: Decision{Rule: ruleMetadata}},
		{name: "loopback", ip: "127.0.0.1", port: 80, want: Decision{Rule: ruleLoopback}},
		{name: "loopback range", ip: "127.1.2.3", port: 80, want: Decision{Rule: ruleLoopback}},
		{name: "ipv6 loopback", ip: "::1", port: 80, want: Decision{Rule: ruleLoopback}},
		{name: "ipv4-mapped loopback", ip: "::ffff:127.0.0.1", port: 80, want: Decision{Rule: ruleLoopback}},
		{name: "unspecified", ip: "0.0.0.0", port: 80, want: Decision{Rule: ruleUnspecified}},
		{name: "this network", ip: "0.1.2.3", port: 80, want: Decision{Rule: ruleUnspecified}},
		{name: "ipv6 unspecified", ip: "::", port: 80, want: Decision{Rule: ruleUnspecified}},
		{name: "multicast", ip: "224.0.0.251", port: 5353, want: Decision{Rule: ruleMulticast}},
		{name: "ipv6 multicast", ip: "ff02::1", port: 80, want: Decision{Rule: ruleMulticast}},
		{name: "broadcast", ip: "255.255.255.255", port: 80, want: Decision{Rule: ruleBroadcast}},
		{name: "private allowed by default", ip: "10.1.2.3", port: 443, want: Decision{Allowed: true, Rule: ruleDefault}},
		{name: "private ipv6 allowed by default", ip: "fd12::1", port: 443, want: Decision{Allowed: true, Rule: ruleDefault}},
		{name: "public allowed", ip: "8.8.8.8", port: 53, want: Decision{Allowed: true, Rule: ruleDefault}},
		{
			name: "private denied by the operator", opts: Options{Deny: []string{"10.0.0.0/8"}},
			ip: "10.1.2.3", port: 443, want: Decision{Rule: "--egress-deny 10.0.0.0/8"},
		},
		{
			name: "mapped address denied by an ipv4 rule", opts: Options{Deny: []string{"10.0.0.0/8"}},
			ip: "::ffff:10.1.2.3", port: 443, want: Decision{Rule: "--egress-deny 10.0.0.0/8"},
		},
		{
			name: "ipv4 address denied by a mapped rule", opts: Options{Deny: []string{"::ffff:10.0.0.0/104"}},
			ip: "10.1.2.3", port: 443, want: Decision{Rule: "--egress-deny ::ffff:10.0.0.0/104"},
		},
		{
			name: "loopback allowed by cidr", opts: Options{Allow: []string{"127.0.0.1/32"}},
			ip: "127.0.0.1", port: 80, want: Decision{Allowed: true, Rule: "--egress-allow 127.0.0.1/32"},
		},
		{
			name: "loopback allowed by single ip", opts: Options{Allow: []string{"::1"}},
			ip: "::1", port: 80, want: Decision{Allowed: true, Rule: "--egress-allow ::1"},
		},
		{
			name: "allow cidr covers only itself", opts: Options{Allow: []string{"127.0.0.1/32"}},
			ip: "127.0.0.2", port: 80, want: Decision{Rule: ruleLoopback},
		},
		{
			name: "host allow overrides loopback", opts: Options{Allow: []string{"Hooks.Example.com."}},
			host: "hooks.example.COM.", ip: "127.0.0.1", port: 80,
			want: Decision{Allowed: true, Rule: "--egress-allow Hooks.Example.com."},
		},
		{
			name: "host allow does not cover other names", opts: Options{Allow: []string{"hooks.example.com"}},
			host: "evil.example.com", ip: "127.0.0.1", port: 80, want: Decision{Rule: ruleLoopback},
		},
		{
			name: "host allow does not cover the bare ip", opts: Options{Allow: []string{"hooks.example.com"}},
			host: "127.0.0.1", ip: "127.0.0.1", port: 80, want: Decision{Rule: ruleLoopback},
		},
		{
			name: "wildcard allows a subdomain", opts: Options{Allow: []string{"*.example.com"}},
			host: "a.b.example.com", ip: "169.254.169.254", port: 80,
			want: Decision{Allowed: true, Rule: "--egress-allow *.example.com"},
		},
		{
			name: "wildcard does not cover the domain", opts: Options{Allow: []string{"*.example.com"}},
			host: "example.com", ip: "169.254.169.254", port: 80, want: Decision{Rule: ruleLinkLocal},
		},
		{
			name: "wildcard does not cover a lookalike", opts: Options{Allow: []string{"*.example.com"}},
			host: "badexample.com", ip: "169.254.169.254", port: 80, want: Decision{Rule: ruleLinkLocal},
		},
		{
			name: "wildcard deny", opts: Options{Deny: []string{"*.example.com"}},
			host: "hooks.example.com", ip: "8.8.8.8", port: 443, want: Decision{Rule: "--egress-deny *.example.com"},
		},
		{
			name: "deny beats allow", opts: Options{Allow: []string{"10.0.0.0/8"}, Deny: []string{"10.1.0.0/16"}},
			ip: "10.1.2.3", port: 443, want: Decision{Rule: "--egress-deny 10.1.0.0/16"},
		},
		{
			name: "host deny beats ip allow", opts: Options{Allow: []string{"0.0.0.0/0"}, Deny: []string{"evil.example"}},
			host: "evil.example", ip: "8.8.8.8", port: 443, want: Decision{Rule: "--egress-deny evil.example"},
		},
		{
			name: "ip deny beats host allow", opts: Options{Allow: []string{"hooks.example"}, Deny: []string{"8.8.8.8"}},
			host: "hooks.example", ip: "8.8.8.8", port: 443, want: Decision{Rule: "--egress-deny 8.8.8.8"},
		},
		{
			name: "own listener on loopback", opts: listeners,
			ip: "127.0.0.1", port: 8090, want: Decision{Rule: "the controller's own listener :8090"},
		},
		{
			name: "own listener on a local address", opts: listeners,
			ip: "10.0.0.5", port: 8090, want: Decision{Rule: "the controller's own listener :8090"},
		},
		{
			name: "own listener on a mapped local address", opts: listeners,
			ip: "10.0.0.6", port: 8090, want: Decision{Rule: "the controller's own listener :8090"},
		},
		{
			name: "own listener on the unspecified address", opts: listeners,
			ip: "0.0.0.0", port: 8090, want: Decision{Rule: "the controller's own listener :8090"},
		},
		{
			name: "own listener on ipv6 loopback", opts: listeners,
			ip: "::1", port: 8090, want: Decision{Rule: "the controller's own listener :8090"},
		},
		{
			name: "another port on loopback is loopback", opts: listeners,
			ip: "127.0.0.1", port: 8091, want: Decision{Rule: ruleLoopback},
		},
		{
			name: "another port on a local address is allowed", opts: listeners,
			ip: "10.0.0.5", port: 8091, want: Decision{Allowed: true, Rule: ruleDefault},
		},
		{
			name: "same port elsewhere is allowed", opts: listeners,
			ip: "10.0.0.7", port: 8090, want: Decision{Allowed: true, Rule: ruleDefault},
		},
		{
			name: "own listener on a specific ip", opts: listeners,
			ip: "127.0.0.1", port: 8080, want: Decision{Rule: "the controller's own listener 127.0.0.1:8080"},
		},
		{
			name: "specific-ip listener not on other addresses", opts: listeners,
			ip: "10.0.0.5", port: 8080, want: Decision{Allowed: true, Rule: ruleDefault},
		},
		{
			name: "allow overrides the own listener",
			opts: Options{Listeners: []string{":8090"}, Allow: []string{"127.0.0.1"}, LocalAddrs: localAddrs},
			ip:   "127.0.0.1", port: 8090, want: Decision{Allowed: true, Rule: "--egress-allow 127.0.0.1"},
		},
		{
			name: "listener bound to [::]", opts: Options{Listeners: []string{"[::]:8081"}, LocalAddrs: localAddrs},
			ip: "10.0.0.5", port: 8081, want: Decision{Rule: "the controller's own listener [::]:8081"},
		},
		{
			name: "listener bound to 0.0.0.0", opts: Options{Listeners: []string{"0.0.0.0:9443"}, LocalAddrs: localAddrs},
			ip: "::ffff:10.0.0.5", port: 9443, want: Decision{Rule: "the controller's own listener 0.0.0.0:9443"},
		},
		{
			name: "listener bound to a specific non-loopback ip", opts: Options{Listeners: []string{"10.0.0.5:9443"}},
			ip: "10.0.0.5", port: 9443, want: Decision{Rule: "the controller's own listener 10.0.0.5:9443"},
		},
		{
			name: "listener with a host name", opts: Options{Listeners: []string{"localhost:8443"}, LocalAddrs: localAddrs},
			ip: "10.0.0.5", port: 8443, want: Decision{Rule: "the controller's own listener localhost:8443"},
		},
		{name: "invalid address", ip: "", port: 80, want: Decision{Rule: ruleInvalid}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustNew(t, tt.opts)
			var ip netip.Addr
			if tt.ip != "" {
				ip = netip.MustParseAddr(tt.ip)
			}
			if got := p.Decide(tt.host, ip, tt.port); got != tt.want {
				t.Errorf("Decide(%q, %s, %d) = %+v, want %+v", tt.host, tt.ip, tt.port, got, tt.want)
			}
		})
	}
}

func TestDecide_NilPolicyIsTheDefault(t *testing.T) {
	var nilPolicy *Policy
	def := mustNew(t, Options{})
	for _, s := range []string{"127.0.0.1", "169.254.169.254", "::", "10.1.2.3", "8.8.8.8", "::ffff:127.0.0.1"} {
		ip := netip.MustParseAddr(s)
		if got, want := nilPolicy.Decide("", ip, 80), def.Decide("", ip, 80); got != want {
			t.Errorf("nil policy Decide(%s) = %+v, default policy %+v", s, got, want)
		}
	}
	if d := nilPolicy.Decide("", netip.MustParseAddr("127.0.0.1"), 80); d.Allowed {
		t.Errorf("nil policy allows loopback: %+v", d)
	}
}

func TestNew_RefusesBadRules(t *testing.T) {
	for _, bad := range []string{
		"10.0.0.0/33", "", "   ", "exa mple.com", "*.", "*", "*.*.example.com", "a*.example.com",
		"1.2.3", "10.0.0.256", "example.com:443", "[::1]", "fe80::1%eth0", "::1/129",
		"http://example.com", "-bad.example.com", "example..com", "example.123",
		strings.Repeat("a", 64) + ".example.com", "exämple.com",
	} {
		for _, o := range []Options{{Allow: []string{bad}}, {Deny: []string{bad}}} {
			_, err := New(o)
			if err == nil {
				t.Errorf("New(%+v) accepted %q", o, bad)
				continue
			}
			flag := allowFlag
			if o.Deny != nil {
				flag = denyFlag
			}
			if !strings.Contains(err.Error(), flag) {
				t.Errorf("New(%+v) error %q does not name %s", o, err, flag)
			}
		}
	}
}

func TestNew_ReportsEveryBadRule(t *testing.T) {
	_, err := New(Options{Allow: []string{"10.0.0.0/33", "ok.example"}, Deny: []string{"*."}})
	if err == nil {
		t.Fatal("New accepted bad rules")
	}
	for _, want := range []string{`--egress-allow "10.0.0.0/33"`, `--egress-deny "*."`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}

func TestNew_AcceptsGoodRules(t *testing.T) {
	good := []string{
		"10.0.0.0/8", "127.0.0.1/32", "::1/128", "127.0.0.1", "::1", "fd00::/8", "10.1.2.3/8",
		"hooks.example.com", "HOOKS.example.com.", "*.example.com", " svc.cluster.local ",
		"_acme.example.com", "localhost", "0x7f.example",
	}
	if _, err := New(Options{Allow: good, Deny: good}); err != nil {
		t.Fatalf("New refused good rules: %v", err)
	}
}

func TestNew_Listeners(t *testing.T) {
	if _, err := New(Options{Listeners: []string{":notaport"}}); err == nil {
		t.Error("New accepted a listener with an invalid port")
	}
	if _, err := New(Options{Listeners: []string{"127.0.0.1:8080"}, LocalAddrs: func() ([]netip.Addr, error) {
		t.Error("LocalAddrs called without a wildcard listener")
		return nil, nil
	}}); err != nil {
		t.Fatal(err)
	}
	failing := func() ([]netip.Addr, error) { return nil, errors.New("no interfaces") }
	if _, err := New(Options{Listeners: []string{":8080"}, LocalAddrs: failing}); err == nil {
		t.Error("New ignored a LocalAddrs failure")
	}
	// The real interface list: whatever it holds, loopback is in it.
	p := mustNew(t, Options{Listeners: []string{":https"}})
	if d := p.Decide("", netip.MustParseAddr("127.0.0.1"), 443); d.Rule != "the controller's own listener :https" {
		t.Errorf("listener :https: Decide(127.0.0.1:443) = %+v", d)
	}
}
