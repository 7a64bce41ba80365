package crawler

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestFetchUnit: one page fetched as the recursive crawl fetches it, its
// in-scope links admitted through the claim (first sight only), redirects
// followed only to unclaimed URLs, robots.txt obeyed.
func TestFetchUnit(t *testing.T) {
	var other *httptest.Server
	other = httptest.NewServer(http.NotFoundHandler())
	defer other.Close()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<a href="/a">a</a> <a href="/b#x">b</a> <a href="/claimed">c</a> <a href="%s/ext">e</a> <img src="/img.png">`, other.URL)
		case "/old":
			http.Redirect(w, r, "/new", http.StatusMovedPermanently)
		case "/old2":
			http.Redirect(w, r, "/claimed", http.StatusMovedPermanently)
		default:
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<p>page</p>")
		}
	}))
	defer site.Close()
	var mu sync.Mutex
	claimed := map[string]bool{site.URL + "/claimed": true}
	claim := func(_ context.Context, key string) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		if claimed[key] {
			return false, nil
		}
		claimed[key] = true
		return true, nil
	}
	c := New(Options{Transport: http.DefaultTransport}, nil)
	ctx := context.Background()
	seeds := []string{site.URL + "/"}

	res, err := c.FetchUnit(ctx, seeds, site.URL+"/", 0, claim)
	if err != nil {
		t.Fatal(err)
	}
	if res.Page.Status != 200 || len(res.Page.Links) != 5 {
		t.Fatalf("page: status %d, %d links", res.Page.Status, len(res.Page.Links))
	}
	var next []string
	for _, e := range res.Next {
		next = append(next, strings.TrimPrefix(e.URL, site.URL)+fmt.Sprint(e.Depth))
	}
	slices.Sort(next)
	if !slices.Equal(next, []string{"/a1", "/b1"}) {
		t.Errorf("next = %q, want /a and /b at depth 1 (not the claimed page, the other host or the image)", next)
	}
	// A second unit seeing the same links adds nothing.
	res, err = c.FetchUnit(ctx, seeds, site.URL+"/", 0, claim)
	if err != nil || len(res.Next) != 0 {
		t.Errorf("again: next %v, err %v", res.Next, err)
	}
	// Redirects: followed to an unclaimed URL (which is claimed), not
	// to a claimed one.
	res, err = c.FetchUnit(ctx, seeds, site.URL+"/old", 1, claim)
	if err != nil || res.Page.URL != site.URL+"/new" || res.Page.Status != 200 || !claimed[site.URL+"/new"] {
		t.Errorf("redirect to a new URL: page %s status %d claimed %v err %v", res.Page.URL, res.Page.Status, claimed[site.URL+"/new"], err)
	}
	res, err = c.FetchUnit(ctx, seeds, site.URL+"/old2", 1, claim)
	if err != nil || res.Page.Status != http.StatusMovedPermanently {
		t.Errorf("redirect to a claimed URL: status %d err %v, want the 301 recorded", res.Page.Status, err)
	}
	res, err = c.FetchUnit(ctx, seeds, site.URL+"/private", 1, claim)
	if err != nil || !strings.Contains(res.Page.FetchError, "robots.txt") {
		t.Errorf("disallowed page: fetch error %q err %v", res.Page.FetchError, err)
	}
	failing := func(context.Context, string) (bool, error) { return false, fmt.Errorf("seen set down") }
	if _, err := c.FetchUnit(ctx, seeds, site.URL+"/", 0, failing); err == nil || !strings.Contains(err.Error(), "seen set down") {
		t.Errorf("a failing seen set: err %v", err)
	}
}
