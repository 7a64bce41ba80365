package check

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"golang.org/x/net/html"
)

// knownHTML is a Known 2xx HTML response of url with main text text.
func knownHTML(url, text string) *Known {
	return &Known{
		FinalURL: url, Status: 200, ContentType: "text/html; charset=utf-8",
		FetchedAt: time.Date(2025, 5, 6, 7, 8, 9, 0, time.UTC), Duration: 42 * time.Millisecond,
		Evidence: audit.PageEvidence{
			Headers: map[string]string{"Content-Type": "text/html; charset=utf-8", "ETag": `"e1"`},
			ETag:    `"e1"`, BodyCap: defaultMaxBody, HTML: true, BodyBytes: 1234,
			SHA256: strings.Repeat("0f", 32), SimHash: 0xfeed, Words: len(strings.Fields(text)),
			Anchors: []string{"top", "s2"}, Text: text,
		},
	}
}

func knownStatus(url string, status int, redirects ...audit.Redirect) *Known {
	return &Known{FinalURL: url, Status: status, Redirects: redirects, ContentType: "text/plain",
		Evidence: audit.PageEvidence{BodyCap: defaultMaxBody, Headers: map[string]string{"Content-Type": "text/plain"}}}
}

// TestKnown_Verdicts: every verdict class judged from a Known response,
// with no request to the target (the server answers 500 to anything but
// probes, which answer a real 404).
func TestKnown_Verdicts(t *testing.T) {
	s := newServer(t)
	var targetHits, probes atomic.Int64
	s.handle("/", func(w http.ResponseWriter, r *http.Request) {
		if probePathRE.MatchString(r.URL.Path) {
			probes.Add(1)
			http.NotFound(w, r)
			return
		}
		targetHits.Add(1)
		http.Error(w, "the checker must not ask", 500)
	})
	u := func(p string) string { return s.URL + p }
	text := "roses tulips and daffodils grow in our borders every spring"
	tests := []struct {
		name    string
		target  string
		known   *Known
		want    audit.Verdict
		check   func(t *testing.T, c audit.Check)
		probeOK bool // a probe is made
	}{
		{name: "OK", target: u("/a.html"), known: knownHTML(u("/a.html"), text), want: audit.VerdictOK, probeOK: true,
			check: func(t *testing.T, c audit.Check) {
				if c.SHA256 != strings.Repeat("0f", 32) || c.SimHash != 0xfeed || c.Words != 10 || c.ETag != `"e1"` ||
					c.Status != 200 || c.FinalURL != u("/a.html") || c.Soft404 == nil || c.Soft404.ProbeStatus != 404 ||
					!slices.Equal(c.Anchors, []string{"top", "s2"}) || c.Timings.Total != 42*time.Millisecond ||
					!c.CheckedAt.Equal(time.Date(2025, 5, 6, 7, 8, 9, 0, time.UTC)) || c.ContentType != "text/html; charset=utf-8" {
					t.Errorf("check = %+v", c)
				}
			}},
		{name: "Redirected", target: u("/t"), want: audit.VerdictRedirected, probeOK: true,
			known: func() *Known {
				k := knownHTML(u("/a.html"), text)
				k.Redirects = []audit.Redirect{{From: u("/t"), To: u("/a.html"), Status: 302}}
				return k
			}(),
			check: func(t *testing.T, c audit.Check) {
				if c.Reason != "temporary redirect (302)" || len(c.Redirects) != 1 {
					t.Errorf("check = %+v", c)
				}
			}},
		{name: "Moved", target: u("/old"), want: audit.VerdictMoved, probeOK: true,
			known: func() *Known {
				k := knownHTML(u("/new.html"), text)
				k.Redirects = []audit.Redirect{{From: u("/old"), To: u("/mid"), Status: 301}, {From: u("/mid"), To: u("/tmp"), Status: 308},
					{From: u("/tmp"), To: u("/new.html"), Status: 302}}
				return k
			}(),
			check: func(t *testing.T, c audit.Check) {
				if c.Replacement != u("/tmp") {
					t.Errorf("replacement %q, want the URL after the permanent hops", c.Replacement)
				}
			}},
		{name: "NotFound", target: u("/missing"), known: knownStatus(u("/missing"), 404), want: audit.VerdictNotFound},
		{name: "Gone", target: u("/gone"), known: knownStatus(u("/gone"), 410), want: audit.VerdictGone},
		{name: "ClientError", target: u("/teapot"), known: knownStatus(u("/teapot"), 418), want: audit.VerdictClientError},
		{name: "Blocked", target: u("/private"), known: knownStatus(u("/private"), 401), want: audit.VerdictBlocked},
		{name: "Challenge", target: u("/wall"), want: audit.VerdictBlocked,
			known: func() *Known {
				k := knownStatus(u("/wall"), 403)
				k.Evidence.Challenge = "Cloudflare challenge options"
				return k
			}(),
			check: func(t *testing.T, c audit.Check) {
				if c.Reason != "bot challenge: Cloudflare challenge options" {
					t.Errorf("reason %q", c.Reason)
				}
			}},
		{name: "RedirectToRoot", target: u("/blog/post"), want: audit.VerdictRedirectToRoot,
			known: func() *Known {
				k := knownHTML(u("/"), text)
				k.Redirects = []audit.Redirect{{From: u("/blog/post"), To: u("/"), Status: 301}}
				return k
			}()},
		{name: "Offline", target: u("/b.html"), want: audit.VerdictOK,
			known: func() *Known {
				k := knownHTML(u("/b.html"), text)
				k.Offline = true // from a build directory: no probe to the live site
				return k
			}(),
			check: func(t *testing.T, c audit.Check) {
				if c.Soft404 != nil || c.SHA256 == "" {
					t.Errorf("check = %+v", c)
				}
			}},
		{name: "NotHTML", target: u("/f.pdf"), known: knownStatus(u("/f.pdf"), 200), want: audit.VerdictOK,
			check: func(t *testing.T, c audit.Check) {
				if c.SHA256 != "" || c.Soft404 != nil {
					t.Errorf("a non-HTML target got %+v", c)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			targetHits.Store(0)
			probes.Store(0)
			c := New(testOptions()).CheckOne(context.Background(), Target{URL: tt.target, Known: tt.known, WantAnchors: true})
			if c.Verdict != tt.want {
				t.Errorf("verdict %s (%s), want %s", c.Verdict, c.Reason, tt.want)
			}
			if !c.FromCrawl || c.Attempts != 0 || targetHits.Load() != 0 {
				t.Errorf("from crawl %v, %d attempts, %d requests to the site; want judged from the crawl", c.FromCrawl, c.Attempts, targetHits.Load())
			}
			if (probes.Load() == 1) != tt.probeOK {
				t.Errorf("%d probes", probes.Load())
			}
			if tt.check != nil {
				tt.check(t, c)
			}
		})
	}
}

// probePathRE matches the path of a soft-404 probe (probeFor).
var probePathRE = regexp.MustCompile(`/[a-z2-7]{26}/?$`)

func mustParse(t *testing.T, page []byte) *html.Node {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestKnown_Soft404: a Known page is compared with its probe as a fetched
// one would be.
func TestKnown_Soft404(t *testing.T) {
	s := newServer(t)
	notFound := "<main><h1>Sorry</h1><p>We could not find %s on this server. Try the search box.</p></main>"
	s.handle("/shop/", func(w http.ResponseWriter, r *http.Request) {
		html200(fmt.Sprintf(notFound, r.URL.Path))(w, r)
	})
	target := s.URL + "/shop/widget"
	words := strings.Join(wordsOf(fmt.Sprintf(notFound, "/shop/widget")), " ")
	c := New(testOptions()).CheckOne(context.Background(), Target{URL: target, Known: knownHTML(target, words)})
	if c.Verdict != audit.VerdictSoft404 || c.Soft404 == nil || c.Soft404.Similarity < 0.9 || !c.FromCrawl {
		t.Errorf("check = %s (%s) %+v", c.Verdict, c.Reason, c.Soft404)
	}
	if n := s.requests.Load(); n != 1 {
		t.Errorf("%d requests, want the probe only", n)
	}
}

func wordsOf(html string) []string {
	return fingerprintPage([]byte(html), "text/html", false, nil, false).words
}

// TestKnown_NotReused: transient or unusable crawl outcomes are fetched,
// with retries.
func TestKnown_NotReused(t *testing.T) {
	s := newServer(t)
	s.handle("/t", html200("<p>fine now</p>"))
	target := s.URL + "/t"
	tests := []struct {
		name  string
		known *Known
		opts  func(*Options)
	}{
		{name: "ServerError", known: knownStatus(target, 503)},
		{name: "BadGateway", known: knownStatus(target, 502)},
		{name: "RateLimited", known: knownStatus(target, 429)},
		{name: "NoResponse", known: knownStatus(target, 0)},
		{name: "TooManyRedirects", known: knownStatus(target, 200, audit.Redirect{From: target + "?a", To: target + "?b", Status: 302},
			audit.Redirect{From: target + "?b", To: target, Status: 302}), opts: func(o *Options) { o.MaxRedirects = 1 }},
		{name: "OtherBodyCap", known: knownHTML(target, "fine now"), opts: func(o *Options) { o.MaxBody = 1000 }},
		{name: "TruncatedAtOtherCap", known: func() *Known {
			k := knownHTML(target, "fine now")
			k.Evidence.BodyBytes, k.Evidence.BodyTruncated = 1000, true
			return k
		}()},
		{name: "ChallengeLookedForElsewhere", known: knownStatus(target, 403), opts: func(o *Options) { o.MaxBody = 1000 }},
		{name: "InconsistentChain", known: knownStatus(target, 200, audit.Redirect{From: target + "?a", To: target + "?b", Status: 302})},
		{name: "LoadFails", known: func() *Known {
			k := knownHTML(target, "")
			k.Load = func(context.Context) ([]string, string, error) { return nil, "", errors.New("disk on fire") }
			return k
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := s.requests.Load()
			o := testOptions()
			if tt.opts != nil {
				tt.opts(&o)
			}
			c := New(o).CheckOne(context.Background(), Target{URL: target, Known: tt.known})
			if c.FromCrawl || c.Attempts == 0 || c.Verdict != audit.VerdictOK || s.requests.Load() == before {
				t.Errorf("check = %s (%s), from crawl %v, %d attempts; want fetched", c.Verdict, c.Reason, c.FromCrawl, c.Attempts)
			}
		})
	}
	// Retries apply to the fetch that replaces a transient Known.
	var n atomic.Int64
	s.handle("/flaky", func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			http.Error(w, "busy", 503)
			return
		}
		html200("<p>ok</p>")(w, r)
	})
	c := New(testOptions()).CheckOne(context.Background(), Target{URL: s.URL + "/flaky", Known: knownStatus(s.URL+"/flaky", 503)})
	if c.Verdict != audit.VerdictOK || c.Attempts != 2 {
		t.Errorf("flaky: %s after %d attempts, want ok after a retry", c.Verdict, c.Attempts)
	}
}

