package robustify_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linkrot/linkrot/archives/archivetest"
	"github.com/linkrot/linkrot/archives/memento"
	"github.com/linkrot/linkrot/crawler/extract"
	"github.com/linkrot/linkrot/httpx"
	"github.com/linkrot/linkrot/robustify"
)

func day(y int, m time.Month, d, h, min, s int) time.Time {
	return time.Date(y, m, d, h, min, s, 0, time.UTC)
}

// dateSite writes files (relative path -> content) under a new directory
// with the given modification times.
func dateSite(t *testing.T, files map[string]string, mtimes map[string]time.Time) string {
	t.Helper()
	dir := t.TempDir()
	for rel, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtimes[rel], mtimes[rel]); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func lookupClient(t *testing.T, fa *archivetest.Archive) (*memento.Client, memento.Archive) {
	t.Helper()
	cfg := fa.Config("fx", 60000)
	rt, done := httpx.NewTransport(httpx.Options{AllowPrivate: true})
	t.Cleanup(done)
	return memento.NewClient(memento.Options{Archives: []memento.Archive{cfg}, Transport: rt, Retries: -1}), cfg
}

func linksByHref(res *robustify.Result) map[string][]robustify.LinkResult {
	out := map[string][]robustify.LinkResult{}
	for _, l := range res.Links {
		out[l.Href] = append(out[l.Href], l)
	}
	return out
}

