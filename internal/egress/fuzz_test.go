package egress

import (
	"net/netip"
	"strings"
	"testing"
)

// FuzzParseRule checks that a rule New accepts means what it says: it
// reads back the same, an IP rule contains its own address, a host rule
// matches its name in any case and never an IP literal, a wildcard
// matches subdomains and not the domain.
func FuzzParseRule(f *testing.F) {
	for _, s := range []string{
		"10.0.0.0/8", "127.0.0.1/32", "::1/128", "127.0.0.1", "::ffff:127.0.0.1", "::ffff:10.0.0.0/104",
		"fe80::1%eth0", "hooks.example.com", "HOOKS.example.com.", "*.example.com", "*.", "", "exa mple.com",
		"10.0.0.0/33", "1.2.3", "example.123", " a.b ", "_srv.example", "*.*.x", "[::1]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		r, err := parseRule(text)
		if err != nil {
			return
		}
		again, err := parseRule(r.text)
		if err != nil || again != r {
			t.Fatalf("parseRule(%q) = %+v, but its text reads back as %+v, %v", text, r, again, err)
		}
		if r.prefix.IsValid() {
			if r.host != "" || r.suffix != "" {
				t.Fatalf("rule %+v is both an IP and a host rule", r)
			}
			if a := r.prefix.Addr(); a.Is4In6() && r.prefix.Bits() >= 96 {
				t.Fatalf("rule %q kept an IPv4-mapped prefix %s", text, r.prefix)
			}
			if !r.matches("", r.prefix.Addr()) {
				t.Fatalf("rule %q does not contain its own address %s", text, r.prefix.Addr())
			}
			return
		}
		name := r.host
		if r.suffix != "" {
			name = strings.TrimPrefix(r.suffix, ".")
			if r.host != "" {
				t.Fatalf("rule %+v is both exact and wildcard", r)
			}
			if !r.matches(normalHost("A."+name+"."), netip.Addr{}) {
				t.Fatalf("wildcard %q does not match a subdomain of %s", text, name)
			}
			if r.matches(name, netip.Addr{}) {
				t.Fatalf("wildcard %q matches %s itself", text, name)
			}
		} else if !r.matches(normalHost(strings.ToUpper(name)+"."), netip.Addr{}) {
			t.Fatalf("host rule %q does not match %s", text, name)
		}
		if _, err := netip.ParseAddr(name); err == nil {
			t.Fatalf("host rule %q names an IP address", text)
		}
		if strings.ContainsAny(name, " */:[]%") {
			t.Fatalf("host rule %q kept a character no host name has: %q", text, name)
		}
	})
}

// FuzzDecide checks the invariants of Decide over any address: an IPv4
// address and its mapped form, with or without a zone, get the same
// verdict; allowing everything allows everything, denying everything
// refuses everything (deny beats allow), and the built-in refusals refuse.
func FuzzDecide(f *testing.F) {
	f.Add("", []byte{169, 254, 169, 254}, uint16(80))
	f.Add("metadata.internal", []byte{127, 0, 0, 1}, uint16(8090))
	f.Add("x.example.com", []byte{10, 0, 0, 5}, uint16(8090))
	f.Add("", netip.MustParseAddr("fe80::1").AsSlice(), uint16(443))
	f.Add("", netip.MustParseAddr("::ffff:127.0.0.1").AsSlice(), uint16(80))
	f.Add("A.Example.COM.", []byte{8, 8, 8, 8}, uint16(53))

	local := func() ([]netip.Addr, error) { return []netip.Addr{netip.MustParseAddr("10.0.0.5")}, nil }
	def := mustNew(f, Options{Listeners: []string{":8090", "127.0.0.1:8080"}, LocalAddrs: local})
	rules := mustNew(f, Options{Allow: []string{"*.example.com", "127.0.0.1"}, Deny: []string{"10.0.0.0/8", "bad.example.com"}})
	allowAll := mustNew(f, Options{Allow: []string{"0.0.0.0/0", "::/0"}, Listeners: []string{":8090"}, LocalAddrs: local})
	denyAll := mustNew(f, Options{Allow: []string{"0.0.0.0/0", "::/0"}, Deny: []string{"0.0.0.0/0", "::/0"}})

	f.Fuzz(func(t *testing.T, host string, b []byte, port uint16) {
		ip, ok := netip.AddrFromSlice(b)
		if !ok {
			return
		}
		p := int(port)
		for _, pol := range []*Policy{def, rules, allowAll, denyAll} {
			d := pol.Decide(host, ip, p)
			if d.Rule == "" {
				t.Fatalf("Decide(%q, %s, %d) gave no rule", host, ip, p)
			}
			if other := pol.Decide(host, ip.WithZone("eth0"), p); ip.Is6() && other != d {
				t.Fatalf("zone changes the verdict on %s: %+v, %+v", ip, d, other)
			}
			if ip.Is4() {
				mapped := netip.AddrFrom16(ip.As16())
				if other := pol.Decide(host, mapped, p); other != d {
					t.Fatalf("Decide(%s) = %+v, but Decide(%s) = %+v", ip, d, mapped, other)
				}
			}
		}
		if d := allowAll.Decide(host, ip, p); !d.Allowed {
			t.Fatalf("allow-all refused %s: %+v", ip, d)
		}
		if d := denyAll.Decide(host, ip, p); d.Allowed {
			t.Fatalf("deny-all allowed %s: %+v", ip, d)
		}
		c := ip.Unmap()
		if c.IsLoopback() || c.IsLinkLocalUnicast() || c.IsUnspecified() || c.IsMulticast() {
			if d := def.Decide(host, ip, p); d.Allowed {
				t.Fatalf("the default policy allowed %s: %+v", ip, d)
			}
		}
	})
}