// TestKnown_CappedText: a page whose text the crawl capped is decided from
// the prefix when the probe is much shorter, and fetched when it is not.
func TestKnown_CappedText(t *testing.T) {
	long := strings.Repeat("alpha beta gamma delta epsilon zeta eta theta iota kappa ", 8000)
	s := newServer(t)
	s.handle("/short/", html200("<p>nothing here</p>"))
	s.handle("/long/", html200("<main>"+long+"</main>"))
	for _, tt := range []struct {
		dir       string
		fromCrawl bool
	}{{"/short/", true}, {"/long/", false}} {
		target := s.URL + tt.dir + "page"
		fp := fingerprintPage([]byte("<main>"+long+"</main>"), "text/html", false, nil, true)
		if !fp.capped || len(fp.text) > knownTextMax {
			t.Fatalf("text of %d bytes, capped %v", len(fp.text), fp.capped)
		}
		k := knownHTML(target, fp.text)
		k.Evidence.TextCapped = true
		before := s.requests.Load()
		c := New(testOptions()).CheckOne(context.Background(), Target{URL: target, Known: k})
		if c.FromCrawl != tt.fromCrawl {
			t.Errorf("%s: from crawl %v (%s %s), want %v", tt.dir, c.FromCrawl, c.Verdict, c.Reason, tt.fromCrawl)
		}
		// Judged from the crawl: the probe only; fetched: the probe and
		// the target, in the same slot.
		want := int64(1)
		if !tt.fromCrawl {
			want = 2
		}
		if n := s.requests.Load() - before; n != want {
			t.Errorf("%s: %d requests, want %d", tt.dir, n, want)
		}
	}
}

