package crawler

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestRobotsGate: the gate applies the site's robots.txt to the site's
// URLs only, and paces requests to a host with a Crawl-delay one at a
// time, each at least the delay after the previous one ended (the first
// after the robots.txt request).
func TestRobotsGate(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "User-agent: *\nDisallow: /private/\nCrawl-delay: 0.05\n")
	}))
	defer site.Close()
	g, done := NewRobotsGate([]string{site.URL + "/"}, RobotsGateOptions{})
	defer done()
	ctx := context.Background()
	mustURL := func(s string) *url.URL {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	if why := g.Disallowed(ctx, mustURL(site.URL+"/private/x")); why != "disallowed by robots.txt" {
		t.Errorf("site's private URL: %q", why)
	}
	if why := g.Disallowed(ctx, mustURL(site.URL+"/public")); why != "" {
		t.Errorf("site's public URL: %q", why)
	}
	if why := g.Disallowed(ctx, mustURL("http://elsewhere.example/private/x")); why != "" {
		t.Errorf("another host's URL: %q, want allowed (not the site)", why)
	}
	if d := g.CrawlDelay(ctx, mustURL("http://elsewhere.example/")); d != 0 {
		t.Errorf("another host's delay: %v", d)
	}
	if d := g.CrawlDelay(ctx, mustURL(site.URL+"/")); d != 50*time.Millisecond {
		t.Errorf("site's delay: %v", d)
	}
	var (
		mu    sync.Mutex
		spans [][2]time.Time
		wg    sync.WaitGroup
	)
	for range 4 {
		wg.Go(func() {
			release, err := g.Wait(ctx, mustURL(site.URL+"/page"))
			if err != nil {
				t.Error(err)
				return
			}
			start := time.Now()
			time.Sleep(5 * time.Millisecond)
			end := time.Now()
			release()
			mu.Lock()
			spans = append(spans, [2]time.Time{start, end})
			mu.Unlock()
		})
	}
	wg.Wait()
	for i := range spans {
		for j := range spans {
			if i == j {
				continue
			}
			a, b := spans[i], spans[j]
			if b[0].After(a[0]) && b[0].Sub(a[1]) < 50*time.Millisecond {
				t.Errorf("request started %v after the previous ended, want at least the 50ms Crawl-delay", b[0].Sub(a[1]))
			}
		}
	}
	// A cancelled wait gives up its turn.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := g.Wait(cctx, mustURL(site.URL+"/page")); err == nil {
		t.Errorf("Wait with a cancelled context succeeded")
	}
}

type setter struct {
	mu   sync.Mutex
	keys map[string]time.Duration
}

func (s *setter) SetCrawlDelay(key string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys[key] = d
}

// TestRobotsGate_Scheduler: with a shared scheduler the gate hands it the
// host's Crawl-delay (keyed as urls.NormalizeURL writes hosts) and does
// not pace itself.
func TestRobotsGate_Scheduler(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "User-agent: *\nCrawl-delay: 5\n")
	}))
	defer site.Close()
	s := &setter{keys: map[string]time.Duration{}}
	g, done := NewRobotsGate([]string{site.URL + "/"}, RobotsGateOptions{Scheduler: s})
	defer done()
	u, _ := url.Parse(site.URL + "/page")
	start := time.Now()
	for range 3 {
		release, err := g.Wait(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		release()
	}
	if time.Since(start) > 2*time.Second {
		t.Errorf("the gate paced although a scheduler does")
	}
	key := strings.TrimPrefix(site.URL, "http://")
	if len(s.keys) != 1 || s.keys[key] != 5*time.Second {
		t.Errorf("scheduler got %v, want %s: 5s", s.keys, key)
	}
}
