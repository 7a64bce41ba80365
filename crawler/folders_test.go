package crawler_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/crawler"
)

// folderTree writes the folders of the folder tests under dir: a/ with
// an index.html, b/ with only an index.php, c/ empty, d/ with only an
// index.htm, and the documents given.
func folderTree(t *testing.T, dir string, docs map[string]string) {
	t.Helper()
	files := map[string]string{
		"a/index.html": "<title>A</title><p>A</p>",
		"b/index.php":  "<?php echo 'hi'; ?>",
		"d/index.htm":  "<title>D</title><a href=\"../a/\">a</a>",
	}
	for k, v := range docs {
		files[k] = v
	}
	writeTree(t, dir, files)
	if err := os.MkdirAll(filepath.Join(dir, "c"), 0o755); err != nil {
		t.Fatal(err)
	}
}

const folderLinksHTML = `<!doctype html><title>Home</title>
<a href="a/">a</a> <a href="b/">b</a> <a href="c/">c</a> <a href="d/">d</a> <a href="nowhere/">n</a>`

const folderLinksMarkdown = "# Home\n\n[a](a/) [b](b/) [c](c/) [d](d/) [n](nowhere/)\n"

// TestCrawlDir_Folders: a link to a folder is answered as the audited
// documents would have it answered. In an HTML build directory (no
// Markdown document), as a static web server without listings: the
// folder's index.html, else its index.htm, else 404. In a Markdown
// repository, as a forge: the index file, else an empty 200. With
// DirListing a folder without an index file answers with a listing of its
// entries, which are crawled. A folder that does not exist is 404 in
// every case.
func TestCrawlDir_Folders(t *testing.T) {
	type want struct {
		status int
		parsed bool
		links  []string // hrefs of a listing (nil: not checked)
	}
	const base = "http://localhost/"
	for _, tc := range []struct {
		name    string
		doc     string // index.html or README.md
		content string
		listing bool
		files   bool // CrawlFiles of the document only
		folders map[string]want
		crawled []string // other pages that must be recorded
		absent  []string // pages that must not be
	}{
		{name: "HTMLBuild", doc: "index.html", content: folderLinksHTML,
			folders: map[string]want{"/a/": {200, true, nil}, "/b/": {404, false, nil}, "/c/": {404, false, nil}, "/d/": {200, true, nil}, "/nowhere/": {404, false, nil}},
			absent:  []string{"/b/index.php", "/d/index.htm"}},
		{name: "HTMLBuildListing", doc: "index.html", content: folderLinksHTML, listing: true,
			folders: map[string]want{"/a/": {200, true, nil}, "/b/": {200, true, []string{base + "b/index.php"}}, "/c/": {200, true, []string{}}, "/d/": {200, true, nil}, "/nowhere/": {404, false, nil}},
			crawled: []string{"/b/index.php"}},
		{name: "HTMLFile", doc: "index.html", content: folderLinksHTML, files: true,
			folders: map[string]want{"/a/": {200, false, nil}, "/b/": {404, false, nil}, "/c/": {404, false, nil}, "/d/": {200, false, nil}, "/nowhere/": {404, false, nil}}},
		{name: "MarkdownRepository", doc: "README.md", content: folderLinksMarkdown,
			folders: map[string]want{"/a/": {200, true, nil}, "/b/": {200, false, nil}, "/c/": {200, false, nil}, "/d/": {200, true, nil}, "/nowhere/": {404, false, nil}},
			absent:  []string{"/b/index.php"}},
		{name: "MarkdownRepositoryListing", doc: "README.md", content: folderLinksMarkdown, listing: true,
			folders: map[string]want{"/b/": {200, true, []string{base + "b/index.php"}}, "/c/": {200, true, []string{}}},
			crawled: []string{"/b/index.php"}},
		{name: "MarkdownFile", doc: "README.md", content: folderLinksMarkdown, files: true,
			folders: map[string]want{"/a/": {200, false, nil}, "/b/": {200, false, nil}, "/c/": {200, false, nil}, "/nowhere/": {404, false, nil}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			folderTree(t, dir, map[string]string{tc.doc: tc.content})
			sink := &memSink{}
			c := crawler.New(crawler.Options{DirListing: tc.listing}, sink)
			var err error
			if tc.files {
				_, err = c.CrawlFiles(context.Background(), dir, base, []string{tc.doc})
			} else {
				_, err = c.CrawlDir(context.Background(), dir, base)
			}
			if err != nil {
				t.Fatal(err)
			}
			pages := sink.byPath(t)
			for path, w := range tc.folders {
				p := pages[path]
				if p == nil {
					t.Errorf("%s not fetched (pages %v)", path, paths(pages))
					continue
				}
				if p.Status != w.status || p.Parsed != w.parsed {
					t.Errorf("%s: status %d, parsed %v; want %d, %v", path, p.Status, p.Parsed, w.status, w.parsed)
				}
				if w.links != nil {
					got := []string{}
					for _, l := range p.Links {
						got = append(got, l.Href)
					}
					if !reflect.DeepEqual(got, w.links) {
						t.Errorf("%s: listing links %q, want %q", path, got, w.links)
					}
				}
			}
			for _, path := range tc.crawled {
				if p := pages[path]; p == nil || p.Status != 200 {
					t.Errorf("%s: %+v, want crawled from the listing", path, p)
				}
			}
			for _, path := range tc.absent {
				if _, ok := pages[path]; ok {
					t.Errorf("%s crawled", path)
				}
			}
		})
	}
}