// TestKnown_Index: the index follows the crawl's redirects across pages,
// leaves out failures and loops, and gives each page's final response.
func TestKnown_Index(t *testing.T) {
	ev := &audit.PageEvidence{HTML: true, BodyCap: defaultMaxBody}
	pages := []*audit.Page{
		{Extraction: audit.Extraction{URL: "http://s/a"}, RequestURL: "http://s/a", Status: 200, Evidence: ev},
		// /t redirected to /a, which the crawl had already: not followed.
		{Extraction: audit.Extraction{URL: "http://s/t"}, RequestURL: "http://s/t", Status: 302, Evidence: &audit.PageEvidence{},
			Redirects: []audit.Redirect{{From: "http://s/t", To: "http://s/a#frag", Status: 302}}},
		// /old followed to /new via /mid.
		{Extraction: audit.Extraction{URL: "http://s/new"}, RequestURL: "http://s/old", Status: 200, Evidence: ev,
			Redirects: []audit.Redirect{{From: "http://s/old", To: "http://s/mid", Status: 301}, {From: "http://s/mid", To: "http://s/new", Status: 301}}},
		{Extraction: audit.Extraction{URL: "http://s/down"}, RequestURL: "http://s/down", FetchError: "timeout: ..."},
		{Extraction: audit.Extraction{URL: "http://s/l1"}, RequestURL: "http://s/l1", Status: 302, Evidence: &audit.PageEvidence{},
			Redirects: []audit.Redirect{{From: "http://s/l1", To: "http://s/l2", Status: 302}, {From: "http://s/l2", To: "http://s/l1", Status: 302}}},
		{Extraction: audit.Extraction{URL: "http://s/old-crawl"}, RequestURL: "http://s/old-crawl", Status: 200}, // no evidence
		{Extraction: audit.Extraction{URL: "http://s/ext"}, RequestURL: "http://s/ext", Status: 301, Evidence: &audit.PageEvidence{},
			Redirects: []audit.Redirect{{From: "http://s/ext", To: "http://elsewhere/", Status: 301}}},
	}
	ix := NewKnownIndex(pages, nil)
	k := ix.Lookup("http://s/t")
	if k == nil || k.FinalURL != "http://s/a" || len(k.Redirects) != 1 || k.Redirects[0] != (audit.Redirect{From: "http://s/t", To: "http://s/a", Status: 302}) {
		t.Errorf("/t = %+v", k)
	}
	if k := ix.Lookup("http://s/mid"); k == nil || k.FinalURL != "http://s/new" || len(k.Redirects) != 1 {
		t.Errorf("/mid = %+v", k)
	}
	if k := ix.Lookup("http://s/old"); k == nil || len(k.Redirects) != 2 || k.Redirects[1].From != "http://s/mid" {
		t.Errorf("/old = %+v", k)
	}
	if k := ix.Lookup("http://s/a"); k == nil || len(k.Redirects) != 0 || k.Status != 200 {
		t.Errorf("/a = %+v", k)
	}
	for _, u := range []string{"http://s/down", "http://s/l1", "http://s/old-crawl", "http://s/ext", "http://s/never"} {
		if k := ix.Lookup(u); k != nil {
			t.Errorf("%s = %+v, want unknown", u, k)
		}
	}
}

