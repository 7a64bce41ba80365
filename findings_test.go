package linkrot_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/internal/pgtest"
	"github.com/linkrot/linkrot/store/engines"
	"github.com/linkrot/linkrot/store/sqlstore"
)

// TestMain stops the throwaway PostgreSQL cluster the findings tests start
// (internal/pgtest).
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// forBothEngines runs fn as the subtests "sqlite" and "postgres", each
// with a fresh store holding a new run of seed.
func forBothEngines(t *testing.T, seed string, fn func(t *testing.T, store *sqlstore.DB, run *audit.Run)) {
	t.Helper()
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			dsn := filepath.Join(t.TempDir(), "linkrot.db")
			if engine == "postgres" {
				dsn = pgtest.DSN(t)
			}
			ctx := context.Background()
			store, err := engines.Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { store.Close() })
			run := &audit.Run{StartedAt: time.Now().UTC(), Mode: "site", Seeds: []string{seed}}
			if err := store.CreateRun(ctx, run); err != nil {
				t.Fatal(err)
			}
			fn(t, store, run)
		})
	}
}

// TestDeriveFindings_RepeatedFragments: a documentation tree links to the
// same #anchor of a target many times, from many pages. Each of those
// links is judged as if it were the only one: every link to an anchor the
// target lacks is a finding of its own (with its own link and page), none
// to an anchor it has (also when written percent-encoded, or "top"), none
// for an embedded resource's fragment even when a page link with the same
// fragment is one, every link of a broken target is a finding and every
// link of a moved one a maintenance record, whatever their fragments; and
// the findings come in the stage's order (by target, then link). On both
// engines.
func TestDeriveFindings_RepeatedFragments(t *testing.T) {
	const site = "https://docs.example"
	forBothEngines(t, site+"/", func(t *testing.T, store *sqlstore.DB, run *audit.Run) {
		ctx := context.Background()
		var (
			ok      = site + "/ok"       // anchors from its page in the run
			redir   = site + "/redir"    // anchors from the page it redirects to
			final   = site + "/final"    // that page
			live    = site + "/live"     // anchors from the live check (the anchors argument)
			moved   = site + "/moved"    // permanently moved, anchors from the live check
			gone    = site + "/gone"     // broken
			blob    = site + "/file.txt" // ok, anchors unknown
			skipped = "https://ext.example/skipped"
			ext     = "https://ext.example/page" // ok, external: fragments not judged
		)
		anchorsOf := map[string][]string{
			ok: {"here", "sec-2"}, redir: {"there"}, live: {"live-a", "caf\u00e9"}, moved: {"m"},
		}
		evidence := func(anchors []string) *audit.PageEvidence {
			return &audit.PageEvidence{HTML: true, Anchors: anchors}
		}
		fragments := []string{"missing", "here", "there", "live-a", "m", "sec-2", "", "top", "TOP",
			"%68ere", "Missing", "caf%C3%A9", "x"}
		var pages []*audit.Page
		for i := range 4 {
			p := &audit.Page{Extraction: audit.Extraction{URL: fmt.Sprintf("%s/p%d", site, i)}, Status: 200,
				ContentType: "text/html", Evidence: evidence([]string{"own"})}
			// Each pair several times on a page, interleaved with the
			// other targets' links, in an order that differs by page.
			for rep := range 3 {
				for k, target := range []string{ok, redir, live, moved, gone, blob, skipped, ext} {
					for j, f := range fragments {
						if (i+j+k+rep)%4 == 3 {
							continue
						}
						href := target
						if f != "" {
							href += "#" + f
						}
						p.Links = append(p.Links, audit.Link{Element: "a", Attr: "href", Href: href, RawHref: href,
							Text: fmt.Sprintf("link %d.%d", rep, j)})
						if f == "missing" || f == "x" {
							// The same fragment on an image: a sprite id.
							p.Links = append(p.Links, audit.Link{Element: "img", Attr: "src", Href: href, RawHref: href, Resource: true})
						}
					}
				}
			}
			pages = append(pages, p)
		}
		pages = append(pages,
			&audit.Page{Extraction: audit.Extraction{URL: ok}, Status: 200, ContentType: "text/html", Evidence: evidence(anchorsOf[ok])},
			&audit.Page{Extraction: audit.Extraction{URL: final}, RequestURL: redir, Status: 200, ContentType: "text/html", Evidence: evidence(anchorsOf[redir])},
		)
		if err := store.SavePages(ctx, run.ID, pages); err != nil {
			t.Fatal(err)
		}
		checks := []audit.Check{
			{RunID: run.ID, URL: ok, Verdict: audit.VerdictOK, Status: 200},
			{RunID: run.ID, URL: redir, Verdict: audit.VerdictRedirected, Status: 200, FinalURL: final},
			{RunID: run.ID, URL: live, Verdict: audit.VerdictOK, Status: 200},
			{RunID: run.ID, URL: moved, Verdict: audit.VerdictMoved, Status: 200, FinalURL: site + "/new", Replacement: site + "/new",
				Redirects: []audit.Redirect{{From: moved, To: site + "/new", Status: 301}}},
			{RunID: run.ID, URL: gone, Verdict: audit.VerdictNotFound, Status: 404},
			{RunID: run.ID, URL: blob, Verdict: audit.VerdictOK, Status: 200},
			{RunID: run.ID, URL: skipped, Verdict: audit.VerdictSkipped, Reason: "excluded"},
			{RunID: run.ID, URL: ext, Verdict: audit.VerdictOK, Status: 200},
		}
		if missing, err := store.SaveChecksByURL(ctx, checks); err != nil || len(missing) != 0 {
			t.Fatalf("SaveChecksByURL: %v, %d missing", err, len(missing))
		}
		counts, err := linkrot.DeriveFindings(ctx, store, run,
			map[string][]string{live: anchorsOf[live], moved: anchorsOf[moved], ext: {"here"}}, false)
		if err != nil {
			t.Fatal(err)
		}

		// What each link must give, link by link.
		refs, err := store.LinkRefs(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		type key struct {
			link     int64
			page     string
			verdict  audit.Verdict
			fragment string
		}
		var (
			want      []key
			wantFixes = map[string]int{} // by source page
			order     = map[int64][2]int64{}
		)
		for _, l := range refs {
			if slices.Contains([]string{ok, final}, l.PageURL) {
				continue
			}
			target, _, _ := strings.Cut(l.Href, "#")
			order[l.LinkID] = [2]int64{l.TargetID, l.LinkID}
			switch target {
			case gone:
				want = append(want, key{l.LinkID, l.PageURL, audit.VerdictNotFound, ""})
				continue
			case moved:
				wantFixes[l.PageURL]++
			}
			anchors, judged := anchorsOf[target]
			if !judged || l.Fragment == "" || l.Element != "a" || strings.EqualFold(l.Fragment, "top") {
				continue
			}
			if !slices.Contains(anchors, l.Fragment) && !(l.Fragment == "%68ere" && slices.Contains(anchors, "here")) &&
				!(l.Fragment == "caf%C3%A9" && slices.Contains(anchors, "caf\u00e9")) {
				want = append(want, key{l.LinkID, l.PageURL, audit.VerdictFragmentMissing, l.Fragment})
			}
		}

		findings, err := store.Findings(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		var got []key
		for _, f := range findings {
			got = append(got, key{f.LinkID, f.PageURL, f.Verdict, f.Fragment})
		}
		byLink := func(a, b key) int {
			if c := strings.Compare(a.page, b.page); c != 0 {
				return c
			}
			if a.link != b.link {
				return int(a.link - b.link)
			}
			return strings.Compare(string(a.verdict), string(b.verdict))
		}
		// Findings lists them by page, then target, then the order the
		// stage saved them: within a target, link order.
		for i := 1; i < len(got); i++ {
			a, b := got[i-1], got[i]
			if a.page == b.page && order[a.link][0] == order[b.link][0] && a.link >= b.link {
				t.Errorf("finding of link %d saved after link %d of the same target", b.link, a.link)
			}
		}
		slices.SortFunc(got, byLink)
		slices.SortFunc(want, byLink)
		if !slices.Equal(got, want) {
			t.Errorf("%d findings, want %d", len(got), len(want))
			for _, w := range want {
				if !slices.Contains(got, w) {
					t.Errorf("missing finding %+v", w)
				}
			}
			for _, g := range got {
				if !slices.Contains(want, g) {
					t.Errorf("unexpected finding %+v", g)
				}
			}
		}
		var fragmentFindings int
		for _, w := range want {
			if w.verdict == audit.VerdictFragmentMissing {
				fragmentFindings++
			}
		}
		if counts.Findings != len(want) || counts.Fragments != fragmentFindings {
			t.Errorf("counted %d findings, %d of fragments; want %d, %d", counts.Findings, counts.Fragments, len(want), fragmentFindings)
		}
		// The fixture has what the test is about: pairs repeated, kept
		// and not kept.
		if fragmentFindings < 40 || len(want)-fragmentFindings < 40 {
			t.Fatalf("fixture: %d fragment findings, %d others", fragmentFindings, len(want)-fragmentFindings)
		}

		fixes, err := store.Maintenance(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		// One record is stored per page and target; the stage counts
		// one per link.
		var gotFixes []string
		for _, m := range fixes {
			if m.Target != moved || m.Replacement != site+"/new" {
				t.Errorf("maintenance record %+v", m)
			}
			gotFixes = append(gotFixes, m.Source)
		}
		var (
			nFixes       int
			wantFixPages []string
		)
		for page, n := range wantFixes {
			nFixes += n
			wantFixPages = append(wantFixPages, page)
		}
		slices.Sort(gotFixes)
		slices.Sort(wantFixPages)
		if counts.Fixes != nFixes || !slices.Equal(gotFixes, wantFixPages) {
			t.Errorf("maintenance records of %q (counted %d), want one for each page of %q (one a link, %d)", gotFixes, counts.Fixes, wantFixPages, nFixes)
		}
	})
}

// BenchmarkDeriveFindingsDocs measures the findings stage (DeriveFindings,
// as the audit runs it after the checks) on a stored run shaped like a
// Sphinx documentation tree: LINKROT_BENCH_FINDINGS_PAGES pages (400
// unless set) of 300 links, four in five with a #fragment, most naming one
// of the 40 anchors every page has (the same anchors linked again and
// again), one in a few hundred naming none, a few links to broken and to
// skipped (external) targets. The store is SQLite, built once.
func BenchmarkDeriveFindingsDocs(b *testing.B) {
	n := 400
	if v, err := strconv.Atoi(os.Getenv("LINKROT_BENCH_FINDINGS_PAGES")); err == nil && v > 0 {
		n = v
	}
	ctx := context.Background()
	const site = "http://docs.example"
	store, run := mustOpen(b, site+"/lib/m0.html")
	anchors := make([]string, 40)
	for k := range anchors {
		anchors[k] = fmt.Sprintf("sec-%d", k)
	}
	page := func(i int) string { return fmt.Sprintf("%s/lib/m%d.html", site, i) }
	var (
		batch  []*audit.Page
		checks []audit.Check
		links  int
	)
	for i := range n {
		p := &audit.Page{Extraction: audit.Extraction{URL: page(i), Title: fmt.Sprintf("Module %d", i), Parsed: true},
			RequestURL: page(i), Status: 200, ContentType: "text/html", Charset: "utf-8", Size: 90000,
			FetchedAt: time.Now(), Evidence: &audit.PageEvidence{HTML: true, Anchors: anchors}}
		for j := range 300 {
			var href string
			switch {
			case j%50 == 7:
				href = fmt.Sprintf("%s/gone%d.html#sec-1", site, (i+j/50)%5)
			case j%50 == 11:
				href = fmt.Sprintf("https://python.example/x%d", (i+j/50)%20)
			default:
				href = page((i*7 + j*13) % n)
				switch {
				case (i*300+j)%397 == 0:
					href += fmt.Sprintf("#no-such-%d", j)
				case j%5 != 0:
					href += fmt.Sprintf("#sec-%d", (i+j)%40)
				}
			}
			p.Links = append(p.Links, audit.Link{Element: "a", Attr: "href", Href: href, RawHref: href,
				Text: fmt.Sprintf("section %d", j), Line: 40 + j, Column: 9})
		}
		links += len(p.Links)
		checks = append(checks, audit.Check{RunID: run.ID, URL: page(i), Verdict: audit.VerdictOK, Status: 200})
		if batch = append(batch, p); len(batch) == 20 || i == n-1 {
			if err := store.SavePages(ctx, run.ID, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	for k := range 5 {
		checks = append(checks, audit.Check{RunID: run.ID, URL: fmt.Sprintf("%s/gone%d.html", site, k), Verdict: audit.VerdictNotFound, Status: 404})
	}
	for k := range 20 {
		checks = append(checks, audit.Check{RunID: run.ID, URL: fmt.Sprintf("https://python.example/x%d", k), Verdict: audit.VerdictSkipped})
	}
	if missing, err := store.SaveChecksByURL(ctx, checks); err != nil || len(missing) != 0 {
		b.Fatalf("SaveChecksByURL: %v, %d missing", err, len(missing))
	}
	var counts audit.CheckCounts
	b.ResetTimer()
	for b.Loop() {
		var err error
		if counts, err = linkrot.DeriveFindings(ctx, store, run, nil, false); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if counts.Fragments == 0 || counts.Findings == counts.Fragments {
		b.Fatalf("fixture: %+v", counts)
	}
	b.ReportMetric(float64(links), "links")
	b.ReportMetric(float64(counts.Findings), "findings")
}
