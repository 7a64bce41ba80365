// Package actions holds the state-changing actions of linkrot serve's
// dashboard (re-check a link, dismiss a finding) behind a token, CSRF-safe.
//
// Without a token configured every action answers 403 and the dashboard
// is read-only. With one, a client is authorised either by an
// "Authorization: Bearer TOKEN" header (scripts; a browser never sends it
// on its own, so no CSRF) or by a session cookie obtained by POSTing the
// token to /actions/login; a cookie-authorised action must also carry the
// session's CSRF token in the form field "csrf" (an HMAC of the session
// under the token), come from the same origin (Origin and Sec-Fetch-Site
// when the browser sends them), and be a POST. The cookie is HttpOnly and
// SameSite=Strict.
package actions

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/linkrot/linkrot/audit"
)

// Paths of the actions.
const (
	PathLogin   = "/actions/login"
	PathLogout  = "/actions/logout"
	PathRecheck = "/actions/recheck"
	PathDismiss = "/actions/dismiss"
	// CookieName is the session cookie.
	CookieName = "linkrot_session"
	// FieldCSRF is the form field carrying the CSRF token.
	FieldCSRF = "csrf"
)

// Store records dismissals (store/sqlite's writable DB satisfies it).
type Store interface {
	SaveDismissal(ctx context.Context, d audit.Dismissal) error
}

// Lookup resolves the IDs the dashboard's forms post (field target_id of a
// re-check, finding_id of a dismissal) to URLs (store/sqlite's DB
// satisfies it); audit.ErrNotFound for an unknown ID.
type Lookup interface {
	TargetURL(ctx context.Context, id int64) (string, error)
	FindingByID(ctx context.Context, id int64) (*audit.Finding, error)
}

// Rechecker queues a re-check of a target URL and returns its HTTP
// status (202 when queued) and a line of text.
type Rechecker func(ctx context.Context, target, client string) (int, string)

// Options configure Actions.
type Options struct {
	// Token is the secret; empty: every action is refused (read-only).
	Token string
	// Secure marks the cookie Secure (serve behind HTTPS).
	Secure bool
	// SessionTTL is how long a session lasts (default 12h).
	SessionTTL time.Duration
	// Allow rate-limits logins and actions per client address (nil: no
	// limit).
	Allow func(client string) bool
	// Client returns the client address of a request.
	Client func(r *http.Request) string
	// Lookup resolves target_id and finding_id (nil: only the URL fields
	// target, page are accepted).
	Lookup Lookup
}

// Actions serves the action endpoints. It is safe for concurrent use.
type Actions struct {
	o       Options
	store   Store
	recheck Rechecker

	mu       sync.Mutex
	sessions map[string]time.Time
}

// New returns the actions over store and recheck.
func New(store Store, recheck Rechecker, o Options) *Actions {
	if o.SessionTTL <= 0 {
		o.SessionTTL = 12 * time.Hour
	}
	if o.Client == nil {
		o.Client = func(r *http.Request) string { return r.RemoteAddr }
	}
	return &Actions{o: o, store: store, recheck: recheck, sessions: map[string]time.Time{}}
}

// Enabled reports whether a token is configured.
func (a *Actions) Enabled() bool { return a.o.Token != "" }

// Handler returns the handler of the /actions/ paths.
func (a *Actions) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+PathLogin, a.login)
	mux.HandleFunc("POST "+PathLogout, a.logout)
	mux.HandleFunc("POST "+PathRecheck, a.guard(a.doRecheck))
	mux.HandleFunc("POST "+PathDismiss, a.guard(a.doDismiss))
	mux.HandleFunc("GET "+PathLogin, a.loginForm)
	return mux
}

// CSRF returns the CSRF token of r's session for the forms of the
// dashboard, and false when r has no valid session (render read-only).
func (a *Actions) CSRF(r *http.Request) (string, bool) {
	sid, ok := a.session(r)
	if !ok {
		return "", false
	}
	return a.csrfOf(sid), true
}

// SharedCSRF is a CSRF token valid with every session, for a renderer
// that takes one token for all its forms (dashboard.Options.CSRFToken).
// Hand it only to pages served to a request with a valid session
// (LoggedIn): an anonymous reader must not see it.
func (a *Actions) SharedCSRF() string { return a.csrfOf("dashboard") }

// LoggedIn reports whether r carries a valid session.
func (a *Actions) LoggedIn(r *http.Request) bool {
	_, ok := a.session(r)
	return ok
}

func (a *Actions) csrfOf(sid string) string {
	m := hmac.New(sha256.New, []byte(a.o.Token))
	m.Write([]byte("csrf\x00" + sid))
	return hex.EncodeToString(m.Sum(nil))
}

