package linkrot

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/linkrot/linkrot/politeness"
)

type fixedDelay map[string]time.Duration

func (f fixedDelay) CrawlDelay(_ context.Context, u *url.URL) time.Duration { return f[u.Host] }

// TestCrawlDelayRules: an origin with a Crawl-delay gets a host rule of
// one check at a time, the delay apart, placed first; a [[host]] rule of
// the same host keeps its headers and its longer delay.
func TestCrawlDelayRules(t *testing.T) {
	gate := fixedDelay{"slow.example": 2 * time.Second, "polite.example:8080": time.Second, "fast.example": 0}
	user := []politeness.HostRule{
		{Match: "polite.example", Delay: 5 * time.Second, Headers: map[string]string{"Authorization": "x"}},
		{Match: "other.example", PerHost: 9},
	}
	got := crawlDelayRules(context.Background(), gate,
		[]string{"https://slow.example/", "http://polite.example:8080/", "http://fast.example/", "https://slow.example/"}, user)
	if len(got) != 4 {
		t.Fatalf("rules = %+v", got)
	}
	if r := got[0]; r.Match != "slow.example:443" || r.PerHost != 1 || r.Delay != 2*time.Second {
		t.Errorf("slow = %+v", r)
	}
	if r := got[1]; r.Match != "polite.example:8080" || r.PerHost != 1 || r.Delay != 5*time.Second || r.Headers["Authorization"] != "x" {
		t.Errorf("polite = %+v", r)
	}
	if got[2].Match != "polite.example" || got[3].Match != "other.example" {
		t.Errorf("the user's rules follow: %+v", got[2:])
	}
}
