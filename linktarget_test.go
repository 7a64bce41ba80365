package linkrot_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/linkrot/linkrot"
)

// TestAudit_LinkTargetsAgree: the router, which submits a link's target
// for checking under its key, and the store's writer, which stores the
// link under its target, find the same target for every link, through
// the key the crawler records on the links (audit.Link.Target): every
// http(s) target a stored link names has its check, and the spellings of
// one target (fragments, a query, the scheme's case) are one target.
func TestAudit_LinkTargetsAgree(t *testing.T) {
	ext := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<p>external</p>`)
	}))
	defer ext.Close()
	extHost := strings.TrimPrefix(ext.URL, "http://")
	var site *httptest.Server
	site = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Path != "/" {
			fmt.Fprint(w, `<p>leaf <a href="/#back">home</a></p>`)
			return
		}
		for _, h := range []string{
			"a.html", "a.html#one", "/a.html#two", "./a.html#", strings.Replace(site.URL, "http://", "HTTP://", 1) + "/a.html#three",
			"a.html?q=1#one", "/%C3%BC.html#f", "/ü.html#g", "/sp ace.html #f",
			ext.URL + "/c#one", ext.URL + "/c#two", ext.URL + "/c?q=1#f",
			"http://user:secret@" + extHost + "/d#f", "http://user:other@" + extHost + "/d#g",
			"mailto:someone@example.org", "http://[::1/broken#f", "", "#top",
		} {
			fmt.Fprintf(w, "<a href=%q>link</a>\n", h)
		}
	}))
	defer site.Close()
	store, run := mustOpen(t, site.URL+"/")
	job := openJob(t, store, run, linkrot.Settings{
		PerHost:  2,
		Check:    linkrot.CheckSettings{Workers: 4, NoSoft404: true, AllowPrivate: true},
		Archives: linkrot.ArchiveSettings{Off: true},
	})
	ctx := context.Background()
	if _, err := job.Audit(ctx, store, nil); err != nil {
		t.Fatal(err)
	}
	links, err := store.LinkRefs(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	checks, err := store.Checks(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	checked := map[int64]string{}
	for _, c := range checks {
		checked[c.TargetID] = c.URL
	}
	aTargets := map[int64]bool{}
	linked := 0
	for _, l := range links {
		if l.PageURL != site.URL+"/" || l.TargetID == 0 {
			continue
		}
		linked++
		if strings.HasPrefix(strings.ToLower(l.Href), "http") {
			if _, ok := checked[l.TargetID]; !ok {
				t.Errorf("link %q: its target %d has no check", l.Href, l.TargetID)
			}
		}
		if strings.HasPrefix(strings.ToLower(l.Href), strings.ToLower(site.URL)+"/a.html") && !strings.Contains(l.Href, "?") {
			aTargets[l.TargetID] = true
		}
	}
	if linked < 15 {
		t.Errorf("%d links of the home page have a target; want 15", linked)
	}
	if len(aTargets) != 1 {
		t.Errorf("a.html in five spellings makes %d targets; want 1", len(aTargets))
	}
}
