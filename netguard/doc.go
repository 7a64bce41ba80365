// Package netguard is linkrot's SSRF guard: where the tool may connect.
//
// Everything linkrot fetches is named by hostile input (links, redirects,
// robots.txt and sitemap answers, archive answers), and a DNS name can
// resolve anywhere, the cloud metadata service included. Every connection
// therefore goes through a Dialer that resolves the host itself (cached
// once per run), applies the policy to every address of the answer and
// dials the checked address, so a second DNS answer cannot swap in
// another one (DNS rebinding); a net.Dialer Control hook applies the
// policy again to the address actually connected to. The decision is made
// at dial time, so it holds for every redirect hop.
//
// The policy:
//
//   - never: unspecified, "this network" 0.0.0.0/8, link-local
//     (169.254.0.0/16 with 169.254.169.254, fe80::/10), multicast,
//     broadcast, reserved 240.0.0.0/4;
//   - only when allowed: loopback, RFC 1918, CGNAT 100.64.0.0/10,
//     benchmarking 198.18.0.0/15, ULA fc00::/7, site-local fec0::/10.
//     Allowed means Options.AllowPrivate (everything private), or the
//     dial address is on the Options.Allow list (the audited site's
//     origin, the hosts the user named with --allow-domain, an archive
//     the user configured): exact scope, nothing else private;
//   - everything else (public unicast) is allowed.
//
// IPv6 forms that embed an IPv4 address (IPv4-mapped ::ffff:a.b.c.d,
// IPv4-compatible, NAT64 64:ff9b::/96 and /48, 6to4 2002::/16) are judged
// by the embedded address.
//
// The check, crawler and archive stages share this package; none of them
// builds its own dialer.
package netguard