func (a *Actions) session(r *http.Request) (string, bool) {
	if !a.Enabled() {
		return "", false
	}
	c, err := r.Cookie(CookieName)
	if err != nil || len(c.Value) != 64 {
		return "", false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	exp, ok := a.sessions[c.Value]
	if !ok || time.Now().After(exp) {
		delete(a.sessions, c.Value)
		return "", false
	}
	return c.Value, true
}

func (a *Actions) bearer(r *http.Request) bool {
	h := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(h, "Bearer ")
	return ok && a.Enabled() && subtle.ConstantTimeCompare([]byte(tok), []byte(a.o.Token)) == 1
}

// sameOrigin rejects a browser request from another site.
func sameOrigin(r *http.Request) bool {
	if s := r.Header.Get("Sec-Fetch-Site"); s != "" && s != "same-origin" && s != "none" {
		return false
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || !strings.EqualFold(u.Host, r.Host) {
			return false
		}
	}
	return true
}

func text(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	fmt.Fprintln(w, msg)
}

// guard authorises a state-changing action.
func (a *Actions) guard(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !a.Enabled() {
			text(w, http.StatusForbidden, "read-only: linkrot serve runs without a token")
			return
		}
		if a.o.Allow != nil && !a.o.Allow(a.o.Client(r)) {
			text(w, http.StatusTooManyRequests, "rate limit: slow down")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
		if err := r.ParseForm(); err != nil {
			text(w, http.StatusBadRequest, "malformed form")
			return
		}
		if !a.bearer(r) {
			sid, ok := a.session(r)
			if !ok {
				text(w, http.StatusUnauthorized, "log in first (POST the token to "+PathLogin+")")
				return
			}
			got := []byte(r.PostForm.Get(FieldCSRF))
			okCSRF := subtle.ConstantTimeCompare(got, []byte(a.csrfOf(sid))) == 1 ||
				subtle.ConstantTimeCompare(got, []byte(a.SharedCSRF())) == 1
			if !sameOrigin(r) || !okCSRF {
				text(w, http.StatusForbidden, "CSRF check failed")
				return
			}
		}
		next(w, r)
	}
}

func (a *Actions) login(w http.ResponseWriter, r *http.Request) {
	if !a.Enabled() {
		text(w, http.StatusForbidden, "read-only: linkrot serve runs without a token")
		return
	}
	if a.o.Allow != nil && !a.o.Allow(a.o.Client(r)) {
		text(w, http.StatusTooManyRequests, "rate limit: slow down")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	if err := r.ParseForm(); err != nil || !sameOrigin(r) {
		text(w, http.StatusBadRequest, "malformed login")
		return
	}
	if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("token")), []byte(a.o.Token)) != 1 {
		text(w, http.StatusUnauthorized, "wrong token")
		return
	}
	b := make([]byte, 32)
	rand.Read(b)
	sid := hex.EncodeToString(b)
	a.mu.Lock()
	now := time.Now()
	for k, exp := range a.sessions {
		if now.After(exp) {
			delete(a.sessions, k)
		}
	}
	if len(a.sessions) < 1000 {
		a.sessions[sid] = now.Add(a.o.SessionTTL)
	}
	a.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: sid, Path: "/", HttpOnly: true, Secure: a.o.Secure,
		SameSite: http.SameSiteStrictMode, MaxAge: int(a.o.SessionTTL.Seconds())})
	http.Redirect(w, r, backTo(r), http.StatusSeeOther)
}

func (a *Actions) logout(w http.ResponseWriter, r *http.Request) {
	if sid, ok := a.session(r); ok && sameOrigin(r) {
		a.mu.Lock()
		delete(a.sessions, sid)
		a.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

var loginTmpl = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>linkrot: log in</title></head>
<body><form method="post" action="{{.Path}}"><label>Token <input type="password" name="token" autocomplete="current-password"></label>
<input type="hidden" name="next" value="{{.Next}}"><button>Log in</button></form></body></html>`))

func (a *Actions) loginForm(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	loginTmpl.Execute(w, struct{ Path, Next string }{PathLogin, backTo(r)})
}

// backTo returns the local path the form named in "next", "/" otherwise
// (never another site: an open redirect would help phishing).
func backTo(r *http.Request) string {
	n := r.FormValue("next")
	if strings.HasPrefix(n, "/") && !strings.HasPrefix(n, "//") && !strings.HasPrefix(n, "/\\") && !strings.ContainsAny(n, "\r\n") {
		return n
	}
	return "/"
}

func (a *Actions) doRecheck(w http.ResponseWriter, r *http.Request) {
	target := r.PostForm.Get("target")
	if id := r.PostForm.Get("target_id"); id != "" && a.o.Lookup != nil {
		n, err := strconv.ParseInt(id, 10, 64)
		if err == nil {
			target, err = a.o.Lookup.TargetURL(r.Context(), n)
		}
		if err != nil {
			text(w, http.StatusBadRequest, "no such target")
			return
		}
	}
	status, msg := a.recheck(r.Context(), target, a.o.Client(r))
	if status == http.StatusAccepted && a.bearer(r) {
		text(w, status, msg)
		return
	}
	if status == http.StatusAccepted {
		http.Redirect(w, r, backTo(r), http.StatusSeeOther)
		return
	}
	text(w, status, msg)
}

func (a *Actions) doDismiss(w http.ResponseWriter, r *http.Request) {
	page, target := r.PostForm.Get("page"), r.PostForm.Get("target")
	if id := r.PostForm.Get("finding_id"); id != "" && a.o.Lookup != nil {
		n, err := strconv.ParseInt(id, 10, 64)
		var f *audit.Finding
		if err == nil {
			f, err = a.o.Lookup.FindingByID(r.Context(), n)
		}
		if err != nil {
			text(w, http.StatusBadRequest, "no such finding")
			return
		}
		page, target = f.PageURL, f.Target
	}
	if page == "" || target == "" || len(page) > 4096 || len(target) > 4096 {
		text(w, http.StatusBadRequest, "page and target are required")
		return
	}
	note := r.PostForm.Get("note")
	if len(note) > 1000 {
		note = note[:1000]
	}
	err := a.store.SaveDismissal(r.Context(), audit.Dismissal{PageURL: page, Target: target, Note: note, DismissedAt: time.Now().UTC()})
	if err != nil {
		text(w, http.StatusInternalServerError, "could not store the dismissal")
		return
	}
	if a.bearer(r) {
		text(w, http.StatusOK, "dismissed")
		return
	}
	http.Redirect(w, r, backTo(r), http.StatusSeeOther)
}
