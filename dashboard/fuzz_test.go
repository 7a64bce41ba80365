package dashboard

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzDashboard_Query sends arbitrary paths and query strings (filters,
// search, pagination, run and target IDs) to the handler: it never
// answers 500, never panics, and never echoes a raw '<' from the request
// into the page.
func FuzzDashboard_Query(f *testing.F) {
	for _, s := range []string{"/broken?verdict=moved&host=ext.example", "/links?verdict=broken&p=2", "/pages?status=2xx&q=about",
		"/search?q=%25_%27", "/target/3", "/page?url=https%3A%2F%2Fsite.example%2F&run=3", "/links?p=99999999999",
		"/broken?run=-1", "/search?q=%3Cscript%3E", "/links?q=%00%FF", "/target/9223372036854775807"} {
		f.Add(s)
	}
	fx := newFixture(f)
	h := New(fx.openRO(f), Options{})
	f.Fuzz(func(t *testing.T, target string) {
		if !strings.HasPrefix(target, "/") || strings.ContainsAny(target, " \r\n\t#") {
			return
		}
		req, err := http.NewRequest("GET", "http://dashboard"+target, nil)
		if err != nil {
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("GET %s = %d", target, rec.Code)
		}
		if q := req.URL.Query().Get("q"); strings.Contains(q, "<x") && strings.Contains(rec.Body.String(), q) {
			t.Fatalf("GET %s: the query is echoed unescaped", target)
		}
	})
}
