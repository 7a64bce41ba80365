package actions

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

type memStore struct {
	mu sync.Mutex
	ds []audit.Dismissal
}

func (m *memStore) SaveDismissal(_ context.Context, d audit.Dismissal) error {
	m.mu.Lock()
	m.ds = append(m.ds, d)
	m.mu.Unlock()
	return nil
}

const token = "0123456789abcdef-secret"

func setup(t *testing.T, tok string) (*httptest.Server, *memStore, *[]string, *Actions) {
	t.Helper()
	st := &memStore{}
	var rechecked []string
	a := New(st, func(_ context.Context, target, _ string) (int, string) {
		rechecked = append(rechecked, target)
		return 202, "queued"
	}, Options{Token: tok})
	mux := http.NewServeMux()
	mux.Handle("/actions/", a.Handler())
	mux.HandleFunc("/csrf", func(w http.ResponseWriter, r *http.Request) {
		c, ok := a.CSRF(r)
		if !ok {
			http.Error(w, "no session", 401)
			return
		}
		io.WriteString(w, c)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, st, &rechecked, a
}

func noRedirect(jar http.CookieJar) *http.Client {
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func status(t *testing.T, c *http.Client, req *http.Request) (int, string) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, strings.TrimSpace(string(b))
}

func form(u string, v url.Values) *http.Request {
	req, _ := http.NewRequest("POST", u, strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return req
}

func TestActions_ReadOnlyWithoutToken(t *testing.T) {
	srv, st, rechecked, _ := setup(t, "")
	c := noRedirect(nil)
	for _, p := range []string{PathRecheck, PathDismiss, PathLogin} {
		if s, _ := status(t, c, form(srv.URL+p, url.Values{"target": {"http://x/"}, "token": {""}})); s != 403 {
			t.Errorf("%s without a token configured: %d, want 403", p, s)
		}
	}
	if len(*rechecked) != 0 || len(st.ds) != 0 {
		t.Error("a read-only server changed state")
	}
}

func TestActions_SessionAndCSRF(t *testing.T) {
	srv, st, rechecked, _ := setup(t, token)
	jar, _ := cookiejar.New(nil)
	c := noRedirect(jar)
	// Not logged in.
	if s, _ := status(t, c, form(srv.URL+PathRecheck, url.Values{"target": {"http://x/"}})); s != 401 {
		t.Errorf("recheck without a session: %d, want 401", s)
	}
	if s, _ := status(t, c, form(srv.URL+PathLogin, url.Values{"token": {"wrong"}})); s != 401 {
		t.Errorf("wrong token: %d, want 401", s)
	}
	if s, _ := status(t, c, form(srv.URL+PathLogin, url.Values{"token": {token}, "next": {"//evil.example/"}})); s != 303 {
		t.Fatalf("login: %d, want 303", s)
	}
	req, _ := http.NewRequest("GET", srv.URL+"/csrf", nil)
	s, csrf := status(t, c, req)
	if s != 200 || len(csrf) != 64 {
		t.Fatalf("csrf: %d %q", s, csrf)
	}
	// Session without the CSRF token, with a wrong one, from another
	// origin: refused.
	if s, _ := status(t, c, form(srv.URL+PathRecheck, url.Values{"target": {"http://x/"}})); s != 403 {
		t.Errorf("no csrf: %d, want 403", s)
	}
	if s, _ := status(t, c, form(srv.URL+PathRecheck, url.Values{"target": {"http://x/"}, FieldCSRF: {strings.Repeat("0", 64)}})); s != 403 {
		t.Errorf("wrong csrf: %d, want 403", s)
	}
	cross := form(srv.URL+PathDismiss, url.Values{"page": {"p"}, "target": {"t"}, FieldCSRF: {csrf}})
	cross.Header.Set("Origin", "https://evil.example")
	if s, _ := status(t, c, cross); s != 403 {
		t.Errorf("cross-origin: %d, want 403", s)
	}
	cross = form(srv.URL+PathDismiss, url.Values{"page": {"p"}, "target": {"t"}, FieldCSRF: {csrf}})
	cross.Header.Set("Sec-Fetch-Site", "cross-site")
	if s, _ := status(t, c, cross); s != 403 {
		t.Errorf("cross-site: %d, want 403", s)
	}
	if len(*rechecked) != 0 || len(st.ds) != 0 {
		t.Fatal("a refused action changed state")
	}
	// With it: done, and back to a local page only.
	resp, err := c.Do(form(srv.URL+PathRecheck, url.Values{"target": {"http://x/"}, FieldCSRF: {csrf}, "next": {"https://evil.example/"}}))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/" {
		t.Errorf("recheck: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if s, _ := status(t, c, form(srv.URL+PathDismiss, url.Values{"page": {"http://p/"}, "target": {"http://t/"}, FieldCSRF: {csrf}, "note": {"<b>fine</b>"}})); s != 303 {
		t.Errorf("dismiss: %d", s)
	}
	if len(*rechecked) != 1 || len(st.ds) != 1 || st.ds[0].Note != "<b>fine</b>" {
		t.Errorf("rechecked %v, dismissed %+v", *rechecked, st.ds)
	}
	// GET never changes state.
	req, _ = http.NewRequest("GET", srv.URL+PathRecheck+"?target=http://x/", nil)
	if s, _ := status(t, c, req); s != 405 {
		t.Errorf("GET recheck: %d, want 405", s)
	}
	// Logged out: the session is gone.
	status(t, c, form(srv.URL+PathLogout, nil))
	req, _ = http.NewRequest("GET", srv.URL+"/csrf", nil)
	if s, _ := status(t, c, req); s != 401 {
		t.Errorf("after logout: %d, want 401", s)
	}
}

func TestActions_Bearer(t *testing.T) {
	srv, _, rechecked, _ := setup(t, token)
	req := form(srv.URL+PathRecheck, url.Values{"target": {"http://x/"}})
	req.Header.Set("Authorization", "Bearer "+token)
	if s, body := status(t, http.DefaultClient, req); s != 202 || body != "queued" {
		t.Errorf("bearer: %d %q", s, body)
	}
	req = form(srv.URL+PathRecheck, url.Values{"target": {"http://x/"}})
	req.Header.Set("Authorization", "Bearer nope")
	if s, _ := status(t, http.DefaultClient, req); s != 401 {
		t.Errorf("wrong bearer: %d, want 401", s)
	}
	if len(*rechecked) != 1 {
		t.Errorf("rechecked %v", *rechecked)
	}
}

type lookup struct{}

func (lookup) TargetURL(_ context.Context, id int64) (string, error) {
	if id == 7 {
		return "http://t.example/seven", nil
	}
	return "", audit.ErrNotFound
}

func (lookup) FindingByID(_ context.Context, id int64) (*audit.Finding, error) {
	if id == 3 {
		return &audit.Finding{PageURL: "http://p.example/", Target: "http://t.example/three"}, nil
	}
	return nil, audit.ErrNotFound
}

// TestActions_DashboardForms: the dashboard's forms post IDs and the
// shared CSRF token, which is valid with any session but never without
// one.
func TestActions_DashboardForms(t *testing.T) {
	st := &memStore{}
	var rechecked []string
	a := New(st, func(_ context.Context, target, _ string) (int, string) {
		rechecked = append(rechecked, target)
		return 202, "queued"
	}, Options{Token: token, Lookup: lookup{}})
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	jar, _ := cookiejar.New(nil)
	c := noRedirect(jar)
	shared := a.SharedCSRF()
	if s, _ := status(t, c, form(srv.URL+PathRecheck, url.Values{"target_id": {"7"}, FieldCSRF: {shared}})); s != 401 {
		t.Errorf("shared token without a session: %d, want 401", s)
	}
	status(t, c, form(srv.URL+PathLogin, url.Values{"token": {token}}))
	if s, _ := status(t, c, form(srv.URL+PathRecheck, url.Values{"target_id": {"7"}, FieldCSRF: {shared}})); s != 303 {
		t.Errorf("recheck target_id: %d", s)
	}
	if s, _ := status(t, c, form(srv.URL+PathRecheck, url.Values{"target_id": {"8"}, FieldCSRF: {shared}})); s != 400 {
		t.Errorf("unknown target_id: %d, want 400", s)
	}
	if s, _ := status(t, c, form(srv.URL+PathDismiss, url.Values{"finding_id": {"3"}, FieldCSRF: {shared}})); s != 303 {
		t.Errorf("dismiss finding_id: %d", s)
	}
	if len(rechecked) != 1 || rechecked[0] != "http://t.example/seven" || len(st.ds) != 1 || st.ds[0].Target != "http://t.example/three" {
		t.Errorf("rechecked %v, dismissed %+v", rechecked, st.ds)
	}
}
