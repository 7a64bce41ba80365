package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linkrot/linkrot/archives/archivetest"
	"github.com/linkrot/linkrot/robustify"
)

// TestRobustifyCommand_LinkingDate: linkrot robustify on a build
// directory whose files have known modification times, against an archive
// holding mementos before and after them. data-versiondate is each file's
// time in the ABNF 6.1 iso8601-datetime form and data-versionurl the
// memento nearest to it, whose capture time the JSON result records; a
// second run changes no byte; linkrot audit of the result counts every
// link robustify protected as a Robust Link, with no diagnostic.
func TestRobustifyCommand_LinkingDate(t *testing.T) {
	fa := archivetest.New(t, archivetest.Options{})
	d := func(y int, m time.Month, dd, h int) time.Time { return time.Date(y, m, dd, h, 0, 0, 0, time.UTC) }
	mementos := map[string][]time.Time{
		"http://ext.example/one":    {d(2022, 1, 1, 0), d(2023, 5, 25, 0), d(2024, 6, 1, 0)},
		"http://ext.example/two":    {d(2023, 5, 1, 0), d(2023, 9, 1, 0)},
		"https://ext.example/three": {d(2024, 1, 30, 0)},
	}
	for u, ts := range mementos {
		for _, at := range ts {
			fa.Add(archivetest.Memento{Original: u, Time: at, Body: "<p>captured</p>"})
		}
	}
	dir := filepath.Join(t.TempDir(), "site")
	files := map[string]struct {
		body  string
		mtime time.Time
	}{
		"index.html": {`<!doctype html><title>Home</title><p><a href="http://ext.example/one">one</a>, <a href='http://ext.example/two' class=x>two</a>, <a href="/blog/post.html">post</a>`,
			time.Date(2023, 5, 20, 8, 15, 30, 0, time.UTC)},
		"blog/post.html": {"<!doctype html><title>Post</title>\n<p><A HREF=https://ext.example/three>three</A>\n<p><a href=\"http://ext.example/one\">one again</a>",
			time.Date(2024, 2, 2, 22, 0, 1, 0, time.UTC)},
	}
	for rel, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, f.mtime, f.mtime); err != nil {
			t.Fatal(err)
		}
	}
	flag := fa.Flag("fx", "6000/min")
	code, out, stderr := run(t, "", "robustify", dir, "--archive", flag, "--format", "json")
	if code != exitOK {
		t.Fatalf("robustify: exit %d\n%s", code, stderr)
	}
	var res robustify.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("JSON result: %v\n%s", err, out)
	}
	type want struct{ date, memento string }
	wants := map[string]want{
		"index.html http://ext.example/one":        {"2023-05-20T08:15:30Z", fa.URLOf("http://ext.example/one", d(2023, 5, 25, 0), "")},
		"index.html http://ext.example/two":        {"2023-05-20T08:15:30Z", fa.URLOf("http://ext.example/two", d(2023, 5, 1, 0), "")},
		"blog/post.html https://ext.example/three": {"2024-02-02T22:00:01Z", fa.URLOf("https://ext.example/three", d(2024, 1, 30, 0), "")},
		"blog/post.html http://ext.example/one":    {"2024-02-02T22:00:01Z", fa.URLOf("http://ext.example/one", d(2024, 6, 1, 0), "")},
	}
	protected := 0
	for _, l := range res.Links {
		w, ok := wants[l.File+" "+l.Href]
		if !ok {
			t.Errorf("unexpected link %+v", l)
			continue
		}
		wantMemento := regexp.MustCompile(`/web/(\d{14})/`).FindStringSubmatch(w.memento)[1]
		mt, _ := time.Parse(time.RFC3339, l.MementoDatetime)
		if l.Action != robustify.ActionAdded || l.VersionDate != w.date || l.VersionURL != w.memento || mt.Format("20060102150405") != wantMemento {
			t.Errorf("%s %s: %+v\nwant versiondate %s, versionurl %s", l.File, l.Href, l, w.date, w.memento)
			continue
		}
		protected++
	}
	if protected != len(wants) {
		t.Fatalf("%d links protected, want %d", protected, len(wants))
	}
	for rel, f := range files {
		b, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		date := f.mtime.Format("2006-01-02T15:04:05Z")
		if n := strings.Count(string(b), ` data-versiondate="`+date+`"`); n != 2 {
			t.Errorf("%s has %d data-versiondate=%q, want 2:\n%s", rel, n, date, b)
		}
	}

	before := map[string][]byte{}
	for rel := range files {
		before[rel], _ = os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	}
	code, _, stderr = run(t, "", "robustify", dir, "--archive", flag)
	if code != exitOK || !strings.Contains(stderr, "2 files, 0 changed; links: 0 added, 0 saved, 4 audited") {
		t.Errorf("second run: exit %d\n%s", code, stderr)
	}
	for rel := range files {
		if b, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel))); !bytes.Equal(b, before[rel]) {
			t.Errorf("second run changed %s", rel)
		}
	}

	dbPath := filepath.Join(t.TempDir(), "audit.db")
	code, out, stderr = run(t, "", "audit", dir, "--db", dbPath, "--timeout", "2s", "--no-report",
		"--archive", flag, "--fetch-rate", "6000/min")
	if code != exitOK && code != exitFindings {
		t.Fatalf("audit: exit %d\n%s\n%s", code, stderr, out)
	}
	m := regexp.MustCompile(`Robustness data: (\d+) links with Robust Links attributes.* (\d+) diagnostics`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("audit summary without robustness data:\n%s", out)
	}
	if n, _ := strconv.Atoi(m[1]); n != protected {
		t.Errorf("audit counts %d Robust Links, robustify protected %d:\n%s", n, protected, out)
	}
	if m[2] != "0" {
		t.Errorf("the audit of the robustified site has %s diagnostics, want none:\n%s", m[2], out)
	}
}

func TestRobustifyCommand_DateFromUsage(t *testing.T) {
	code, _, stderr := run(t, "", "robustify", t.TempDir(), "--date-from", "memento")
	if code != exitUsage || !strings.Contains(stderr, "--date-from must be mtime or page") {
		t.Errorf("exit %d, want %d with a clear message:\n%s", code, exitUsage, stderr)
	}
}
