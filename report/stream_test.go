package report

import (
	"bytes"
	"errors"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// streamed returns ds with its links moved into Dataset.EachLink, and
// counts the calls.
func streamed(ds *Dataset, calls *int) *Dataset {
	links := ds.Links
	ds.Links = nil
	ds.EachLink = func(fn func(*Link) error) error {
		*calls++
		for i := range links {
			l := links[i] // a copy: the writer may not keep the pointer
			if err := fn(&l); err != nil {
				return err
			}
		}
		return nil
	}
	return ds
}

// TestStream_SameOutput: a run streamed through Dataset.EachLink, with
// fewer links than the report details, gives every format byte for byte
// what the same run in Dataset.Links gives.
func TestStream_SameOutput(t *testing.T) {
	for _, f := range Formats {
		var want, got bytes.Buffer
		if err := Write(&want, f, fullDataset()); err != nil {
			t.Fatal(err)
		}
		calls := 0
		if err := Write(&got, f, streamed(fullDataset(), &calls)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s: streamed output differs", f)
		}
		if calls == 0 || calls > 2 {
			t.Errorf("%s: EachLink called %d times, want 1 or 2", f, calls)
		}
	}
}

// TestStream_Error: an error while streaming the links is returned by
// every writer.
func TestStream_Error(t *testing.T) {
	boom := errors.New("disk on fire")
	for _, f := range Formats {
		ds := fullDataset()
		ds.EachLink = func(fn func(*Link) error) error { return boom }
		if err := Write(&bytes.Buffer{}, f, ds); !errors.Is(err, boom) {
			t.Errorf("%s: error %v, want %v", f, err, boom)
		}
	}
	ds := fullDataset()
	ds.EachLink = func(fn func(*Link) error) error { return boom }
	if _, err := WriteDir(t.TempDir(), ds); !errors.Is(err, boom) {
		t.Errorf("WriteDir: error %v, want %v", err, boom)
	}
}

// TestWriteDir_LinkPages: a run with more links than the report details
// gets link pages holding every link once, in order, escaped, with the
// counts of the whole run in the report; the report details the links with
// findings and robustness data; a second, smaller report removes the pages
// it no longer has.
func TestWriteDir_LinkPages(t *testing.T) {
	const n, perPage, detail = 2000, 300, 100
	big := bigDataset(n)
	big.Links[7].Text = `<script>window.__xss=1</script>`
	big.Links[7].Href = `javascript:alert(1)`
	var calls int
	dir := t.TempDir()
	path, err := WriteDirOptions(dir, streamed(big, &calls), HTMLOptions{DetailLinks: detail, LinksPerPage: perPage})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Errorf("EachLink called %d times, want 2 (index, link pages)", calls)
	}
	pages := (n + perPage - 1) / perPage
	rowRE := regexp.MustCompile(`<tr><td class="num">([0-9,]+)</td>`)
	seen := 0
	for p := 1; p <= pages; p++ {
		b, err := os.ReadFile(filepath.Join(dir, LinksDir, strconv.Itoa(p)+".html"))
		if err != nil {
			t.Fatal(err)
		}
		doc := string(b)
		for _, m := range rowRE.FindAllStringSubmatch(doc, -1) {
			seen++
			if got := strings.ReplaceAll(m[1], ",", ""); got != strconv.Itoa(seen) {
				t.Fatalf("page %d: row %s, want %d", p, got, seen)
			}
		}
		if strings.Contains(doc, "<script") || strings.Contains(doc, `href="javascript:`) {
			t.Errorf("page %d: a payload is live", p)
		}
		if !strings.Contains(html.UnescapeString(doc), `content="`+linkPagesPolicy()+`"`) || strings.Contains(linkPagesPolicy(), "script-src") {
			i := strings.Index(doc, "Content-Security-Policy")
			t.Errorf("page %d: no policy allowing the stylesheet only: %.200s", p, doc[max(i, 0):])
		}
		if p < pages && !strings.Contains(doc, `rel="next" href="`+strconv.Itoa(p+1)+`.html"`) {
			t.Errorf("page %d: no link to the next page", p)
		}
	}
	if seen != n {
		t.Errorf("link pages hold %d links, want %d", seen, n)
	}
	if _, err := os.Stat(filepath.Join(dir, LinksDir, strconv.Itoa(pages+1)+".html")); err == nil {
		t.Error("a link page too many")
	}

	index, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(index)
	if !strings.Contains(doc, `This run has 2,000 links.`) || !strings.Contains(doc, `href="links/`+strconv.Itoa(pages)+`.html"`) {
		t.Error("the Links view does not list the link pages")
	}
	// The detailed links: those with findings (a tenth) and, up to the
	// bound, with Robust Links.
	ix := newIndexDetail(streamed(bigDataset(n), new(int)), detail)
	if !ix.partial || ix.totalLinks != n {
		t.Fatalf("index: partial %v, %d links", ix.partial, ix.totalLinks)
	}
	findings := 0
	for i := range ix.links {
		l := &ix.links[i]
		if len(ix.findingsByLink[l.ID]) > 0 {
			findings++
		} else if l.Robust == nil && !ix.checkByTarget[l.TargetID].Verdict.Broken() {
			t.Errorf("detailed link %d has nothing to show", l.ID)
		}
	}
	if want := len(ix.ds.Findings); findings != want {
		t.Errorf("%d detailed links with findings, want all %d", findings, want)
	}
	if len(ix.links) > detail+findings {
		t.Errorf("%d detailed links, want at most %d", len(ix.links), detail+findings)
	}
	sum := 0
	for _, c := range ix.linksPerPage {
		sum += c
	}
	if sum != n {
		t.Errorf("links per page add up to %d, want %d", sum, n)
	}

	// A small run in the same directory: no link pages left behind.
	if _, err := WriteDir(dir, fullDataset()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, LinksDir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("link pages of the earlier report left: %v", err)
	}
}
