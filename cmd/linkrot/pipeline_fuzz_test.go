package main

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// notPrefixRegexp returns a regular expression (RE2 has no negative
// look-ahead) that matches exactly the strings that do not start with p.
func notPrefixRegexp(p string) string {
	alts := make([]string, 0, 2*len(p))
	for i := 0; i < len(p); i++ {
		head := regexp.QuoteMeta(p[:i])
		alts = append(alts, head+"$", head+`[^`+regexp.QuoteMeta(p[i:i+1])+`]`)
	}
	return `^(?:` + strings.Join(alts, "|") + `)`
}

func TestNotPrefixRegexp(t *testing.T) {
	const p = "http://127.0.0.1:4566/"
	re := regexp.MustCompile(notPrefixRegexp(p))
	for s, want := range map[string]bool{
		"":                              true,
		"http://127.0.0.1:4566/":        false,
		"http://127.0.0.1:4566/x#y":     false,
		"http://127.0.0.1:45663/":       true,
		"http://127.0.0.1:4566":         true,
		"https://127.0.0.1:4566/":       true,
		"http://example.com/":           true,
		"mailto:x@example.com":          true,
		"http://127.0.0.1:4566.evil/":   true,
		"http://127.0.0.1:4566\n/":      true,
		"xhttp://127.0.0.1:4566/":       true,
		"http://127.0.0.1:4566/\x00abc": false,
	} {
		if got := re.MatchString(s); got != want {
			t.Errorf("%q: match %v, want %v", s, got, want)
		}
	}
}

// pipelineSeeds are pages of the hostile forms every stage must take:
// URLs that do not parse, fragment-only and opaque links, an empty href,
// Robust Links and mset attributes missing or invalid, markup that is
// broken itself. "{{SITE}}" becomes the loopback site's URL.
var pipelineSeeds = []string{
	kindsHTML,
	`<a href="http://example.com:99999/">port</a><a href="http://[::1">v6</a><a href="http://[::1#f">v6 frag</a>`,
	`<a href="#x">x</a><a href="#">empty fragment</a><a href="#missing">m</a><p id="x">`,
	`<a href="">empty</a><a href=" ">blank</a><a>no href</a><a href="mailto:">mailto</a><a href="javascript:">js</a><a href="data:,">data</a><a href="tel:">tel</a>`,
	`<a href="{{SITE}}/two#sec" data-versionurl="" data-versiondate="" data-originalurl="">all empty</a>`,
	`<a href="{{SITE}}/two" data-versionurl="http://[::1/x 2020-13-45" data-versiondate="2020-02-30T25:61:61Z" data-originalurl="http://example.com:99999/">all invalid</a>`,
	`<a href="{{SITE}}/two" mset="http://[::1 2020 , , ; ;; {{{">mset</a><a mset="x">mset without href</a>`,
	`<base href="http://[::1/"><a href="rel">relative under an invalid base</a><a href="{{SITE}}/two#a">two</a>`,
	`<a href="http://%zz/">escape</a><a href="http://a b/">space</a><a href="http://example.com/%">percent</a><a href="//[::1">scheme-relative</a>`,
	`<link rel="identifier" href="http://[::1"><link rel="cite-as" href="http://example.com:99999/"><a href="urn:pwid:x:2020:page:http://[::1">pwid</a>`,
	`<img srcset="http://[::1 1x, {{SITE}}/two 2x" src="http://example.com:99999/i.png"><iframe src="#"></iframe><meta http-equiv="refresh" content="0; url=http://[::1">`,
	"<a href=\"{{SITE}}/two\x00\">nul</a><a href=\"http://ex\u00e4mple.com:99999/\">idn</a>\xff\xfe<a href=\"\xc3\">bad utf-8</a>",
	strings.Repeat(`<a href="http://[::1#`, 50),
}

// FuzzPipeline runs a whole audit over a page made of the fuzzer's bytes:
// a loopback site serves them at / (with a second page, /two, they may
// link to), and linkrot audit crawls it, checks what it links to (only the
// site: every other target is skipped), derives findings and history and
// writes the HTML report with every machine format. Nothing a page says
// may fail the run: the exit code is 0 or 1 (never 3), the run is
// complete and every report is written and well formed.
func FuzzPipeline(f *testing.F) {
	for _, s := range pipelineSeeds {
		f.Add([]byte(s))
	}
	// A migrated, empty database each input starts from as a copy
	// (migrating one is a good part of a short audit).
	tpl := filepath.Join(f.TempDir(), "template.db")
	var out, errb strings.Builder
	if code := Run(context.Background(), []string{"runs", "--db", tpl}, strings.NewReader(""), &out, &errb); code != exitOK {
		f.Fatalf("template database: exit %d: %s", code, errb.String())
	}
	empty, err := os.ReadFile(tpl)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, page []byte) {
		var site *httptest.Server
		site = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			switch r.URL.Path {
			case "/":
				w.Write([]byte(strings.ReplaceAll(string(page), "{{SITE}}", site.URL)))
			case "/two":
				fmt.Fprint(w, `<!doctype html><title>two</title><h1 id="sec">Two</h1><p name="a">second page</p><a href="/">home</a>`)
			default:
				http.NotFound(w, r)
			}
		}))
		defer site.Close()
		dir := t.TempDir()
		db := filepath.Join(dir, "linkrot.db")
		if err := os.WriteFile(db, empty, 0o600); err != nil {
			t.Fatal(err)
		}
		reportDir := filepath.Join(dir, "report")
		code, stdout, stderr := run(t, "", "audit", site.URL+"/", "--db", db, "--allow-private", "--no-archives",
			"--timeout", "5s", "--retries", "0", "--max-pages", "5", "--skip", notPrefixRegexp(site.URL+"/"),
			"--report", reportDir, "--output", "json", "--output", "csv", "--output", "junit", "--output", "markdown",
			"--output", "sarif", "--fail-on", "broken", "--quiet")
		if code != exitOK && code != exitFindings {
			t.Fatalf("audit exit %d on page %q\nstdout:\n%s\nstderr:\n%s", code, page, stdout, stderr)
		}
		store := openDB(t, db)
		r, pages := latest(t, store)
		if r.Status != "complete" || len(pages) == 0 {
			t.Fatalf("run %d is %s with %d pages on page %q", r.ID, r.Status, len(pages), page)
		}
		for _, name := range []string{"index.html", "report.json", "report.csv", "report.xml", "report.md", "report.sarif"} {
			b, err := os.ReadFile(filepath.Join(reportDir, name))
			if err != nil {
				t.Fatalf("report %s: %v (page %q)", name, err, page)
			}
			switch filepath.Ext(name) {
			case ".json", ".sarif":
				if !json.Valid(b) {
					t.Fatalf("report %s is not JSON (page %q)", name, page)
				}
			case ".xml":
				if err := wellFormedXML(b); err != nil {
					t.Fatalf("report %s: %v (page %q)", name, err, page)
				}
			}
		}
		// The formats report writes on its own read the run too.
		for _, format := range []string{"github", "markdown"} {
			if code, _, stderr := run(t, "", "report", "--db", db, "--format", format); code != exitOK {
				t.Fatalf("report --format %s: exit %d: %s (page %q)", format, code, stderr, page)
			}
		}
	})
}

// wellFormedXML reads b through to its end as XML.
func wellFormedXML(b []byte) error {
	d := xml.NewDecoder(strings.NewReader(string(b)))
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
