package crawler

import (
	"context"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/urls"
)

// followCrawl returns a crawl of http://site.test/ as runScoped sets one
// up for following links, without the network.
func followCrawl(t testing.TB, o Options) *crawl {
	t.Helper()
	seed, err := parseURL("http://site.test/")
	if err != nil {
		t.Fatal(err)
	}
	o = o.withDefaults()
	return &crawl{
		Crawler: &Crawler{opts: o},
		ctx:     context.Background(),
		follow:  true,
		scope:   newScope([]*url.URL{seed}, o.AllowDomains, o.Include, o.Exclude),
		seen:    map[string]bool{},
		hops:    map[string][]audit.Redirect{},
		traps:   newTraps(o.trapLimits()),
	}
}

// followsEach is what follows did before it knew repeats: every link
// parsed and decided by admit.
func (cr *crawl) followsEach(p *audit.Page, depth int) []*url.URL {
	var next []*url.URL
	for _, l := range p.Links {
		if r := l.Rule(); !r.Page && !(cr.dirMode && r.Checked()) {
			continue
		}
		u, err := parseURL(l.Href)
		if err != nil {
			continue
		}
		if u, ok := cr.admit(u, depth, false, p.URL); ok {
			next = append(next, u)
		}
	}
	return next
}

// linkPage is a page of <a href> links to hrefs.
func linkPage(from string, hrefs ...string) *audit.Page {
	p := &audit.Page{Extraction: audit.Extraction{URL: from, Parsed: true}}
	for _, h := range hrefs {
		p.Links = append(p.Links, audit.Link{Element: "a", Attr: "href", Href: h})
	}
	return p
}

// TestFollows_SameAsEachLink holds follows, which decides a repeated link
// once, to deciding every link: the same pages admitted in the same
// order, the same counts (out of scope counted per link) and the same
// traps (a session-id repeat is a trap record each time; a trap guard
// decides each link), page after page of one crawl.
func TestFollows_SameAsEachLink(t *testing.T) {
	long := "http://site.test/" + strings.Repeat("l", 600)
	pages := [][]string{
		{
			"http://site.test/a.html", "http://site.test/a.html#x", "http://site.test/a.html#y",
			"http://other.test/x", "http://other.test/x#1", "http://other.test/x",
			"mailto:someone@site.test", "mailto:someone@site.test",
			"http://site.test/b.html?jsessionid=1", "http://site.test/b.html?jsessionid=2", "http://site.test/b.html?jsessionid=1#f",
			"http://site.test/more/more/more/", "http://site.test/more/more/more/#z",
			"http://site.test/q?i=1", "http://site.test/q?i=2", "http://site.test/q?i=3", "http://site.test/q?i=3",
			"http://site.test/q?i=4", "http://site.test/q?i=4#w",
			"http://site.test/a.html#", "http://site.test/a.html?", "http://site.test/a.html?#k",
			long, long + "#f", "http://site.test/deep/a.html",
			"http://site.test/c.html#%zz", "http://site.test/c.html#a#b",
		},
		{
			"http://site.test/a.html#z", "http://site.test/b.html?jsessionid=3", "http://site.test/b.html",
			"http://site.test/c.html", "http://site.test/c.html#1", "http://other.test/y#2", "http://other.test/y",
			"http://site.test/q?i=5", "http://site.test/q?i=5",
		},
	}
	for name, o := range map[string]Options{"defaults": {}, "depth": {MaxDepth: 1}, "budget": {MaxPages: 3},
		"variants": {MaxQueryVariants: 2}, "length": {MaxURLLength: 100}} {
		t.Run(name, func(t *testing.T) {
			a, b := followCrawl(t, o), followCrawl(t, o)
			for i, hrefs := range pages {
				depth := 1 + i
				got := a.follows(linkPage("http://site.test/p.html", hrefs...), depth, new(urls.TargetKeys))
				want := b.followsEach(linkPage("http://site.test/p.html", hrefs...), depth)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("page %d: follows admitted %v, each link %v", i, got, want)
				}
			}
			if sa, sb := a.snapshot(), b.snapshot(); !reflect.DeepEqual(sa, sb) {
				t.Fatalf("follows: %+v\neach link: %+v", sa, sb)
			}
			if st := a.snapshot(); st.OutOfScope == 0 || len(st.Traps) == 0 {
				t.Fatalf("%d links out of scope, %d traps: the pages no longer test the counts", st.OutOfScope, len(st.Traps))
			}
		})
	}
}

// TestFollows_Allocs: a page linking again and again to pages already
// seen, with fragments (python's docs: 7 links a target on a page) costs
// its first link to each URL, not every link.
func TestFollows_Allocs(t *testing.T) {
	cr := followCrawl(t, Options{})
	var hrefs []string
	for i := range 350 {
		hrefs = append(hrefs, fmt.Sprintf("http://site.test/lib/m%d.html#sec-%d", i%50, i))
	}
	p := linkPage("http://site.test/index.html", hrefs...)
	// As the crawl does: the page's keys were made for its links' targets.
	keys := new(urls.TargetKeys)
	for _, l := range p.Links {
		keys.Key(l.Href)
	}
	if next := cr.follows(p, 1, keys); len(next) != 50 {
		t.Fatalf("first page: %d admitted, want 50", len(next))
	}
	allocs := testing.AllocsPerRun(20, func() {
		if next := cr.follows(p, 1, keys); len(next) != 0 {
			t.Fatalf("seen pages admitted again: %v", next)
		}
	})
	// Each link decided (parse, key, scope, trap guard): 8 allocations.
	perLink := allocs / float64(len(hrefs))
	t.Logf("%.2f allocations a link", perLink)
	if perLink > 2 {
		t.Fatalf("%.1f allocations a link (%.0f a page of %d links to 50 pages), want at most 2", perLink, allocs, len(hrefs))
	}
}

// FuzzRepeatKey: a link's href known by its repeat key (urls.CutFragment)
// parses, without its fragment, as the key does (what lets follows decide
// a repeat once).
func FuzzRepeatKey(f *testing.F) {
	for _, s := range []string{
		"http://site.test/a.html#x", "http://site.test/a b#x", "http://site.test/a.html#x y",
		"http://site.test/a.html ", "http://site.test/a.html#", "http://site.test/a?#", "https://site.test:443/%zz#%zz",
		"http://user:pw@site.test/\\a#b", "http://site.test/a\t#b", "#frag", "http://[::1]/#a#b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, href string) {
		key := urls.CutFragment(href)
		if !strings.HasPrefix(href, key) {
			t.Fatalf("CutFragment(%q) = %q, not a prefix", href, key)
		}
		u, err := parseURL(href)
		k, kerr := parseURL(key)
		if (err == nil) != (kerr == nil) {
			t.Fatalf("parseURL(%q): %v; its key %q: %v", href, err, key, kerr)
		}
		if err == nil && stripFragment(u).String() != stripFragment(k).String() {
			t.Fatalf("parseURL(%q) = %q without fragment; its key %q: %q", href, stripFragment(u), key, stripFragment(k))
		}
	})
}