// TestCrawlDir_IndexSeeds: a folder's index file is crawled once, as the
// folder's URL (the one links use): index.html, or index.htm when there
// is no index.html; an index.htm beside an index.html is a page of its
// own.
func TestCrawlDir_IndexSeeds(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"index.htm":     "<title>root</title>",
		"x/index.html":  "<title>x</title>",
		"x/index.htm":   "<title>x old</title>",
		"y/index.htm":   "<title>y</title>",
		"y/other.html":  "<a href=\"./\">y</a>",
		"z/page.html":   "<title>z</title>",
		"z/sub/x.html":  "<title>zx</title>",
		"hidden/.keep":  "",
		"hidden/.x.htm": "",
	})
	sink := &memSink{}
	if _, err := crawler.New(crawler.Options{}, sink).CrawlDir(context.Background(), dir, "http://localhost/"); err != nil {
		t.Fatal(err)
	}
	got := paths(sink.byPath(t))
	want := []string{"/", "/x/", "/x/index.htm", "/y/", "/y/other.html", "/z/page.html", "/z/sub/x.html"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("pages %q, want %q", got, want)
	}
	if p := sink.byPath(t)["/y/"]; p.Title != "y" {
		t.Errorf("/y/ answered %+v, want its index.htm", p)
	}
}

