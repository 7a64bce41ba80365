package warc

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"encoding/base32"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linkrot/linkrot/archives/memento"
)

const page = "http://example.org/news"

func digest(b string) string {
	s := sha1.Sum([]byte(b))
	return "sha1:" + base32.StdEncoding.EncodeToString(s[:])
}

// record builds one WARC record.
func record(typ, uri string, at time.Time, extra map[string]string, block string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "WARC/1.1\r\nWARC-Type: %s\r\nWARC-Record-ID: <urn:uuid:%08d-0000-0000-0000-000000000000>\r\n", typ, at.Unix()%1e8)
	fmt.Fprintf(&b, "WARC-Date: %s\r\nWARC-Target-URI: %s\r\n", at.UTC().Format(time.RFC3339), uri)
	for k, v := range extra {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	fmt.Fprintf(&b, "Content-Type: application/http;msgtype=response\r\nContent-Length: %d\r\n\r\n%s\r\n\r\n", len(block), block)
	return b.Bytes()
}

func response(uri string, at time.Time, body string) []byte {
	block := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	return record("response", uri, at, map[string]string{"WARC-Payload-Digest": digest(body)}, block)
}

func revisit(uri string, at, of time.Time, body string) []byte {
	block := "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"
	return record("revisit", uri, at, map[string]string{
		"WARC-Payload-Digest":       digest(body),
		"WARC-Profile":              "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest",
		"WARC-Refers-To-Target-URI": uri,
		"WARC-Refers-To-Date":       of.UTC().Format(time.RFC3339),
	}, block)
}

func gz(b []byte) []byte {
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	w.Write(b)
	w.Close()
	return out.Bytes()
}

var (
	t1 = time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)
	t2 = time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC)
	t3 = time.Date(2025, 9, 1, 10, 0, 0, 0, time.UTC)
)

const (
	body1 = "<html><body><main><p>First version of the news.</p></main></body></html>"
	body2 = "<html><body><main><p>Second version of the news, rewritten.</p></main></body></html>"
)

