package robustify_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/linkrot/linkrot/archives/archivetest"
	"github.com/linkrot/linkrot/archives/memento"
	"github.com/linkrot/linkrot/httpx"
	"github.com/linkrot/linkrot/robustify"
)

var captured = time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)

// protectable are the outbound links of testdata/sites/quirky without
// attributes that the fixture archive holds.
var protectable = []string{
	"http://ext.example/single", "http://ext.example/unquoted?a=1&b=2", "http://ext.example/spaced",
	"http://ext.example/selfclosing", "http://ext.example/slash/", "http://ext.example/café?x=<y>",
	"http://ext.example/multiline", "http://ext.example/area", "https://ext.example/crlf",
	"http://ext.example/tab", "http://ext.example/bom",
}

// copyQuirky copies testdata/sites/quirky into a new directory, the
// fixture archive's URL put in, with a symlink out of the directory and
// one inside it.
func copyQuirky(t *testing.T, fx string) (dir, outside string) {
	t.Helper()
	parent := t.TempDir()
	dir = filepath.Join(parent, "site")
	src := filepath.Join("..", "testdata", "sites", "quirky")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), bytes.ReplaceAll(b, []byte("{{FX}}"), []byte(fx)), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	outside = filepath.Join(parent, "outside.html")
	os.WriteFile(outside, []byte(`<a href="http://ext.example/single">outside</a>`), 0o644)
	if err := os.Symlink(outside, filepath.Join(dir, "out.html")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../index.html", filepath.Join(dir, "sub", "alias.html")); err != nil {
		t.Fatal(err)
	}
	return dir, outside
}

func snapshotTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			out[rel] = b
		}
		return nil
	})
	return out
}

func fixture(t *testing.T) (*archivetest.Archive, *memento.Client, memento.Archive) {
	fa := archivetest.New(t, archivetest.Options{})
	for _, u := range append(protectable, "http://ext.example/robust", "http://ext.example/broken-snap") {
		fa.Add(archivetest.Memento{Original: u, Time: captured, Body: "<p>captured</p>"})
	}
	cfg := fa.Config("fx", 60000)
	rt, done := httpx.NewTransport(httpx.Options{AllowPrivate: true})
	t.Cleanup(done)
	return fa, memento.NewClient(memento.Options{Archives: []memento.Archive{cfg}, Transport: rt, Retries: -1}), cfg
}

var added = regexp.MustCompile(` data-originalurl="[^"]*" data-versiondate="[^"]*" data-versionurl="[^"]*"`)