// TestRun_LinkingDate: data-versiondate is each file's modification time
// in the ABNF 6.1 iso8601-datetime form, never a memento's capture time;
// data-versionurl is the memento nearest to that time, whether it was
// captured before or after it, and its capture time is in the result. A
// second run changes no byte and no modification time.
func TestRun_LinkingDate(t *testing.T) {
	const a, b = "http://ext.example/a", "http://ext.example/b"
	aOld, aNear, aLate := day(2022, 1, 10, 9, 0, 0), day(2023, 6, 1, 10, 0, 0), day(2024, 2, 1, 0, 0, 0)
	bBefore, bAfter := day(2023, 5, 1, 0, 0, 0), day(2024, 1, 26, 7, 0, 0)
	fa := archivetest.New(t, archivetest.Options{})
	for _, m := range []struct {
		u  string
		at time.Time
	}{{a, aOld}, {a, aNear}, {a, aLate}, {b, bBefore}, {b, bAfter}} {
		fa.Add(archivetest.Memento{Original: m.u, Time: m.at, Body: "<p>x</p>"})
	}
	client, cfg := lookupClient(t, fa)
	pageTime := day(2023, 5, 20, 8, 15, 30)                     // a: aNear is 12 days later, aOld 16 months before
	postTime := time.Date(2024, 1, 25, 23, 4, 5, 9e8, time.UTC) // sub-second: cut to the second
	files := map[string]string{
		"page.html":      `<p><a href="` + a + `">a</a> and <A HREF=` + b + `>b</A></p>`,
		"blog/post.html": "<p><a href='" + a + "'>a again</a>\n<a href=\"" + b + "\">b again</a></p>",
	}
	dir := dateSite(t, files, map[string]time.Time{"page.html": pageTime, "blog/post.html": postTime})
	opts := robustify.Options{Lookup: robustify.ArchiveLookup(client, []memento.Archive{cfg}), Verify: robustify.ArchiveVerify(client)}
	res, err := robustify.Run(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if n := res.Count(robustify.ActionAdded); n != 4 {
		t.Fatalf("%d added, want 4: %+v", n, res.Links)
	}
	want := map[string]struct {
		date     string
		memento  time.Time
		original string
	}{
		"page.html|" + a:      {"2023-05-20T08:15:30Z", aNear, a},
		"page.html|" + b:      {"2023-05-20T08:15:30Z", bBefore, b},
		"blog/post.html|" + a: {"2024-01-25T23:04:05Z", aLate, a},
		"blog/post.html|" + b: {"2024-01-25T23:04:05Z", bAfter, b},
	}
	for _, l := range res.Links {
		w, ok := want[l.File+"|"+l.Href]
		if !ok {
			t.Errorf("unexpected link %+v", l)
			continue
		}
		if l.VersionDate != w.date || l.DateSource != "mtime" || l.VersionURL != fa.URLOf(w.original, w.memento, "") ||
			l.MementoDatetime != w.memento.Format(time.RFC3339) {
			t.Errorf("%s %s: %+v; want versiondate %s (mtime), memento %s of %s", l.File, l.Href, l, w.date, w.memento.Format(time.RFC3339), fa.URLOf(w.original, w.memento, ""))
		}
	}
	page, _ := os.ReadFile(filepath.Join(dir, "page.html"))
	wantPage := `<p><a href="` + a + `" data-originalurl="` + a + `" data-versiondate="2023-05-20T08:15:30Z" data-versionurl="` + fa.URLOf(a, aNear, "") + `">a</a> and ` +
		`<A HREF=` + b + ` data-originalurl="` + b + `" data-versiondate="2023-05-20T08:15:30Z" data-versionurl="` + fa.URLOf(b, bBefore, "") + `">b</A></p>`
	if string(page) != wantPage {
		t.Errorf("page.html =\n%s\nwant\n%s", page, wantPage)
	}
	// The date written is valid in the ABNF: the extractor reads it back
	// to the second, without a diagnostic.
	for _, tag := range robustify.Tags(page) {
		got, dateOnly, diags := extract.ParseVersionDate("data-versiondate", tag.Attrs[robustify.AttrDate])
		if !got.Equal(pageTime) || dateOnly || len(diags) != 0 {
			t.Errorf("data-versiondate %q reads as %v (date only %v), %+v", tag.Attrs[robustify.AttrDate], got.Time, dateOnly, diags)
		}
	}

	// Modification times are kept: they stay the linking date.
	for rel, mt := range map[string]time.Time{"page.html": pageTime, "blog/post.html": postTime} {
		st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil || !st.ModTime().Equal(mt) {
			t.Errorf("%s modification time %v, want %v kept", rel, st.ModTime(), mt)
		}
	}

	// A second run: byte-identical files, every link audited.
	before := snapshotTree(t, dir)
	res2, err := robustify.Run(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range snapshotTree(t, dir) {
		if !bytes.Equal(b, before[name]) {
			t.Errorf("second run changed %s", name)
		}
	}
	if res2.Count(robustify.ActionAudited) != 4 || res2.Count(robustify.ActionAdded) != 0 {
		t.Errorf("second run: %+v", res2.Links)
	}
	for _, f := range res2.Files {
		if f.Changed {
			t.Errorf("second run changed %s", f.Path)
		}
	}
}

// TestRun_DateOnlyFromPage: with PageOrFileDate, a page stating only a
// day gets that day (iso8601-date: no datetime is made up), and the
// memento nearest to noon UTC of it.
func TestRun_DateOnlyFromPage(t *testing.T) {
	const u = "http://ext.example/c"
	early, late := day(2021, 3, 4, 11, 0, 0), day(2021, 3, 5, 1, 0, 0) // 1 h and 13 h from noon of the 4th
	fa := archivetest.New(t, archivetest.Options{})
	fa.Add(archivetest.Memento{Original: u, Time: early, Body: "x"}, archivetest.Memento{Original: u, Time: late, Body: "x"})
	client, cfg := lookupClient(t, fa)
	dir := dateSite(t, map[string]string{
		"a.html": `<head><meta property="article:published_time" content="2021-03-04"></head><a href="` + u + `">c</a>`,
		"b.html": `<a href="` + u + `">no statement: mtime</a>`,
	}, map[string]time.Time{"a.html": day(2025, 1, 1, 0, 0, 0), "b.html": day(2021, 3, 5, 2, 0, 0)})
	res, err := robustify.Run(context.Background(), dir, robustify.Options{
		Lookup: robustify.ArchiveLookup(client, []memento.Archive{cfg}), Date: robustify.PageOrFileDate})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]robustify.LinkResult{}
	for _, l := range res.Links {
		got[l.File] = l
	}
	if l := got["a.html"]; l.VersionDate != "2021-03-04" || l.DateSource != "meta article:published_time" || l.VersionURL != fa.URLOf(u, early, "") {
		t.Errorf("a.html: %+v; want 2021-03-04 from the page, the memento of %v", l, early)
	}
	if l := got["b.html"]; l.VersionDate != "2021-03-05T02:00:00Z" || l.DateSource != "mtime" || l.VersionURL != fa.URLOf(u, late, "") {
		t.Errorf("b.html: %+v; want the modification time and the memento of %v", l, late)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.html")); !strings.Contains(string(b), `data-versiondate="2021-03-04"`) {
		t.Errorf("a.html:\n%s", b)
	}
}

// TestRun_SavedLinkDatedNow: a link protected by a new capture (--save)
// is made now: its data-versiondate is the run's time.
func TestRun_SavedLinkDatedNow(t *testing.T) {
	now := day(2025, 11, 7, 14, 3, 2)
	captured := day(2025, 11, 7, 14, 3, 40)
	dir := dateSite(t, map[string]string{"p.html": `<a href="http://ext.example/new">n</a>`},
		map[string]time.Time{"p.html": day(2020, 1, 1, 0, 0, 0)})
	res, err := robustify.Run(context.Background(), dir, robustify.Options{
		Lookup: func(context.Context, string, time.Time) (robustify.Memento, error) {
			return robustify.Memento{}, robustify.ErrNoMemento
		},
		Save: func(_ context.Context, u string) (robustify.Memento, error) {
			return robustify.Memento{URL: "https://archive.example/web/20251107140340/" + u, Datetime: captured}, nil
		},
		Now: func() time.Time { return now },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Links) != 1 {
		t.Fatalf("links %+v", res.Links)
	}
	l := res.Links[0]
	if l.Action != robustify.ActionSaved || l.VersionDate != "2025-11-07T14:03:02Z" || l.DateSource != "now" || l.MementoDatetime != "2025-11-07T14:03:40Z" {
		t.Errorf("saved link %+v; want versiondate the run's time, the capture's time apart", l)
	}
}

// TestRun_FixKeepsDeclaredDate: --fix replaces a broken declared snapshot
// with the memento nearest to the link's own data-versiondate, which
// stays byte for byte; a link whose date is unusable or missing gets the
// file's modification time.
func TestRun_FixKeepsDeclaredDate(t *testing.T) {
	const u = "http://ext.example/fix"
	old, recent := day(2019, 12, 20, 6, 0, 0), day(2024, 3, 1, 12, 0, 0)
	fa := archivetest.New(t, archivetest.Options{})
	fa.Add(archivetest.Memento{Original: u, Time: old, Body: "x"}, archivetest.Memento{Original: u, Time: recent, Body: "x"})
	client, cfg := lookupClient(t, fa)
	gone := fa.URL + "/web/20000101000000/http://ext.example/gone"
	mtime := day(2024, 2, 27, 10, 0, 0)
	doc := `<a href="` + u + `" data-originalurl="` + u + `" data-versiondate=20200101 data-versionurl="` + gone + `">declared</a>
<a href="` + u + `" data-originalurl="` + u + `" data-versiondate="soon" data-versionurl="` + gone + `">unusable date</a>
<a href="` + u + `" data-originalurl="` + u + `" data-versionurl="` + gone + `">no date</a>
`
	dir := dateSite(t, map[string]string{"f.html": doc}, map[string]time.Time{"f.html": mtime})
	res, err := robustify.Run(context.Background(), dir, robustify.Options{
		Lookup: robustify.ArchiveLookup(client, []memento.Archive{cfg}), Verify: robustify.ArchiveVerify(client), Fix: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Count(robustify.ActionFixed) != 3 {
		t.Fatalf("fixed %d: %+v", res.Count(robustify.ActionFixed), res.Links)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "f.html"))
	want := `<a href="` + u + `" data-originalurl="` + u + `" data-versiondate=20200101 data-versionurl="` + fa.URLOf(u, old, "") + `">declared</a>
<a href="` + u + `" data-originalurl="` + u + `" data-versiondate="2024-02-27T10:00:00Z" data-versionurl="` + fa.URLOf(u, recent, "") + `">unusable date</a>
<a href="` + u + `" data-originalurl="` + u + `" data-versionurl="` + fa.URLOf(u, recent, "") + `" data-versiondate="2024-02-27T10:00:00Z">no date</a>
`
	if string(got) != want {
		t.Errorf("fixed file:\n%s\nwant\n%s", got, want)
	}
	if l := res.Links[0]; l.VersionDate != "2020-01-01" || l.DateSource != "declared" || l.MementoDatetime != old.Format(time.RFC3339) {
		t.Errorf("declared link: %+v", l)
	}
}

// TestArchiveLookup_Nearest: against a TimeGate that answers its latest
// memento whatever the date, the lookup still returns the nearest memento
// its answer names (the first, from the Link header), and with TimeMaps
// the nearest of all (one only the TimeMap lists).
func TestArchiveLookup_Nearest(t *testing.T) {
	const u = "http://ext.example/n"
	first, middle, last := day(2020, 1, 10, 12, 0, 0), day(2021, 6, 1, 8, 0, 0), day(2023, 3, 3, 3, 0, 0)
	fa := archivetest.New(t, archivetest.Options{TimeGateLatest: true})
	fa.Add(archivetest.Memento{Original: u, Time: first, Body: "x"}, archivetest.Memento{Original: u, Time: middle, Body: "x"},
		archivetest.Memento{Original: u, Time: last, Body: "x"})
	client, cfg := lookupClient(t, fa)
	ctx := context.Background()
	m, err := robustify.ArchiveLookup(client, []memento.Archive{cfg})(ctx, u, first.Add(48*time.Hour))
	if err != nil || !m.Datetime.Equal(first) || m.URL != fa.URLOf(u, first, "") {
		t.Errorf("without TimeMaps: %+v, %v; want the first memento", m, err)
	}
	m, err = robustify.ArchiveLookupWith(client, []memento.Archive{cfg}, robustify.LookupOptions{TimeMaps: true})(ctx, u, middle.Add(-24*time.Hour))
	if err != nil || !m.Datetime.Equal(middle) {
		t.Errorf("with TimeMaps: %+v, %v; want the middle memento", m, err)
	}
	_, err = robustify.ArchiveLookupWith(client, []memento.Archive{cfg}, robustify.LookupOptions{TimeMaps: true})(ctx, "http://ext.example/none", middle)
	if !errors.Is(err, robustify.ErrNoMemento) {
		t.Errorf("no memento anywhere: %v, want ErrNoMemento", err)
	}
}

// TestPageDate: the statements a page makes about its own dates, in order
// of preference, read leniently but never made more precise than written.
func TestPageDate(t *testing.T) {
	lm := http.Header{"Last-Modified": {"Tue, 05 Mar 2024 10:11:12 GMT"}}
	tests := []struct {
		name   string
		doc    string
		header http.Header
		want   string // LinkDate.String(), "" for none
		source string
	}{
		{"modified beats published",
			`<meta property="article:published_time" content="2020-01-01T00:00:00Z"><meta property="article:modified_time" content="2021-02-03T04:05:06+01:00">`,
			nil, "2021-02-03T03:05:06Z", "meta article:modified_time"},
		{"dcterms.modified, any case", `<META NAME="DCTERMS.Modified" CONTENT="2019-07-08">`, nil, "2019-07-08", "meta dcterms.modified"},
		{"published", `<meta property="article:published_time" content="2018-05-06T07:08:09.123Z">`, nil, "2018-05-06T07:08:09Z", "meta article:published_time"},
		{"time in header", `<body><time datetime="2001-01-01">not in header</time><article><header><h1>T</h1><time datetime="2017-09-10T11:12Z">x</time></header>`,
			nil, "2017-09-10T11:12:00Z", "time in header"},
		{"time outside a header is not the page's date", `<p>Posted <time datetime="2017-09-10">then</time></p>`, nil, "", ""},
		{"meta beats time", `<meta name="dcterms.created" content="2016-01-02"><header><time datetime="2017-09-10">x</time></header>`, nil, "2016-01-02", "meta dcterms.created"},
		{"unusable value skipped", `<meta property="article:modified_time" content="yesterday"><meta property="article:published_time" content="2015-03-04">`, nil, "2015-03-04", "meta article:published_time"},
		{"impossible date skipped", `<meta property="article:modified_time" content="2023-02-29">`, nil, "", ""},
		{"Last-Modified when the page states nothing", `<p>hello</p>`, lm, "2024-03-05T10:11:12Z", "last-modified"},
		{"the page's statement beats Last-Modified", `<meta name="dc.date" content="2010-10-10">`, lm, "2010-10-10", "meta dc.date"},
		{"unrelated meta", `<meta name="description" content="2024-01-01">`, nil, "", ""},
		{"nothing", ``, nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, ok := robustify.PageDate([]byte(tt.doc), tt.header)
			if tt.want == "" {
				if ok {
					t.Errorf("PageDate = %+v, want none", d)
				}
				return
			}
			if !ok || d.String() != tt.want || d.Source != tt.source {
				t.Errorf("PageDate = %q from %q (%v), want %q from %q", d.String(), d.Source, ok, tt.want, tt.source)
			}
		})
	}
}

// FuzzPageDate: any document gives either no date or one written in the
// ABNF, which reads back to the same instant without a diagnostic.
func FuzzPageDate(f *testing.F) {
	f.Add([]byte(`<meta property="article:modified_time" content="2021-02-03T04:05:06+01:00">`))
	f.Add([]byte(`<header><time datetime="2017-09-10T11:12Z">x</time></header>`))
	f.Add([]byte(`<meta name="dc.date" content=" 20101010 "><header><header></header><time datetime=2017-09-10>`))
	f.Add([]byte(`<meta content="9999-12-31T23:59:60Z" name=dcterms.modified>`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		d, ok := robustify.PageDate(doc, nil)
		if !ok {
			if !d.IsZero() {
				t.Errorf("no date, but %+v", d)
			}
			return
		}
		s := d.String()
		back, dateOnly, diags := extract.ParseVersionDate("data-versiondate", s)
		if !back.Equal(d.Time) || dateOnly != d.DateOnly || len(diags) != 0 || d.Source == "" {
			t.Errorf("PageDate %+v writes %q, which reads %v (date only %v), %+v", d, s, back.Time, dateOnly, diags)
		}
	})
}
