package check

// The SSRF guard lives in package netguard, shared by the checker, the
// crawler and the archive stage. These names keep the checker's API.

import (
	"context"
	"time"

	"github.com/linkrot/linkrot/netguard"
)

// RefusedError reports that the SSRF policy forbade a connection (see
// netguard.RefusedError). Checks that end in one get the verdict refused;
// callers branch on it with errors.As.
type RefusedError = netguard.RefusedError

// Resolver looks up the addresses of a host (see netguard.Resolver).
type Resolver = netguard.Resolver

// newGuard returns the run's dialer: o's policy (AllowPrivate, and
// AllowPrivateHosts as an exact allowance), its resolver and connect
// timeout, DNS timings recorded into the attempt's timing record.
func newGuard(runCtx context.Context, o *Options) *netguard.Dialer {
	return netguard.NewDialer(runCtx, guardOptions(o))
}

func guardOptions(o *Options) netguard.Options {
	return netguard.Options{
		AllowPrivate:   o.AllowPrivate,
		Allow:          netguard.NewAllowlist(o.AllowPrivateHosts...),
		Resolver:       o.Resolver,
		ConnectTimeout: o.ConnectTimeout,
		OnLookup: func(ctx context.Context, d time.Duration) {
			if rec, ok := ctx.Value(timingsKey{}).(*timingRec); ok {
				rec.setDNS(d)
			}
		},
	}
}
