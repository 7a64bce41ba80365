package maintain

import (
	"fmt"
	"mime"
	"net/http"
	"net/netip"
	"strings"
)

// Header fields of the HTTP/1.1 framing (docs/serve.md, "The endpoint's
// framings"). The request target is the Source-URL, in absolute form
// ("UNLINKR http://our.site/page HTTP/1.1") or origin form (resolved
// against Host).
const (
	// HeaderSource carries the Source-URL when the request target cannot
	// (an HTTP proxy rewrites an absolute-form target to a path); it wins
	// over the request target.
	HeaderSource = "Link-Source"
	// HeaderTarget carries the Target-URL (required).
	HeaderTarget = "Link-Target"
	// HeaderReplacement carries the third URL: Repl-Source-URL for UNLINK,
	// Repl-Target-URL for UNLINKR.
	HeaderReplacement = "Link-Replacement"
	// HeaderLinkmod asks, on LINK, for LINKMOD calls ("Linkmod: yes"; also
	// 1, true, ?1).
	HeaderLinkmod = "Linkmod"
	// HeaderReason carries the draft's reason phrase of the status, which
	// net/http's status line cannot (it writes 416 as "Requested Range Not
	// Satisfiable").
	HeaderReason = "Linkrot-Reason"
)

// WebmentionPath is where the Webmention endpoint lives.
const WebmentionPath = "/webmention"

// HTTPOptions configure the HTTP side of the receiver.
type HTTPOptions struct {
	// PublicURL is the server's URL as the internet sees it
	// ("https://links.example.org"), for the Webmention endpoint's Link
	// header; "" advertises the path alone (a relative reference, resolved
	// against the request's URL).
	PublicURL string
	// TrustedProxies are the addresses of reverse proxies whose
	// X-Forwarded-For (its last entry) names the client.
	TrustedProxies []netip.Prefix
	// MaxBody bounds a Webmention form (default 16 KiB).
	MaxBody int64
}