// TestKnown_HostDelay: targets judged from the crawl without a request do
// not make their host wait HostDelay; the first of a directory, whose
// probe is a request, does.
func TestKnown_HostDelay(t *testing.T) {
	s := newServer(t)
	s.handle("/", http.NotFound)
	var targets []Target
	for i := range 50 {
		u := fmt.Sprintf("%s/p%d.html", s.URL, i)
		targets = append(targets, Target{URL: u, Known: knownHTML(u, "some words of a page")})
	}
	for i := range 50 {
		u := fmt.Sprintf("%s/gone%d", s.URL, i)
		targets = append(targets, Target{URL: u, Known: knownStatus(u, 410)})
	}
	o := testOptions()
	o.HostDelay = 200 * time.Millisecond
	start := time.Now()
	got := collect(t, New(o), targets)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("100 targets judged from the crawl took %v with a 200ms host delay", d)
	}
	if len(got) != 100 || s.requests.Load() != 1 {
		t.Errorf("%d results, %d requests; want 100 and one probe", len(got), s.requests.Load())
	}
	for _, c := range got {
		if !c.FromCrawl {
			t.Errorf("%s not from the crawl: %+v", c.URL, c)
		}
	}
}

// TestObserve: the evidence of a response is what the checker computes
// of it.
func TestObserve(t *testing.T) {
	body := []byte(`<html><body><main><h1 id="x">Title</h1><p>Some words here &amp; there</p></main></body></html>`)
	h := http.Header{"Content-Type": {"text/html; charset=utf-8"}, "Etag": {`"v"`}, "Server": {"test"}, "Date": {"now"}}
	e := Observe(200, h, body, true, 0, nil)
	fp := fingerprintPage(body, "text/html; charset=utf-8", true, nil, false)
	if !e.HTML || e.SHA256 != fp.sha256 || e.SimHash != fp.simhash || e.Words != len(fp.words) ||
		e.Text != strings.Join(fp.words, " ") || e.TextCapped || !slices.Equal(e.Anchors, fp.anchors) ||
		e.ETag != `"v"` || e.Headers["Server"] != "test" || e.Headers["Date"] != "" || e.BodyBytes != int64(len(body)) ||
		e.BodyTruncated || e.BodyCap != defaultMaxBody {
		t.Errorf("evidence = %+v, fingerprint = %+v", e, fp)
	}
	// Cut at the checker's body cap, as a fetch would be.
	e = Observe(200, h, body, true, 20, nil)
	if e.BodyBytes != 20 || !e.BodyTruncated || e.SHA256 != fingerprintPage(body[:20], "text/html", false, nil, false).sha256 {
		t.Errorf("capped evidence = %+v", e)
	}
	// A body the crawler stopped reading is truncated too.
	if e := Observe(200, h, body, false, 0, nil); !e.BodyTruncated {
		t.Errorf("incomplete body: %+v", e)
	}
	// Not HTML, not 2xx: no fingerprint.
	if e := Observe(200, http.Header{"Content-Type": {"application/pdf"}}, body, true, 0, nil); e.HTML || e.SHA256 != "" {
		t.Errorf("pdf: %+v", e)
	}
	if e := Observe(404, h, body, true, 0, nil); e.HTML || e.SHA256 != "" {
		t.Errorf("404: %+v", e)
	}
	// A body the checker could not have decoded: no evidence.
	if e := Observe(200, http.Header{"Content-Type": {"text/html"}, "Content-Encoding": {"br"}}, body, true, 0, nil); e != nil {
		t.Errorf("br: %+v", e)
	}
	// Challenges: by header on any status, by body on 403.
	if e := Observe(403, http.Header{"Content-Type": {"text/html"}}, []byte("<title>Just a moment...</title>"), true, 0, nil); e.Challenge == "" {
		t.Errorf("challenge body not seen: %+v", e)
	}
	if e := Observe(200, http.Header{"Cf-Mitigated": {"challenge"}}, nil, true, 0, nil); e.Challenge != "cf-mitigated: challenge" {
		t.Errorf("challenge header not seen: %+v", e)
	}
	// The caller's parse is used when it is the same document.
	parsed := fingerprintPage(body, "text/html", true, nil, true)
	if e := Observe(200, h, body, true, 0, &ParsedHTML{Decoded: body, Doc: mustParse(t, body)}); e.SHA256 != parsed.sha256 || e.Text != parsed.text {
		t.Errorf("with the caller's parse: %+v", e)
	}
}