// TestRun_Quirky: only the attributes are added, byte for byte; links
// in comments and scripts, internal links and symlinks are untouched; a
// second run changes nothing; every protected link names a memento of
// its href.
func TestRun_Quirky(t *testing.T) {
	fa, client, cfg := fixture(t)
	dir, outside := copyQuirky(t, fa.URL)
	before := snapshotTree(t, dir)
	opts := robustify.Options{
		Lookup: robustify.ArchiveLookup(client, []memento.Archive{cfg}),
		Verify: robustify.ArchiveVerify(client),
	}
	ctx := context.Background()
	res, err := robustify.Run(ctx, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	after := snapshotTree(t, dir)
	inserted := 0
	for name, b := range after {
		inserted += len(added.FindAll(b, -1))
		// Byte-wise: remove the added attributes and get the file back.
		if stripped := added.ReplaceAll(b, nil); !bytes.Equal(stripped, before[name]) {
			t.Errorf("%s changed beyond the added attributes:\n%s", name, robustify.UnifiedDiff(name, before[name], b))
		}
	}
	if inserted != len(protectable) || res.Count(robustify.ActionAdded) != len(protectable) {
		t.Errorf("%d attribute sets inserted, %d added; want %d", inserted, res.Count(robustify.ActionAdded), len(protectable))
	}
	if b, _ := os.ReadFile(outside); strings.Contains(string(b), "data-") {
		t.Errorf("the file a symlink leads to outside the directory was edited")
	}
	reasons := map[string]string{}
	for _, f := range res.Files {
		reasons[f.Path] = f.Skipped
	}
	if !strings.Contains(reasons["out.html"], "out of the directory") || !strings.Contains(reasons["sub/alias.html"], "symlink") {
		t.Errorf("symlink reasons = %q, %q", reasons["out.html"], reasons["sub/alias.html"])
	}
	actions := map[string]robustify.LinkResult{}
	for _, l := range res.Links {
		actions[l.Href] = l
	}
	if l := actions["http://ext.example/never-archived"]; l.Action != robustify.ActionSkipped || !strings.Contains(l.Reason, "no memento") {
		t.Errorf("never-archived = %+v", l)
	}
	if l := actions["http://ext.example/robust"]; l.Action != robustify.ActionAudited {
		t.Errorf("robust link = %+v, want audited", l)
	}
	if l := actions["http://ext.example/broken-snap"]; l.Action != robustify.ActionBroken {
		t.Errorf("broken snapshot = %+v, want broken (not rewritten without --fix)", l)
	}
	for _, h := range []string{"http://ext.example/in-comment", "http://ext.example/in-script", "/sub/page.html"} {
		if _, ok := actions[h]; ok {
			t.Errorf("%s handled as an outbound link", h)
		}
	}

	// The audit of the result: every outbound link carries the three
	// attributes, and its data-versionurl is a memento of its href.
	protected := 0
	for name, b := range after {
		if !strings.HasSuffix(name, "html") && !strings.HasSuffix(name, ".htm") {
			continue
		}
		for _, tag := range robustify.Tags(b) {
			href := tag.Attrs["href"]
			if !strings.HasPrefix(href, "http") || href == "http://ext.example/never-archived" {
				continue
			}
			v := tag.Attrs[robustify.AttrVersion]
			if tag.Attrs[robustify.AttrOriginal] == "" || tag.Attrs[robustify.AttrDate] == "" || v == "" {
				t.Errorf("%s: %s not protected: %v", name, href, tag.Attrs)
				continue
			}
			if href == "http://ext.example/broken-snap" {
				continue
			}
			m, err := client.FetchMemento(ctx, strings.Fields(v)[0], -1)
			if err != nil || m.Status != 200 || m.Datetime.IsZero() {
				t.Errorf("%s: snapshot %s of %s: %+v, %v", name, v, href, m, err)
				continue
			}
			protected++
		}
	}
	if protected != len(protectable)+1 {
		t.Errorf("%d links protected by a memento, want %d", protected, len(protectable)+1)
	}

	// A second run changes nothing.
	res2, err := robustify.Run(ctx, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	again := snapshotTree(t, dir)
	for name, b := range after {
		if !bytes.Equal(again[name], b) {
			t.Errorf("second run changed %s", name)
		}
	}
	if res2.Count(robustify.ActionAdded) != 0 || res2.Count(robustify.ActionAudited) != len(protectable)+1 {
		t.Errorf("second run: %d added, %d audited", res2.Count(robustify.ActionAdded), res2.Count(robustify.ActionAudited))
	}

	// --fix replaces only the broken snapshot's values.
	opts.Fix = true
	res3, err := robustify.Run(ctx, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res3.Count(robustify.ActionFixed) != 1 {
		t.Fatalf("fix run: %d fixed", res3.Count(robustify.ActionFixed))
	}
	fixed, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	d := robustify.UnifiedDiff("index.html", after["index.html"], fixed)
	if strings.Count(d, "\n-<") != 1 || strings.Count(d, "\n+<") != 1 || !strings.Contains(d, "+<p>Declared snapshot gone:") ||
		!strings.Contains(string(fixed), `data-versionurl="`+fa.URLOf("http://ext.example/broken-snap", captured, "")+`"`) ||
		!strings.Contains(string(fixed), `data-originalurl='http://ext.example/broken-snap'`) {
		t.Errorf("fix diff:\n%s", d)
	}
}

// TestRun_DryRun: nothing is written; the diff shows each added
// attribute set.
func TestRun_DryRun(t *testing.T) {
	fa, client, cfg := fixture(t)
	dir, _ := copyQuirky(t, fa.URL)
	before := snapshotTree(t, dir)
	res, err := robustify.Run(context.Background(), dir, robustify.Options{
		Lookup: robustify.ArchiveLookup(client, []memento.Archive{cfg}), DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	after := snapshotTree(t, dir)
	for name := range before {
		if !bytes.Equal(before[name], after[name]) {
			t.Errorf("dry run wrote %s", name)
		}
	}
	var diff strings.Builder
	for _, f := range res.Files {
		diff.WriteString(f.Diff)
	}
	d := diff.String()
	if n := len(added.FindAllString(d, -1)); n != len(protectable) {
		t.Errorf("diff shows %d added attribute sets, want %d:\n%s", n, len(protectable), d)
	}
	for _, line := range strings.Split(d, "\n") {
		if strings.HasPrefix(line, "+") && !strings.HasPrefix(line, "+++") && !added.MatchString(line) {
			t.Errorf("added line without attributes: %q", line)
		}
	}
	if !strings.Contains(d, "--- a/sub/page.html\n+++ b/sub/page.html\n@@ -1,7 +1,7 @@") {
		t.Errorf("diff header:\n%s", d)
	}
}

func TestUnifiedDiff_NoNewlineAtEnd(t *testing.T) {
	d := robustify.UnifiedDiff("x", []byte("a\nb"), []byte("a\nc"))
	want := "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"
	if d != want {
		t.Errorf("diff = %q, want %q", d, want)
	}
}
