package crawler

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/check"
	"github.com/linkrot/linkrot/crawler/extract"
)

// onePassSame runs the one pass and the tree path over body and reports
// whether the pass fell back, or the first difference of their
// extraction or page evidence.
func onePassSame(body []byte, pageURL string) (fellBack bool, diff string) {
	u, err := url.Parse(pageURL)
	if err != nil {
		return false, err.Error()
	}
	h := http.Header{"Content-Type": {"text/html; charset=utf-8"}}
	ct := h.Get("Content-Type")
	ex, cs, doc, ok := extract.OnePass(body, ct, u, h, extract.Options{})
	if !ok {
		return true, ""
	}
	tex, tcs, tdoc, err := extract.ParseTree(body, ct, u, h, extract.Options{})
	if err != nil {
		return false, "the tree path failed where the pass did not: " + err.Error()
	}
	if cs != tcs {
		return false, fmt.Sprintf("charset %q, tree %q", cs, tcs)
	}
	if !reflect.DeepEqual(ex, tex) {
		return false, extractionDiff(ex.Links, tex.Links) + fmt.Sprintf("\npass %+v\ntree %+v", ex, tex)
	}
	e := check.Observe(200, h, body, true, 0, &check.ParsedHTML{Decoded: doc.Decoded, Facts: doc.Facts})
	te := check.Observe(200, h, body, true, 0, &check.ParsedHTML{Decoded: tdoc.Decoded, Doc: tdoc.Root})
	if !reflect.DeepEqual(e, te) {
		var d []string
		if e.Text != te.Text {
			d = append(d, fmt.Sprintf("text\npass %q\ntree %q", cut(e.Text), cut(te.Text)))
		}
		if !reflect.DeepEqual(e.Anchors, te.Anchors) {
			d = append(d, fmt.Sprintf("anchors\npass %q\ntree %q", e.Anchors, te.Anchors))
		}
		if !reflect.DeepEqual(e.Signals, te.Signals) {
			d = append(d, fmt.Sprintf("signals\npass %+v\ntree %+v", e.Signals, te.Signals))
		}
		return false, fmt.Sprintf("evidence differs: %s\npass %+v\ntree %+v", strings.Join(d, "\n"), *e, *te)
	}
	return false, ""
}

func cut(s string) string {
	if len(s) > 3000 {
		return s[:3000] + "..."
	}
	return s
}

func extractionDiff(a, b interface{ any }) string { return "" }

// onePassTree runs onePassSame over every .html file below dir and
// returns the number of pages and of fallbacks.
func onePassTree(t *testing.T, dir string) (pages, fallbacks int) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".html") {
			return err
		}
		body, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		pages++
		fb, diff := onePassSame(body, "http://docs.test/"+filepath.ToSlash(rel))
		if fb {
			fallbacks++
		}
		if diff != "" {
			t.Errorf("%s: %s", rel, diff)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pages, fallbacks
}
