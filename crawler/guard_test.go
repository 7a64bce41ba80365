package crawler_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkrot/linkrot/crawler"
)

// fakeResolver answers from a table: no query leaves the machine.
type fakeResolver map[string][]string

func (f fakeResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	ips, ok := f[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []net.IPAddr
	for _, s := range ips {
		out = append(out, net.IPAddr{IP: net.ParseIP(s)})
	}
	return out, nil
}

// TestCrawl_SSRFGuard: a loopback site whose robots.txt redirects to the
// cloud metadata address, whose pages link and redirect there (in scope
// through --allow-domain, directly and through a name resolving there),
// is crawled (its own loopback host is allowed) without linkrot ever
// connecting to a link-local address: robots.txt counts as unavailable, the
// pages there are recorded as refused by the guard, before any dial.
func TestCrawl_SSRFGuard(t *testing.T) {
	var robotsHits atomic.Int64
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			robotsHits.Add(1)
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/robots.txt", http.StatusFound)
		case "/":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(`<a href="/about">about</a> <a href="/jump">jump</a>
<a href="http://169.254.169.254/latest/meta-data/iam/">metadata</a>
<a href="http://meta.example.test/latest/meta-data/">metadata by name</a>`))
		case "/about":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(`<p>about</p>`))
		case "/jump":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()

	sink := &memSink{}
	opts := crawler.Options{
		// Put the metadata host in scope so the crawler tries it: the
		// guard, not the scope, must stop it.
		AllowDomains: []string{"169.254.169.254", "*.example.test"},
		Resolver:     fakeResolver{"meta.example.test": {"169.254.169.254"}},
		Timeout:      5 * time.Second,
	}
	start := time.Now()
	if _, err := crawler.New(opts, sink).Crawl(context.Background(), []string{site.URL + "/"}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("crawl took %v: something waited on a connection", d)
	}
	byURL := map[string]string{}
	for _, p := range sink.pages {
		byURL[p.RequestURL] = p.FetchError
	}
	// The site itself, on loopback, is crawled: its robots.txt redirect
	// was not followed and counts as unavailable (everything allowed).
	for _, path := range []string{"/", "/about"} {
		if e, ok := byURL[site.URL+path]; !ok || e != "" {
			t.Errorf("%s: recorded %v, fetch error %q; want crawled", path, ok, e)
		}
	}
	if robotsHits.Load() != 1 {
		t.Errorf("robots.txt fetched %d times, want 1", robotsHits.Load())
	}
	for _, u := range []string{
		site.URL + "/jump", // redirect to the metadata address
		"http://169.254.169.254/latest/meta-data/iam/",
		"http://meta.example.test/latest/meta-data/",
	} {
		e, ok := byURL[u]
		if !ok {
			t.Errorf("%s: not recorded", u)
			continue
		}
		// The guard's refusal, made before any dial (a dial would have
		// given a connection error or a timeout).
		if !strings.HasPrefix(e, "refused: ") || !strings.Contains(e, "169.254.169.254") || !strings.Contains(e, "link-local address") {
			t.Errorf("%s: fetch error %q, want the SSRF guard's refusal", u, e)
		}
	}
}

// TestCrawl_PrivateOnlyForTheSite: the site's own loopback host is
// allowed; another loopback service put in scope by name is refused
// unless --allow-domain names it.
func TestCrawl_PrivateOnlyForTheSite(t *testing.T) {
	var otherHits atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits.Add(1)
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<p>intranet</p>`))
	}))
	defer other.Close()
	port := other.URL[strings.LastIndex(other.URL, ":")+1:]
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(`<a href="http://intranet.example.test:` + port + `/">intranet</a>`))
			return
		}
		http.NotFound(w, r)
	}))
	defer site.Close()

	for _, tt := range []struct {
		allow   string
		refused bool
	}{
		{"*.example.test", true},                 // in scope by wildcard: not the site the user named
		{"intranet.example.test:" + port, false}, // named with its port: part of the audited site
		{"intranet.example.test", false},         // named: any port
	} {
		otherHits.Store(0)
		sink := &memSink{}
		opts := crawler.Options{
			AllowDomains: []string{tt.allow},
			Resolver:     fakeResolver{"intranet.example.test": {"127.0.0.1"}},
			IgnoreRobots: true,
			Timeout:      5 * time.Second,
		}
		if _, err := crawler.New(opts, sink).Crawl(context.Background(), []string{site.URL + "/"}); err != nil {
			t.Fatal(err)
		}
		var got string
		for _, p := range sink.pages {
			if strings.Contains(p.RequestURL, "intranet") {
				got = p.FetchError
			}
		}
		if tt.refused {
			if !strings.HasPrefix(got, "refused: ") || otherHits.Load() != 0 {
				t.Errorf("allow %q: fetch error %q, %d requests; want refused, none", tt.allow, got, otherHits.Load())
			}
		} else if got != "" || otherHits.Load() != 1 {
			t.Errorf("allow %q: fetch error %q, %d requests; want fetched once", tt.allow, got, otherHits.Load())
		}
	}
}

// TestCrawlSitemaps_RedirectOffHost: a sitemap redirecting to another host
// is not followed.
func TestCrawlSitemaps_RedirectOffHost(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/sitemap.xml":
			http.Redirect(w, r, "/sitemap-real.xml", http.StatusMovedPermanently)
		case "/sitemap-real.xml":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/sitemap.xml", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()
	_, err := crawler.New(crawler.Options{Timeout: 5 * time.Second}, &memSink{}).CrawlSitemaps(context.Background(), []string{site.URL + "/sitemap.xml"}, nil)
	if err == nil || !strings.Contains(err.Error(), "redirects to another host") {
		t.Fatalf("CrawlSitemaps = %v, want the off-host redirect refused", err)
	}
}
