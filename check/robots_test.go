package check

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
)

// fakeGate disallows paths under /private/ and paces every request with
// delay; it counts the requests it let through and the most at once.
type fakeGate struct {
	delay    time.Duration
	inFlight atomic.Int64
	maxIn    atomic.Int64
	waits    atomic.Int64
}

func (g *fakeGate) Disallowed(_ context.Context, u *url.URL) string {
	if strings.HasPrefix(u.Path, "/private/") {
		return "disallowed by robots.txt"
	}
	return ""
}

func (g *fakeGate) CrawlDelay(context.Context, *url.URL) time.Duration { return g.delay }

func (g *fakeGate) Wait(ctx context.Context, u *url.URL) (func(), error) {
	g.waits.Add(1)
	n := g.inFlight.Add(1)
	for {
		m := g.maxIn.Load()
		if n <= m || g.maxIn.CompareAndSwap(m, n) {
			break
		}
	}
	return func() { g.inFlight.Add(-1) }, nil
}

// TestRun_RobotsGate: a target the gate disallows is skipped with the
// reason and never requested; a redirect into a disallowed URL is not
// followed; every request goes through the gate's Wait and its done
// function is called (nothing left in flight).
func TestRun_RobotsGate(t *testing.T) {
	s := newServer(t)
	var private atomic.Int64
	s.handle("/private/", func(w http.ResponseWriter, r *http.Request) { private.Add(1) })
	s.handle("/public", html200(page))
	s.handle("/hop", redirect("/private/secret", 302))
	o := testOptions()
	o.DisableSoft404 = true
	gate := &fakeGate{}
	o.Robots = gate
	got := collect(t, New(o), []Target{{URL: s.URL + "/private/report"}, {URL: s.URL + "/public"}, {URL: s.URL + "/hop"}})
	if c := got[s.URL+"/private/report"]; c.Verdict != audit.VerdictSkipped || c.Reason != "disallowed by robots.txt" {
		t.Errorf("disallowed target: %s (%q)", c.Verdict, c.Reason)
	}
	if c := got[s.URL+"/public"]; c.Verdict != audit.VerdictOK {
		t.Errorf("allowed target: %s (%q)", c.Verdict, c.Reason)
	}
	if c := got[s.URL+"/hop"]; !strings.Contains(c.Reason, "redirect not followed: disallowed by robots.txt") {
		t.Errorf("redirect into a disallowed URL: %s (%q)", c.Verdict, c.Reason)
	}
	if n := private.Load(); n != 0 {
		t.Errorf("disallowed URLs requested %d times", n)
	}
	if gate.waits.Load() < 2 || gate.inFlight.Load() != 0 {
		t.Errorf("gate waits %d, in flight after the run %d; want every request paced and released", gate.waits.Load(), gate.inFlight.Load())
	}
}

// dirGate disallows everything under /d/ but /d/page.
type dirGate struct{ fakeGate }

func (g *dirGate) Disallowed(_ context.Context, u *url.URL) string {
	if strings.HasPrefix(u.Path, "/d/") && u.Path != "/d/page" {
		return "disallowed by robots.txt"
	}
	return ""
}

// TestRun_RobotsGateProbe: the soft-404 probe of an allowed target is not
// sent when robots.txt disallows the probe's URL.
func TestRun_RobotsGateProbe(t *testing.T) {
	s := newServer(t)
	var others atomic.Int64
	s.handle("/d/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/d/page" {
			others.Add(1)
			http.NotFound(w, r)
			return
		}
		html200(page)(w, r)
	})
	o := testOptions()
	o.Robots = &dirGate{}
	got := collect(t, New(o), []Target{{URL: s.URL + "/d/page"}})
	if c := got[s.URL+"/d/page"]; c.Verdict != audit.VerdictOK {
		t.Errorf("allowed target: %s (%q)", c.Verdict, c.Reason)
	}
	if n := others.Load(); n != 0 {
		t.Errorf("%d requests to disallowed URLs (the soft-404 probe), want none", n)
	}
}
