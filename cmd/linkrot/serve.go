package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/maintain"
)

// tokenEnv names the environment variable that may hold serve's token.
const tokenEnv = "LINKROT_SERVE_TOKEN"

// runServe is linkrot serve: the dashboard and the link-maintenance
// endpoint (draft framing, HTTP/1.1 framing, Webmention) on one listener.
func runServe(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "serve", "[--db PATH] [--listen ADDR] [flags]")
	db := fs.String("db", "linkrot.db", "database: SQLite file `path` or postgres:// URL")
	listen := fs.String("listen", "127.0.0.1:8080", "`address` to listen on (host:port)")
	tokenFile := fs.String("token-file", "", "read the token of the dashboard's actions from `file` (or set "+tokenEnv+"); without one the dashboard is read-only")
	publicURL := fs.String("public-url", "", "the server's `URL` as the internet sees it, for the Webmention Link header (default: the path alone)")
	secure := fs.Bool("secure-cookie", false, "mark the session cookie Secure (serve behind HTTPS)")
	var proxies listFlag
	fs.Var(&proxies, "trusted-proxy", "`CIDR` of a reverse proxy whose X-Forwarded-For names the client; repeatable")
	rate := fs.Float64("rate", 5, "notifications per second per client address")
	burst := fs.Int("burst", 20, "notifications at once per client address")
	conns := fs.Int("conns", 16, "open connections per client address")
	headerTimeout := fs.Duration("header-timeout", 10*time.Second, "time a client has to send its request line and header fields")
	noLinkmod := fs.Bool("no-linkmod", false, "answer LINK ... LINKMOD with 207 No Linkmod")
	workers := fs.Int("workers", 4, "notifications verified at once")
	hostDelay := fs.Duration("host-delay", time.Second, "least time between two fetches of one host")
	hostBudget := fs.Int("host-budget", 60, "most fetches of one host per hour")
	fetchTimeout := fs.Duration("fetch-timeout", 10*time.Second, "bound on fetching a source or checking a target")
	drain := fs.Duration("drain-timeout", 10*time.Second, "on SIGTERM, how long verifications in progress may finish (the rest stay queued)")
	allowPrivate := fs.Bool("allow-private", false, "let sources and targets on loopback and private addresses be fetched (intranets, tests)")
	logLevel := fs.String("log-level", "warn", "debug, info, warn or error")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%v", err)
	}
	if len(pos) != 0 {
		return usagef("serve takes no arguments")
	}
	var trusted []netip.Prefix
	for _, p := range proxies {
		pf, err := netip.ParsePrefix(p)
		if err != nil {
			a, aerr := netip.ParseAddr(p)
			if aerr != nil {
				return usagef("--trusted-proxy %q: not a CIDR or address", p)
			}
			pf = netip.PrefixFrom(a, a.BitLen())
		}
		trusted = append(trusted, pf)
	}
	token, err := readToken(*tokenFile)
	if err != nil {
		return usagef("%v", err)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return usagef("--log-level: %v", err)
	}
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))

	// The writable handle, for the maintenance records only (and the
	// migrations); the dashboard and the receiver's lookups read through
	// a read-only one.
	wdb, err := openStore(ctx, *db)
	if err != nil {
		return err
	}
	defer wdb.Close()
	rdb, err := openReadOnlyStore(ctx, *db)
	if err != nil {
		return err
	}
	defer rdb.Close()

	counts, err := maintain.Serve(ctx, rdb, wdb, maintain.ServeOptions{
		Listen: *listen, Token: token, SecureCookie: *secure, PublicURL: *publicURL, TrustedProxies: trusted,
		Rate: *rate, Burst: *burst, Conns: *conns, HeaderTimeout: *headerTimeout, NoLinkMod: *noLinkmod,
		Workers: *workers, HostDelay: *hostDelay, HostBudget: *hostBudget, FetchTimeout: *fetchTimeout, Drain: *drain,
		AllowPrivate: *allowPrivate, Logger: log, Generator: "linkrot " + Version,
		Serving: func(addr net.Addr, actions bool) {
			mode := "read-only dashboard (no token)"
			if actions {
				mode = "dashboard actions behind the token"
			}
			fmt.Fprintf(e.stdout, "Serving http://%s/ (%s; Webmention endpoint %s; LINK/UNLINK/UNLINKR/LINKMOD in both framings)\n",
				addr, mode, maintain.WebmentionPath)
		},
	})
	if err != nil {
		return err
	}
	if counts != nil {
		fmt.Fprintf(e.stdout, "Stopped. Notifications: %d queued (kept for the next start), %d done, %d rejected, %d failed.\n",
			counts[audit.WireQueued], counts[audit.WireDone], counts[audit.WireRejected], counts[audit.WireFailed])
	}
	return nil
}

// readToken reads the token from file, else from the environment. It is
// never taken from the command line (visible in ps).
func readToken(file string) (string, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("--token-file: %w", err)
		}
		t := strings.TrimSpace(string(b))
		if len(t) < 16 {
			return "", fmt.Errorf("--token-file: the token must have at least 16 characters")
		}
		return t, nil
	}
	t := strings.TrimSpace(os.Getenv(tokenEnv))
	if t != "" && len(t) < 16 {
		return "", fmt.Errorf("%s: the token must have at least 16 characters", tokenEnv)
	}
	return t, nil
}