// Handler wraps next (the dashboard) with the HTTP side of link
// maintenance: requests with a draft method in the HTTP/1.1 framing,
// the Webmention endpoint at WebmentionPath, and on every response the
// Link header that advertises the endpoint (Webmention 3.1.2).
func (rc *Receiver) Handler(lim *Limiter, next http.Handler, o HTTPOptions) http.Handler {
	if o.MaxBody <= 0 {
		o.MaxBody = 16 << 10
	}
	endpoint := strings.TrimRight(o.PublicURL, "/") + WebmentionPath
	link := fmt.Sprintf("<%s>; rel=\"webmention\"", endpoint)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Link", link)
		client := o.clientOf(r)
		switch {
		case IsDraftMethod(r.Method):
			rc.serveHTTPFraming(w, r, lim, client)
		case r.URL.Path == WebmentionPath:
			rc.serveWebmention(w, r, lim, client, o.MaxBody, endpoint)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// clientOf returns the client address of r: the peer, or for a trusted
// proxy the last X-Forwarded-For entry.
func (o HTTPOptions) clientOf(r *http.Request) string {
	peer := ClientAddr(r.RemoteAddr)
	a, err := netip.ParseAddr(peer)
	if err != nil {
		return peer
	}
	for _, p := range o.TrustedProxies {
		if p.Contains(a) {
			xff := r.Header.Values("X-Forwarded-For")
			if len(xff) == 0 {
				return peer
			}
			parts := strings.Split(xff[len(xff)-1], ",")
			if c, err := netip.ParseAddr(strings.TrimSpace(parts[len(parts)-1])); err == nil {
				return c.Unmap().String()
			}
			return peer
		}
	}
	return peer
}

func writeHTTP(w http.ResponseWriter, a Answer) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set(HeaderReason, Reason(a.Status))
	w.WriteHeader(a.Status)
	fmt.Fprintln(w, sanitizeLine(a.Text))
}

func (rc *Receiver) serveHTTPFraming(w http.ResponseWriter, r *http.Request, lim *Limiter, client string) {
	r.Body = http.MaxBytesReader(w, r.Body, 1024)
	if !lim.Allow(client) {
		writeHTTP(w, answer(StatusTooManyRequest, "rate limit: slow down"))
		return
	}
	req, err := requestFromHTTP(r)
	if err != nil {
		writeHTTP(w, answer(StatusBadRequest, "%v", err))
		return
	}
	writeHTTP(w, rc.Handle(r.Context(), req, "http", client))
}

// requestFromHTTP reads a draft request in the HTTP/1.1 framing.
func requestFromHTTP(r *http.Request) (Request, error) {
	req := Request{Method: r.Method}
	switch uri := r.RequestURI; {
	case r.Header.Get(HeaderSource) != "":
		// Link-Source below.
	case strings.HasPrefix(uri, "http://"), strings.HasPrefix(uri, "https://"):
		req.Source = uri
	case strings.HasPrefix(uri, "/"):
		req.Source = "http://" + r.Host + uri
		if r.TLS != nil {
			req.Source = "https://" + r.Host + uri
		}
	default:
		return req, fmt.Errorf("the request target must be the Source-URL")
	}
	one := func(name string) (string, error) {
		vs := r.Header.Values(name)
		if len(vs) > 1 {
			return "", fmt.Errorf("more than one %s header field", name)
		}
		if len(vs) == 0 {
			return "", nil
		}
		return strings.TrimSpace(vs[0]), nil
	}
	src, err := one(HeaderSource)
	if err != nil {
		return req, err
	}
	if src != "" {
		req.Source = src
	}
	if req.Target, err = one(HeaderTarget); err != nil {
		return req, err
	}
	if req.Target == "" {
		return req, fmt.Errorf("missing %s header field", HeaderTarget)
	}
	if req.Repl, err = one(HeaderReplacement); err != nil {
		return req, err
	}
	lm, err := one(HeaderLinkmod)
	if err != nil {
		return req, err
	}
	switch strings.ToLower(lm) {
	case "":
	case "yes", "1", "true", "?1":
		req.LinkMod = true
	case "no", "0", "false", "?0":
	default:
		return req, fmt.Errorf("%s must be yes or no", HeaderLinkmod)
	}
	switch {
	case req.LinkMod && req.Method != MethodLink:
		return req, fmt.Errorf("%s is only for LINK", HeaderLinkmod)
	case req.Repl != "" && req.Method != MethodUnlink && req.Method != MethodUnlinkR:
		return req, fmt.Errorf("%s is only for UNLINK and UNLINKR", HeaderReplacement)
	}
	return req, nil
}

func (rc *Receiver) serveWebmention(w http.ResponseWriter, r *http.Request, lim *Limiter, client string, maxBody int64, endpoint string) {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "Webmention endpoint (W3C Recommendation 2017): POST source and target, form-encoded, to %s\n", endpoint)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, HEAD, POST")
		writeHTTP(w, answer(405, "POST a Webmention"))
		return
	}
	if !lim.Allow(client) {
		writeHTTP(w, answer(StatusTooManyRequest, "rate limit: slow down"))
		return
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "application/x-www-form-urlencoded" {
		writeHTTP(w, answer(400, "the body must be application/x-www-form-urlencoded"))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	if err := r.ParseForm(); err != nil {
		writeHTTP(w, answer(400, "malformed form"))
		return
	}
	src, tgt := r.PostForm["source"], r.PostForm["target"]
	if len(src) != 1 || len(tgt) != 1 {
		writeHTTP(w, answer(400, "exactly one source and one target are required"))
		return
	}
	a := rc.HandleWebmention(r.Context(), src[0], tgt[0], client)
	if a.Status == 202 {
		a.Text = "accepted: the source will be fetched and checked for a link to the target"
	}
	writeHTTP(w, a)
}

// ClientOfRequest returns the client address of r under o (the peer, or
// a trusted proxy's X-Forwarded-For).
func ClientOfRequest(o HTTPOptions, r *http.Request) string { return o.clientOf(r) }
