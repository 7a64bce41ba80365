package crawler_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/crawler"
	"github.com/linkrot/linkrot/internal/requestlog"
	"github.com/linkrot/linkrot/urls"
)

// TestCrawl_LinkTargets: every link of a crawled page carries the key of
// its target (audit.Link.Target), which is urls.TargetKey of its href,
// for hrefs sharing a target through fragments, with credentials, IDNs,
// other schemes, or none; and the links followed are those the page
// names, each once.
func TestCrawl_LinkTargets(t *testing.T) {
	const home = `<!doctype html><title>home</title>
<a href="a.html">a</a>
<a href="a.html#one">a, one</a>
<a href="/a.html#two">a, two</a>
<a href="./a.html#">a, empty fragment</a>
<a href="a.html?x=1#one">a with a query</a>
<a href="b.html #sp">space before the fragment</a>
<a href="#top">this page</a>
<a href="http://user:secret@example.invalid/p#f">credentials</a>
<a href="https://bücher.example/straße#k">IDN</a>
<a href="http://[::1/broken#f">invalid</a>
<a href="mailto:someone@example.org">mail</a>
<a href="javascript:void(0)">script</a>
<a href="">blank</a>
<a href="   ">spaces</a>
<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" alt="">
<link rel="preconnect" href="https://cdn.example.invalid">`
	srv := requestlog.New(t, func(target string) requestlog.Response {
		switch target {
		case "/":
			return requestlog.Response{ContentType: "text/html", Body: home}
		case "/robots.txt":
			return requestlog.Response{Status: 404}
		}
		return requestlog.Response{ContentType: "text/html", Body: `<title>leaf</title><a href="/a.html#back">back</a>`}
	})
	sink := &memSink{}
	if _, err := crawler.New(crawler.Options{}, sink).Crawl(context.Background(), []string{srv.URL() + "/"}); err != nil {
		t.Fatal(err)
	}
	got := srv.Take()
	slices.Sort(got)
	want := []string{"/", "/a.html", "/a.html?x=1", "/b.html%20", "/robots.txt"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("request targets\n got %q\nwant %q", got, want)
	}
	links := 0
	for _, p := range sink.pages {
		for i := range p.Links {
			l := &p.Links[i]
			links++
			key, ok, known := l.Target()
			wantKey, _, wantOK := urls.TargetKey(l.Href)
			if !known || key != wantKey || ok != wantOK {
				t.Errorf("%s: link %d %q: Target() = %q, %v, known %v; TargetKey: %q, %v",
					p.URL, i, l.Href, key, ok, known, wantKey, wantOK)
			}
		}
	}
	if links < 17 {
		t.Errorf("%d links recorded; want the home page's 16 and more", links)
	}
}
