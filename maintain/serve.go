package maintain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/linkrot/linkrot/actions"
	"github.com/linkrot/linkrot/check"
	"github.com/linkrot/linkrot/dashboard"
)

// ServerReads is what linkrot serve reads, through a read-only handle:
// the receiver's lookups, the dashboard and the IDs its forms post.
type ServerReads interface {
	Site
	dashboard.Store
	actions.Lookup
}

// ServerWrites is what linkrot serve writes, through the writable handle:
// the notifications, their verification queue and the dismissals.
type ServerWrites interface {
	Inbox
	Queue
	actions.Store
	WireCounts(ctx context.Context) (map[string]int, error)
}

// ServeOptions configure Serve.
type ServeOptions struct {
	Listen         string         // host:port
	Token          string         // the dashboard actions' token; "": read-only dashboard
	SecureCookie   bool           // mark the session cookie Secure
	PublicURL      string         // for the Webmention Link header
	TrustedProxies []netip.Prefix // whose X-Forwarded-For names the client
	// Per client address: notifications per second, at once, and open
	// connections.
	Rate         float64
	Burst, Conns int
	// HeaderTimeout is the time a client has to send its request line
	// and header fields.
	HeaderTimeout time.Duration
	NoLinkMod     bool // answer LINK ... LINKMOD with 207 No Linkmod
	// Verification: notifications verified at once, least time between
	// two fetches of one host, most fetches of one host per hour, bound
	// on one fetch.
	Workers      int
	HostDelay    time.Duration
	HostBudget   int
	FetchTimeout time.Duration
	// Drain is how long verifications in progress may finish on shutdown
	// (the rest stay queued).
	Drain        time.Duration
	AllowPrivate bool // sources and targets on loopback and private addresses
	Logger       *slog.Logger
	Generator    string // the dashboard's generator line
	// Serving, when set, is called once the listener is open, with its
	// address and whether the dashboard's actions are enabled.
	Serving func(addr net.Addr, actions bool)
}

// Serve runs linkrot serve until ctx ends: the dashboard and the
// link-maintenance endpoint (draft framing, HTTP/1.1 framing, Webmention)
// on one listener, notifications verified in the background. On the end
// of ctx it stops taking connections, lets requests in flight finish,
// gives verifications the drain time and leaves the rest queued. It
// returns the notification counts by state (nil if they could not be
// read) and the error that stopped the server, if any.
func Serve(ctx context.Context, rdb ServerReads, wdb ServerWrites, o ServeOptions) (map[string]int, error) {
	log := o.Logger
	rc := NewReceiver(rdb, wdb, ReceiverOptions{NoLinkMod: o.NoLinkMod, AllowPrivate: o.AllowPrivate})
	lim := NewLimiter(LimitOptions{Rate: o.Rate, Burst: o.Burst, Conns: o.Conns})
	checker := check.New(check.Options{AllowPrivate: o.AllowPrivate, Timeout: o.FetchTimeout, Retries: -1, Logger: log})
	ver := NewVerifier(wdb, checker, VerifierOptions{Workers: o.Workers, HostDelay: o.HostDelay,
		HostBudget: o.HostBudget, FetchTimeout: o.FetchTimeout, AllowPrivate: o.AllowPrivate, Logger: log})

	hopts := HTTPOptions{PublicURL: o.PublicURL, TrustedProxies: o.TrustedProxies}
	clientOf := func(r *http.Request) string { return ClientOfRequest(hopts, r) }
	act := actions.New(wdb, func(ctx context.Context, target, client string) (int, string) {
		a := rc.Recheck(ctx, target, client)
		return a.Status, a.Text
	}, actions.Options{Token: o.Token, Secure: o.SecureCookie, Allow: lim.Allow, Client: clientOf, Lookup: rdb})

	mux := http.NewServeMux()
	mux.Handle("/actions/", act.Handler())
	mux.Handle("/", newDashboard(rdb, act, log, o.Generator))
	handler := securityHeaders(rc.Handler(lim, mux, hopts))

	inner, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	ln := NewListener(inner, rc, lim, ListenerOptions{HeaderTimeout: o.HeaderTimeout})
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: o.HeaderTimeout,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}

	verCtx, stopVer := context.WithCancel(context.WithoutCancel(ctx))
	verDone := make(chan error, 1)
	go func() { verDone <- ver.Run(verCtx, rc.Queued(), o.Drain) }()
	srvDone := make(chan error, 1)
	go func() { srvDone <- srv.Serve(ln) }()
	log.Info("serving", "addr", ln.Addr().String())
	if o.Serving != nil {
		o.Serving(ln.Addr(), o.Token != "")
	}

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-srvDone:
	}
	// Stop: no new connections; requests in flight (both framings) finish;
	// the batch writer flushes; verifications in progress get the drain
	// time, the rest stay queued in the database.
	shutCtx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	ln.Close()
	if err := srv.Shutdown(shutCtx); err != nil {
		log.Warn("shutdown", "err", err)
	}
	ln.Wait(shutCtx)
	rc.Close()
	stopVer()
	<-verDone
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return nil, fmt.Errorf("serve: %w", serveErr)
	}
	counts, err := wdb.WireCounts(context.Background())
	if err != nil {
		return nil, nil
	}
	return counts, nil
}

func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
		next.ServeHTTP(w, r)
	})
}

// newDashboard returns the dashboard mounted at "/" (package dashboard,
// read-only, over rdb). A request with a valid session gets the
// dashboard whose forms (re-check, dismiss) carry the CSRF token; every
// other request the read-only one, without forms or token.
func newDashboard(rdb dashboard.Store, act *actions.Actions, log *slog.Logger, gen string) http.Handler {
	anon := dashboard.New(rdb, dashboard.Options{Logger: log, Generator: gen})
	if !act.Enabled() {
		return anon
	}
	authed := dashboard.New(rdb, dashboard.Options{Logger: log, Generator: gen, ActionsEnabled: true, CSRFToken: act.SharedCSRF()})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if act.LoggedIn(r) {
			authed.ServeHTTP(w, r)
			return
		}
		anon.ServeHTTP(w, r)
	})
}
