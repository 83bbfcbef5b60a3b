// Package egress is the policy for every connection Steward opens on a
// tenant's behalf: workflow steps (http.do, email.send) and Helm chart
// sources (repository URLs, index entries, OCI registries, redirects).
// A tenant must not make the controller reach loopback, link-local (the
// cloud metadata service at 169.254.169.254), or the controller's own
// listeners, unless the operator allows it.
//
// The decision is made on the IP address actually dialled: DialContext
// resolves the name once, decides every address, and dials the checked
// address as an IP literal, never resolving again, so a name that answers
// 8.8.8.8 to a check and 127.0.0.1 to the dial (DNS rebinding) cannot pass.
//
// Usage:
//
//	p, err := egress.New(egress.Options{
//		Allow:     opts.EgressAllow,                  // --egress-allow
//		Deny:      opts.EgressDeny,                   // --egress-deny
//		Listeners: []string{opts.MetricsAddr, opts.ProbeAddr, ":9443"},
//	})
//	client := &http.Client{Transport: p.Transport(tlsCfg, maxHeaderBytes)}
//	_, err = client.Get(url)
//	if egress.IsDenied(err) { /* a terminal, tenant-facing error: egress.Reason */ }
//
//	conn, err := p.DialContext(ctx, "tcp", "smtp.example.com:587") // any dial function
//	d := p.Decide("hooks.example.com", ip, 443)                     // the pure verdict
//
// A nil *Policy is the default policy, New(Options{}), for Decide,
// DialContext and Transport alike: code that was not given a policy is
// safe, not open.
//
// Decision order (Policy.Decide), the first that applies decides:
//
//  1. Deny rules (--egress-deny): an IP or CIDR rule matching the dialled
//     address, or a host rule matching the name asked for, refuses.
//  2. Allow rules (--egress-allow): a matching rule allows, overriding every
//     built-in refusal below. That is how tests reach a loopback server, and
//     how an operator who truly wants it lets tenants reach the
//     controller's own port.
//  3. Built-in refusals: the controller's own listeners (Options.Listeners);
//     the unspecified address (0.0.0.0/8 and ::, which reach this machine);
//     loopback (127.0.0.0/8, ::1); link-local unicast
//     (169.254.0.0/16, fe80::/10); the cloud metadata addresses outside
//     link-local (fd00:ec2::254 on AWS, 100.100.100.200 on Alibaba Cloud);
//     multicast (224.0.0.0/4, ff00::/8) and broadcast (255.255.255.255).
//  4. Anything else is allowed ("default allow"), private ranges (10/8,
//     172.16/12, 192.168/16, fc00::/7) included: an in-cluster webhook is a
//     normal destination. Operators who disagree deny them with
//     --egress-deny.
//
// IP rules match the dialled address; IPv4-mapped addresses
// (::ffff:127.0.0.1) are decided as their IPv4 form and zones are ignored.
// Host rules ("hooks.example.com", "*.example.com": any subdomain, not the
// domain itself) match the name asked for, case-insensitively and without a
// trailing dot. A host rule in Allow therefore allows whatever that name
// resolves to, loopback included: the operator trusts that name's DNS. A
// host rule in Deny refuses the name, not the addresses it resolves to
// (another name for them is decided on its own).
//
// Implementation notes:
//
//   - policy.go holds Options, New, the rules and listeners they parse into,
//     and Decide: pure, no I/O after New (which lists the interface
//     addresses once, only when a listener is bound to every address).
//   - dial.go holds DialContext, Transport and Error. DialContext refuses
//     before any socket exists; the net.Dialer it uses also checks the
//     socket address in Control, just before connect(2), as a second lock.
//   - Transport sets Proxy to nil: through a proxy, the address dialled is
//     the proxy's and the policy could not see the destination.
//   - A Decision's Rule names the flag or the built-in range that decided,
//     so an Error's message (and the condition built from it, with Reason)
//     tells the operator what to change.
//   - Not covered: addresses that reach IPv4 through a translator (NAT64
//     64:ff9b::/96, 6to4, Teredo) are decided as the IPv6 addresses they
//     are; deny them with --egress-deny where such a gateway exists.
package egress
