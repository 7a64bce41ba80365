package check

import (
	"context"
	"time"

	"github.com/linkrot/linkrot/httpx"
	"github.com/linkrot/linkrot/netguard"
)

// RefusedError reports that the SSRF policy forbade a connection (see
// netguard.RefusedError). Checks that end in one get the verdict refused;
// callers branch on it with errors.As.
type RefusedError = netguard.RefusedError

// HTTP returns the options of the transport a Checker with o builds
// (httpx.NewTransport): its SSRF policy, resolver, connect timeout and
// per-host connection limit. Other stages that fetch for the same run
// build theirs from it, so that one policy holds for the whole run.
func (o Options) HTTP() httpx.Options {
	return httpx.Options{
		AllowPrivate:      o.AllowPrivate,
		AllowPrivateHosts: o.AllowPrivateHosts,
		Resolver:          o.Resolver,
		ConnectTimeout:    o.ConnectTimeout,
		PerHost:           o.PerHost,
		Transport:         o.Transport,
	}
}

// newGuard returns the run's dialer: o's policy (AllowPrivate, and
// AllowPrivateHosts as an exact allowance), its resolver and connect
// timeout, DNS timings recorded into the attempt's timing record.
func newGuard(runCtx context.Context, o *Options) *netguard.Dialer {
	ho := o.HTTP()
	ho.OnLookup = func(ctx context.Context, d time.Duration) {
		if rec, ok := ctx.Value(timingsKey{}).(*timingRec); ok {
			rec.setDNS(d)
		}
	}
	return httpx.NewDialer(runCtx, ho)
}