// TestWalkTree_Folders: the folders of a tree (Tree.HasDir) are the
// visible directories, empty ones included; their index file
// (Tree.Index) is index.html before index.htm; Tree.Entries lists a
// folder's visible files and folders, folders with a slash.
func TestWalkTree_Folders(t *testing.T) {
	files := map[string]string{
		"a/index.html":       "",
		"a/index.htm":        "",
		"b/index.php":        "",
		"b/sub/deep/x.txt":   "",
		"d/index.htm":        "",
		"keep/.gitkeep":      "",
		".hidden/index.html": "",
		"ignored/x.html":     "",
		".gitignore":         "ignored/\n",
	}
	check := func(t *testing.T, tree *crawler.Tree) {
		t.Helper()
		for d, want := range map[string]bool{"": true, "a": true, "b": true, "b/sub": true, "b/sub/deep": true, "c": true, "d": true,
			"keep": true, ".hidden": false, "ignored": false, "nowhere": false, "a/index.html": false} {
			if got := tree.HasDir(d); got != want {
				t.Errorf("HasDir(%q) = %v, want %v", d, got, want)
			}
		}
		for d, want := range map[string]string{"a": "a/index.html", "b": "", "c": "", "d": "d/index.htm", "": ""} {
			if got := tree.Index(d); got != want {
				t.Errorf("Index(%q) = %q, want %q", d, got, want)
			}
		}
		for d, want := range map[string][]string{
			"":  {"a/", "b/", "c/", "d/", "keep/"},
			"a": {"index.htm", "index.html"},
			"b": {"index.php", "sub/"},
			"c": nil,
		} {
			if got := tree.Entries(d); !reflect.DeepEqual(got, want) {
				t.Errorf("Entries(%q) = %q, want %q", d, got, want)
			}
		}
	}
	t.Run("Directory", func(t *testing.T) {
		dir := t.TempDir()
		writeTree(t, dir, files)
		if err := os.MkdirAll(filepath.Join(dir, "c"), 0o755); err != nil {
			t.Fatal(err)
		}
		tree, err := crawler.WalkTree(context.Background(), dir, false)
		if err != nil {
			t.Fatal(err)
		}
		// Outside git, a directory that is neither hidden nor ignored is
		// a folder, whatever it holds (keep/ has a hidden file only).
		check(t, tree)
	})
	t.Run("GitRepository", func(t *testing.T) {
		git, err := exec.LookPath("git")
		if err != nil {
			t.Skip("git not installed")
		}
		dir := t.TempDir()
		if out, err := exec.Command(git, "init", "-q", dir).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v %s", err, out)
		}
		writeTree(t, dir, files)
		if err := os.MkdirAll(filepath.Join(dir, "c"), 0o755); err != nil {
			t.Fatal(err)
		}
		// logs/ holds only files git ignores: not a folder of the tree.
		writeTree(t, dir, map[string]string{"logs/x.log": "", ".git/info/exclude": "*.log\n"})
		tree, err := crawler.WalkTree(context.Background(), dir, false)
		if err != nil {
			t.Fatal(err)
		}
		check(t, tree) // git shows keep/.gitkeep
		if tree.HasDir("logs") {
			t.Errorf("HasDir(logs): a directory of ignored files only is a folder")
		}
	})
}

// TestCrawlDir_ListingHostileNames: the entries of a listing are file
// names, which a repository's author chooses: each becomes one link to
// exactly that file, whatever characters it has, and none is markup.
func TestCrawlDir_ListingHostileNames(t *testing.T) {
	dir := t.TempDir()
	names := []string{`<script>alert(1)<`, `a"b'c.txt`, `q?x=1#frag`, `javascript:alert(1)`, `sp ace&amp;.txt`, `100%.txt`, `é.txt`}
	files := map[string]string{"index.html": `<a href="f/">f</a>`}
	for _, n := range names {
		files["f/"+n] = "x"
	}
	writeTree(t, dir, files)
	sink := &memSink{}
	if _, err := crawler.New(crawler.Options{DirListing: true}, sink).CrawlDir(context.Background(), dir, "http://localhost/"); err != nil {
		t.Fatal(err)
	}
	pages := sink.byPath(t)
	listing := pages["/f/"]
	if listing == nil || listing.Status != 200 || !listing.Parsed {
		t.Fatalf("listing %+v", listing)
	}
	if len(listing.Links) != len(names) {
		t.Fatalf("listing links %+v, want one per file of %q", listing.Links, names)
	}
	for _, n := range names {
		p := pages["/f/"+n]
		if p == nil || p.Status != 200 || !strings.HasPrefix(p.RequestURL, "http://localhost/f/") {
			t.Errorf("%q: %+v, want the file crawled from the listing", n, p)
		}
	}
	// The names are the links' texts, character for character: text,
	// not markup.
	var texts []string
	for _, l := range listing.Links {
		texts = append(texts, l.Text)
	}
	sort.Strings(texts)
	sorted := slices.Clone(names)
	sort.Strings(sorted)
	if !reflect.DeepEqual(texts, sorted) {
		t.Errorf("link texts %q, want %q", texts, sorted)
	}
}