// collectionFile writes a .warc.gz with the page captured twice, a
// revisit of the second capture, another page, and a last gzip member
// cut in half.
func collectionFile(t *testing.T, dir string) string {
	t.Helper()
	var b bytes.Buffer
	b.Write(gz(response(page, t1, body1)))
	b.Write(gz(response(page, t2, body2)))
	b.Write(gz(revisit(page, t3, t2, body2)))
	b.Write(gz(response("http://example.org/other", t1, "<p>other</p>")))
	last := gz(response("http://example.org/cut", t3, strings.Repeat("cut ", 200)))
	b.Write(last[:len(last)/2])
	p := filepath.Join(dir, "crawl.warc.gz")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func checkCollection(t *testing.T, c *Collection) {
	t.Helper()
	caps := c.Captures("https://EXAMPLE.org/news") // http/https and case alike
	if len(caps) != 3 {
		t.Fatalf("captures = %+v, want 3 (two responses, one revisit)", caps)
	}
	if !caps[0].Time.Equal(t1) || !caps[1].Time.Equal(t2) || !caps[2].Revisit() {
		t.Errorf("captures = %+v", caps)
	}
	e, ok := c.Nearest(page, t3.Add(24*time.Hour))
	if !ok || !e.Revisit() {
		t.Fatalf("nearest = %+v, %v", e, ok)
	}
	cp, err := c.Read(e)
	if err != nil {
		t.Fatal(err)
	}
	if string(cp.Body) != body2 || cp.Revisit == nil || !cp.Revisit.Time.Equal(t2) || cp.Status != 200 {
		t.Errorf("revisit read = status %d body %q revisit %+v", cp.Status, cp.Body, cp.Revisit)
	}
	cp, err = c.Read(caps[0])
	if err != nil || string(cp.Body) != body1 {
		t.Errorf("first capture = %v, %v", cp, err)
	}
}

// TestCollection_WARC: two captures of a page, a revisit record and a
// truncated gzip member: the captures are indexed, the revisit reads the
// payload it refers to, and the cut record is a diagnostic.
func TestCollection_WARC(t *testing.T) {
	dir := t.TempDir()
	p := collectionFile(t, dir)
	idx := filepath.Join(dir, "db.warc-index")
	c, err := Open("w", []string{p}, Options{IndexDir: idx})
	if err != nil {
		t.Fatal(err)
	}
	checkCollection(t, c)
	if len(c.Captures("http://example.org/cut")) != 0 {
		t.Errorf("the truncated record was indexed")
	}
	if len(c.Diagnostics()) == 0 {
		t.Errorf("no diagnostic for the truncated gzip member")
	}
	built := c.Indexes()
	if len(built) != 1 {
		t.Fatalf("indexes = %v", built)
	}
	st1, _ := os.Stat(built[0])

	// Opened again: the kept index is read, not rebuilt.
	time.Sleep(10 * time.Millisecond)
	c2, err := Open("w", []string{dir}, Options{IndexDir: idx})
	if err != nil {
		t.Fatal(err)
	}
	checkCollection(t, c2)
	st2, _ := os.Stat(built[0])
	if !st2.ModTime().Equal(st1.ModTime()) {
		t.Errorf("index rebuilt although the WARC did not change")
	}

	// The WARC changes (a capture appended): the index is rebuilt.
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(gz(response(page, t1, body1)))
	f.Write(gz(response("http://example.org/new", t3, "<p>new</p>")))
	f.Close()
	c3, err := Open("w", []string{p}, Options{IndexDir: idx})
	if err != nil {
		t.Fatal(err)
	}
	if len(c3.Captures("http://example.org/new")) != 1 || len(c3.Captures(page)) != 1 {
		t.Errorf("index not rebuilt after the WARC changed")
	}
}

// wacz writes a WACZ package holding the collection's WARC (stored, as
// the WACZ spec asks), with or without its own CDXJ index.
func wacz(t *testing.T, dir string, withIndex bool) string {
	t.Helper()
	src, err := os.ReadFile(collectionFile(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "coll.wacz")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	w, _ := zw.CreateHeader(&zip.FileHeader{Name: "archive/data.warc.gz", Method: zip.Store})
	w.Write(src)
	if withIndex {
		// Index the WARC with the package itself, then copy its lines.
		tmp := filepath.Join(t.TempDir(), "data.warc.gz")
		os.WriteFile(tmp, src, 0o644)
		c, err := Open("x", []string{tmp}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var entries []Entry
		for _, u := range []string{page, "http://example.org/other"} {
			for _, e := range c.Captures(u) {
				e.File = "data.warc.gz"
				entries = append(entries, e)
			}
		}
		iw, _ := zw.Create("indexes/index.cdxj")
		writeCDXJ(iw, nil, entries)
	}
	zw.Create("datapackage.json")
	zw.Close()
	f.Close()
	return p
}

func TestCollection_WACZ(t *testing.T) {
	for _, withIndex := range []bool{false, true} {
		t.Run(fmt.Sprintf("index=%v", withIndex), func(t *testing.T) {
			p := wacz(t, t.TempDir(), withIndex)
			c, err := Open("w", []string{p}, Options{IndexDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			checkCollection(t, c)
			if withIndex && !strings.HasSuffix(c.Indexes()[0], "#indexes/index.cdxj") {
				t.Errorf("own index not used: %v", c.Indexes())
			}
		})
	}
}

// TestCollection_AsArchive: through Transport, the archive client asks
// the collection exactly as a remote Memento archive: TimeGate, TimeMap,
// raw replay, and a private URL is asked about too.
func TestCollection_AsArchive(t *testing.T) {
	c, err := Open("mine", []string{collectionFile(t, t.TempDir())}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := c.Archive()
	if !a.Local {
		t.Fatal("collection archive not Local")
	}
	client := memento.NewClient(memento.Options{Archives: []memento.Archive{a}, Transport: Transport(nil, c)})
	ctx := context.Background()
	n, err := client.Negotiate(ctx, a, page, t2.Add(48*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if !n.Memento.Datetime.Equal(t2) {
		t.Errorf("negotiated %+v, want the capture of %v", n.Memento, t2)
	}
	tm, err := client.TimeMap(ctx, a, page)
	if err != nil || len(tm.Mementos) != 3 {
		t.Fatalf("timemap = %+v, %v", tm, err)
	}
	raw, ok := a.RawURL(n.Memento.URL, page, n.Memento.Datetime)
	if !ok || !strings.Contains(raw, "id_/") {
		t.Fatalf("raw = %q, %v", raw, ok)
	}
	m, err := client.FetchMemento(ctx, raw, 0)
	if err != nil || m.Status != 200 || string(m.Body) != body2 || !m.Datetime.Equal(t2) {
		t.Errorf("raw replay = %+v, %v", m, err)
	}
	if _, err := client.Negotiate(ctx, a, "http://example.org/never", t2); err == nil {
		t.Errorf("a resource not in the collection had a memento")
	}
}

func TestReadCDXJ_Bad(t *testing.T) {
	in := "!meta\n" +
		`org,example)/ 20240301100000 {"url":"http://example.org/","offset":"0","filename":"a.warc.gz","status":"200"}` + "\n" +
		"garbage\n" +
		`org,example)/ 2024 {"url":"http://example.org/","offset":"-1","filename":"a"}` + "\n" +
		`org,example)/ 20240301100000 {not json` + "\n"
	es, bad := readCDXJ(strings.NewReader(in))
	if len(es) != 1 || len(bad) != 3 {
		t.Errorf("entries %+v, bad %v", es, bad)
	}
}
