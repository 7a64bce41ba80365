package crawler_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/crawler"
	"github.com/linkrot/linkrot/internal/requestlog"
)

// TestCrawl_RequestTargets: the crawler follows links as browsers do: a
// "%" not followed by two hex digits in a path is sent as "%" (Colly's
// own parser would send "%25"), a fragment net/url rejects ("#%_sec") is
// dropped and never stops the link from being followed, and a page is
// recorded under the URL its link names.
func TestCrawl_RequestTargets(t *testing.T) {
	const home = `<!doctype html><title>home</title>
<a href="/a%zz/p.html">stray percent</a>
<a href="/b.html#%_sec_6.2">stray percent in the fragment</a>
<a href="/e|f.html">pipe</a>
<a href="/g%.html?q=%zz">stray percents in path and query</a>`
	srv := requestlog.New(t, func(target string) requestlog.Response {
		switch target {
		case "/":
			return requestlog.Response{ContentType: "text/html", Body: home}
		case "/a%zz/p.html":
			return requestlog.Response{ContentType: "text/html", Body: `<title>p</title><a href="q.html">next to it</a>`}
		case "/robots.txt":
			return requestlog.Response{Status: 404}
		}
		return requestlog.Response{ContentType: "text/html", Body: "<title>leaf</title>"}
	})
	sink := &memSink{}
	if _, err := crawler.New(crawler.Options{}, sink).Crawl(context.Background(), []string{srv.URL() + "/"}); err != nil {
		t.Fatal(err)
	}
	got := srv.Take()
	slices.Sort(got)
	want := []string{"/", "/a%zz/p.html", "/a%zz/q.html", "/b.html", "/e%7Cf.html", "/g%.html?q=%zz", "/robots.txt"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("request targets\n got %q\nwant %q", got, want)
	}
	var pages []string
	for _, p := range sink.pages {
		if p.Status != 200 {
			continue
		}
		pages = append(pages, strings.TrimPrefix(p.URL, srv.URL()))
		if p.RequestURL != p.URL {
			t.Errorf("page %q requested as %q", p.URL, p.RequestURL)
		}
	}
	slices.Sort(pages)
	wantPages := []string{"/", "/a%zz/p.html", "/a%zz/q.html", "/b.html", "/e%7Cf.html", "/g%.html?q=%zz"}
	if strings.Join(pages, " ") != strings.Join(wantPages, " ") {
		t.Errorf("pages\n got %q\nwant %q", pages, wantPages)
	}
}
