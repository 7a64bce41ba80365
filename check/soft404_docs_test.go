package check

import (
	"bytes"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

// djangoDocs is the HTML documentation of Django as Debian packages it
// (python-django-doc): a real documentation tree that explains 404
// handling in several pages (handler404, Http404, "Page not found").
const djangoDocs = "/usr/share/doc/python-django-doc/html"

// TestSoft404_DocumentationTree classifies every HTML page of a real
// documentation tree as the checker would (no probe: the words, the
// redirect and the parked signals) and wants no page called a soft 404 or
// parked. The tree is installed by CI (.ci/run); without it the test is
// skipped, unless LINKROT_REQUIRE_DOCS=1 makes its absence a failure.
func TestSoft404_DocumentationTree(t *testing.T) {
	if _, err := os.Stat(djangoDocs); err != nil {
		if os.Getenv("LINKROT_REQUIRE_DOCS") == "1" {
			t.Fatalf("LINKROT_REQUIRE_DOCS=1 but the documentation tree is missing: %v (install python-django-doc)", err)
		}
		t.Skipf("%s not installed (python-django-doc): %v", djangoDocs, err)
	}
	// Served as the site it is: unknown URLs answer 404 (the probe), every
	// page checked by the checker as an external target would be.
	srv := newServer(t)
	srv.handle("/", http.FileServer(http.Dir(djangoDocs)).ServeHTTP)
	var targets []Target
	about404 := 0
	err := filepath.WalkDir(djangoDocs, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".html") {
			return nil
		}
		body, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(body, []byte("404")) {
			about404++
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, djangoDocs))
		targets = append(targets, Target{ID: int64(len(targets) + 1), URL: srv.URL + (&url.URL{Path: rel}).EscapedPath()})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if about404 < 5 || len(targets) < 100 {
		t.Fatalf("%d pages, %d mention 404: not the tree this test is about", len(targets), about404)
	}
	o := testOptions()
	o.Workers, o.PerHost = 8, 8
	got := collect(t, New(o), targets)
	if len(got) != len(targets) {
		t.Fatalf("%d checks of %d pages", len(got), len(targets))
	}
	type scored struct {
		url   string
		score float64
		ev    *audit.Soft404Evidence
	}
	var withSignal []scored
	verdicts := map[audit.Verdict]int{}
	for u, c := range got {
		verdicts[c.Verdict]++
		switch c.Verdict {
		case audit.VerdictOK:
		case audit.VerdictMoved: // FileServer: /x/index.html -> ./
			if !strings.HasSuffix(u, "/index.html") {
				t.Errorf("%s: %s: %s", u, c.Verdict, c.Reason)
			}
		default:
			t.Errorf("%s: %s: %s", u, c.Verdict, c.Reason)
		}
		if c.Soft404 == nil || c.Soft404.ProbeStatus != 404 {
			t.Errorf("%s: no 404 probe recorded: %+v", u, c.Soft404)
			continue
		}
		if len(c.Soft404.Signals) > 1 {
			withSignal = append(withSignal, scored{u, max(c.Soft404.Score, c.Soft404.Parked), c.Soft404})
		}
	}
	sort.Slice(withSignal, func(i, j int) bool { return withSignal[i].score > withSignal[j].score })
	for _, p := range withSignal[:min(len(withSignal), 5)] {
		t.Logf("highest: %.2f %s %+v", p.score, strings.TrimPrefix(p.url, srv.URL), p.ev.Signals[1:])
	}
	t.Logf("%d pages (%d mention 404): %v; %d with a words signal", len(targets), about404, verdicts, len(withSignal))
}
