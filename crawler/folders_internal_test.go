package crawler

import (
	"bytes"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/crawler/extract"
)

// listingEntries turns fuzz input into the entries of a folder as
// Tree.Entries gives them: file names (no slash, no NUL, not . or ..),
// folders with a trailing slash, unique, sorted.
func listingEntries(s string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range strings.Split(s, "\n") {
		dir := strings.HasSuffix(n, "/")
		n = strings.TrimSuffix(n, "/")
		if n == "" || n == "." || n == ".." || strings.ContainsAny(n, "/\x00") {
			continue
		}
		if dir {
			n += "/"
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// listingFolder turns fuzz input into a folder path relative to the tree
// (segments as file names are).
func listingFolder(s string) string {
	var segs []string
	for _, seg := range strings.Split(s, "/") {
		if seg != "" && seg != "." && seg != ".." && !strings.Contains(seg, "\x00") {
			segs = append(segs, seg)
		}
	}
	return strings.Join(segs, "/")
}

// checkListing asserts that the listing of folder rel served under the
// URL path prefix links to each entry once, by a URL whose path is the
// entry's, and to nothing else, whatever the names hold.
func checkListing(t *testing.T, prefix, rel string, entries []string) {
	t.Helper()
	var buf bytes.Buffer
	if err := folderListingPage(&buf, prefix, rel, entries); err != nil {
		t.Fatalf("listing of %q: %v", rel, err)
	}
	dirPath := prefix + "/"
	if rel != "" {
		dirPath += rel + "/"
	}
	page := &url.URL{Scheme: "http", Host: "localhost", Path: dirPath}
	ex, _, err := extract.Parse(buf.Bytes(), "text/html; charset=utf-8", page, nil, extract.Options{})
	if err != nil {
		t.Fatalf("listing does not parse: %v\n%s", err, buf.Bytes())
	}
	if len(ex.Links) != len(entries) {
		t.Fatalf("%d links for %d entries %q:\n%s", len(ex.Links), len(entries), entries, buf.Bytes())
	}
	for i, l := range ex.Links {
		u, err := url.Parse(l.Href)
		if err != nil {
			t.Fatalf("link %q: %v", l.Href, err)
		}
		if u.Scheme != "http" || u.Host != "localhost" || u.Path != dirPath+entries[i] || u.RawQuery != "" || u.Fragment != "" {
			t.Errorf("entry %q: link %q (path %q), want the path %q", entries[i], l.Href, u.Path, dirPath+entries[i])
		}
	}
}

func TestFolderListingPage(t *testing.T) {
	for _, tc := range []struct {
		prefix, rel string
		entries     []string
	}{
		{"", "", nil},
		{"", "b", []string{"index.php", "sub/"}},
		{"/docs", "a/b c", []string{"<img src=x onerror=alert(1)>", "\"quoted\".txt", "q?x=1#f", "javascript:alert(1)", "100%", "é", "x\\y"}},
		{"", "", []string{"\xff\xfe.bin", "tab\there", "--></a><a href=//evil.example/>"}},
	} {
		checkListing(t, tc.prefix, tc.rel, tc.entries)
	}
}

// FuzzFolderListingPage: a listing of any folder holding any file names
// links to exactly its entries.
func FuzzFolderListingPage(f *testing.F) {
	f.Add("", "", "index.php\nsub/")
	f.Add("/docs", "a/b", "<script>alert(1)</script>\nq?x#y\njavascript:x")
	f.Add("", "%2e%2e", "%00\n100%\n\xff")
	f.Fuzz(func(t *testing.T, prefix, rel, names string) {
		p := listingFolder(prefix)
		if p != "" {
			p = "/" + p
		}
		checkListing(t, p, listingFolder(rel), listingEntries(names))
	})
}
