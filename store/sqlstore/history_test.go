package sqlstore

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store"
)

var histT0 = time.Date(2025, 3, 1, 3, 0, 0, 0, time.UTC)

// nightlyRun creates a complete run of https://example.org/ started day
// days after histT0, whose page links to every URL of verdicts and whose
// checks give each its verdict, and returns the run and target IDs.
func nightlyRun(tb testing.TB, db *DB, day int, verdicts map[string]audit.Verdict, complete bool) (int64, map[string]int64) {
	tb.Helper()
	ctx := context.Background()
	at := histT0.Add(time.Duration(day) * 24 * time.Hour)
	r := &audit.Run{StartedAt: at, Mode: "site", Seeds: []string{"https://example.org/"}, Version: "test"}
	if err := db.CreateRun(ctx, r); err != nil {
		tb.Fatal(err)
	}
	var urls []string
	for u := range verdicts {
		urls = append(urls, u)
	}
	ids := linkTargets(tb, db, r.ID, "https://example.org/", urls...)
	var checks []audit.Check
	for u, v := range verdicts {
		checks = append(checks, audit.Check{RunID: r.ID, TargetID: ids[u], URL: u, Verdict: v, CheckedAt: at.Add(time.Minute)})
	}
	mustSaveChecks(tb, db, checks...)
	if complete {
		if err := db.FinishRun(ctx, r.ID, audit.RunComplete, at.Add(time.Hour), ""); err != nil {
			tb.Fatal(err)
		}
	}
	return r.ID, ids
}

func mustApply(tb testing.TB, db *DB, runID int64) audit.HistoryResult {
	tb.Helper()
	res, err := db.ApplyHistory(context.Background(), runID, audit.DefaultConfirmRule)
	if err != nil {
		tb.Fatal(err)
	}
	return res
}

func mustHistories(tb testing.TB, db *DB, ids ...int64) map[int64]audit.TargetHistory {
	tb.Helper()
	h, err := db.TargetHistories(context.Background(), ids)
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

func changeURLs(cs []audit.Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.URL)
	}
	return out
}

func TestHistory_NightlyRuns(t *testing.T) { forEachBackend(t, testHistory_NightlyRuns) }

func testHistory_NightlyRuns(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	const (
		a = "https://example.org/a" // 404, 404, 200: confirmed, then recovered
		b = "https://example.org/b" // timeouts only: never confirmed
		c = "https://example.org/c" // 200, 404, 404: new broken, then confirmed
	)
	run1, ids := nightlyRun(t, db, 0, map[string]audit.Verdict{a: audit.VerdictNotFound, b: audit.VerdictTimeout, c: audit.VerdictOK}, true)
	res := mustApply(t, db, run1)
	if !reflect.DeepEqual(res.Runs, []int64{run1}) || res.Targets != 3 || res.Confirmed != 0 {
		t.Errorf("apply run 1 = %+v", res)
	}
	// Applying the same run again counts nothing twice.
	before := mustHistories(t, db, ids[a], ids[b], ids[c])
	if res := mustApply(t, db, run1); len(res.Runs) != 0 || res.Targets != 0 {
		t.Errorf("second apply of run 1 = %+v", res)
	}
	if after := mustHistories(t, db, ids[a], ids[b], ids[c]); !reflect.DeepEqual(before, after) {
		t.Errorf("second apply changed the histories:\n%+v\n%+v", before, after)
	}
	ha := before[ids[a]]
	if ha.FailedRuns != 1 || ha.Confirmed || ha.FailingSinceRun != run1 || ha.LastVerdict != audit.VerdictNotFound ||
		!ha.LastChecked.Equal(histT0.Add(time.Minute)) || ha.FirstSeen.IsZero() {
		t.Errorf("history of a after run 1 = %+v", ha)
	}

	run2, _ := nightlyRun(t, db, 1, map[string]audit.Verdict{a: audit.VerdictNotFound, b: audit.VerdictTimeout, c: audit.VerdictNotFound}, true)
	if res := mustApply(t, db, run2); res.Confirmed != 1 || res.Recovered != 0 {
		t.Errorf("apply run 2 = %+v", res)
	}
	h := mustHistories(t, db, ids[a], ids[b], ids[c])
	if !h[ids[a]].Confirmed || h[ids[a]].ConfirmedRun != run2 || h[ids[b]].Confirmed || h[ids[b]].FailedRuns != 2 ||
		h[ids[c]].FailedRuns != 1 {
		t.Errorf("histories after run 2 = %+v", h)
	}
	if n, err := db.NewlyConfirmed(ctx, run2); err != nil || n != 1 {
		t.Errorf("NewlyConfirmed(run 2) = %d, %v; want 1", n, err)
	}
	d, err := db.SinceLastRun(ctx, run2)
	if err != nil {
		t.Fatal(err)
	}
	if d.From != run1 || d.To != run2 {
		t.Errorf("diff runs %d..%d, want %d..%d", d.From, d.To, run1, run2)
	}
	if got := changeURLs(d.NewBroken); !reflect.DeepEqual(got, []string{c}) {
		t.Errorf("NewBroken = %v", got)
	}
	if got := changeURLs(d.NewlyConfirmed); !reflect.DeepEqual(got, []string{a}) {
		t.Errorf("NewlyConfirmed = %v", got)
	}
	if d.NewlyConfirmed[0].Pages != 1 || d.NewlyConfirmed[0].Previous != audit.VerdictNotFound {
		t.Errorf("confirmed change = %+v", d.NewlyConfirmed[0])
	}
	if d.DriftAvailable || len(d.NewlyDrifted) != 0 {
		t.Errorf("drift: available %v, %v", d.DriftAvailable, d.NewlyDrifted)
	}

	run3, _ := nightlyRun(t, db, 2, map[string]audit.Verdict{a: audit.VerdictOK, b: audit.VerdictTimeout, c: audit.VerdictGone}, true)
	if res := mustApply(t, db, run3); res.Confirmed != 1 || res.Recovered != 1 {
		t.Errorf("apply run 3 = %+v", res)
	}
	d, err = db.SinceLastRun(ctx, run3)
	if err != nil {
		t.Fatal(err)
	}
	if got := changeURLs(d.Recovered); !reflect.DeepEqual(got, []string{a}) {
		t.Errorf("Recovered = %v", got)
	}
	if got := changeURLs(d.NewlyConfirmed); !reflect.DeepEqual(got, []string{c}) {
		t.Errorf("NewlyConfirmed = %v", got)
	}
	if len(d.NewBroken) != 0 {
		t.Errorf("NewBroken = %v", changeURLs(d.NewBroken))
	}
	// Over the whole range, a was confirmed and recovered again: only c
	// is newly confirmed and still broken.
	d, err = db.Diff(ctx, 0, run3)
	if err != nil {
		t.Fatal(err)
	}
	if got := changeURLs(d.NewlyConfirmed); !reflect.DeepEqual(got, []string{c}) {
		t.Errorf("NewlyConfirmed over all runs = %v", got)
	}
	if got := changeURLs(d.NewBroken); !reflect.DeepEqual(got, []string{b, c}) {
		t.Errorf("NewBroken without a baseline = %v", got)
	}
	h = mustHistories(t, db, ids[a])
	if ha := h[ids[a]]; !ha.Recovered || ha.RecoveredRun != run3 || ha.Failing() || ha.Confirmed {
		t.Errorf("history of a after run 3 = %+v", ha)
	}
	rh, err := db.RunHistories(ctx, run3)
	if err != nil || len(rh) != 3 {
		t.Errorf("RunHistories = %d, %v", len(rh), err)
	}
	tl, err := db.TargetTimeline(ctx, ids[a])
	if err != nil || len(tl) != 3 || tl[2].Verdict != audit.VerdictOK || tl[0].RunID != run1 {
		t.Errorf("timeline = %+v, %v", tl, err)
	}

	sums, err := db.RunSummaries(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) != 3 || sums[0].ID != run3 || sums[0].Checked != 3 || sums[0].Broken != 2 || sums[0].Confirmed != 1 ||
		sums[0].Pages != 1 || sums[0].Links != 3 || sums[2].Confirmed != 0 {
		t.Errorf("summaries = %+v", sums)
	}
	if err := db.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
}

// TestHistory_CatchUp checks that runs recorded before history existed
// (complete, never applied) are folded in, in order, by the first
// ApplyHistory, and that unfinished runs are not.
func TestHistory_CatchUp(t *testing.T) { forEachBackend(t, testHistory_CatchUp) }

func testHistory_CatchUp(t *testing.T) {
	db := MustOpen(t)
	const u = "https://example.org/dead"
	run1, ids := nightlyRun(t, db, 0, map[string]audit.Verdict{u: audit.VerdictGone}, true)
	nightlyRun(t, db, 1, map[string]audit.Verdict{u: audit.VerdictOK}, false) // interrupted: skipped
	run3, _ := nightlyRun(t, db, 2, map[string]audit.Verdict{u: audit.VerdictGone}, true)
	run4, _ := nightlyRun(t, db, 3, map[string]audit.Verdict{u: audit.VerdictGone}, false)
	res := mustApply(t, db, run4)
	if !reflect.DeepEqual(res.Runs, []int64{run1, run3, run4}) {
		t.Errorf("applied runs %v, want %v", res.Runs, []int64{run1, run3, run4})
	}
	h := mustHistories(t, db, ids[u])[ids[u]]
	if h.FailedRuns != 3 || !h.Confirmed || h.ConfirmedRun != run3 || h.FailingSinceRun != run1 {
		t.Errorf("history = %+v", h)
	}
}

// TestHistory_OlderRunAfterNewer checks that applying an older run after a
// newer one leaves the histories alone.
func TestHistory_OlderRunAfterNewer(t *testing.T) { forEachBackend(t, testHistory_OlderRunAfterNewer) }

func testHistory_OlderRunAfterNewer(t *testing.T) {
	db := MustOpen(t)
	const u = "https://example.org/x"
	run1, ids := nightlyRun(t, db, 0, map[string]audit.Verdict{u: audit.VerdictNotFound}, false)
	run2, _ := nightlyRun(t, db, 1, map[string]audit.Verdict{u: audit.VerdictNotFound}, true)
	mustApply(t, db, run2)
	want := mustHistories(t, db, ids[u])
	if res := mustApply(t, db, run1); !reflect.DeepEqual(res.Runs, []int64{run1}) || res.Targets != 0 {
		t.Errorf("apply of the older run = %+v", res)
	}
	if got := mustHistories(t, db, ids[u]); !reflect.DeepEqual(got, want) {
		t.Errorf("older run changed the history:\n%+v\n%+v", got, want)
	}
}

// TestDiff_Drift checks the drift part of a diff against rows of the
// archives stage's drifts table.
func TestDiff_Drift(t *testing.T) { forEachBackend(t, testDiff_Drift) }

func testDiff_Drift(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	const (
		p = "https://example.org/page" // minor, then off-topic: newly drifted
		q = "https://example.org/q"    // major both times: not new
	)
	run1, ids := nightlyRun(t, db, 0, map[string]audit.Verdict{p: audit.VerdictOK, q: audit.VerdictOK}, true)
	run2, _ := nightlyRun(t, db, 1, map[string]audit.Verdict{p: audit.VerdictOK, q: audit.VerdictOK}, true)
	for _, r := range []struct {
		run    int64
		target int64
		band   string
	}{{run1, ids[p], audit.BandMinor}, {run1, ids[q], audit.BandMajor}, {run2, ids[p], audit.BandOffTopic}, {run2, ids[q], audit.BandMajor}} {
		if _, err := db.write.ExecContext(ctx, `INSERT INTO drifts (run_id, target_id, kind, reference_url, live_url,
			simhash_distance, text_measured, words_reference, words_live, word_change, band, excerpt_reference, excerpt_live)
			VALUES ($1, $2, 'first-seen', '', '', 0, 0, 0, 0, 0, $3, '', '')`, r.run, r.target, r.band); err != nil {
			t.Fatal(err)
		}
	}
	d, err := db.Diff(ctx, run1, run2)
	if err != nil {
		t.Fatal(err)
	}
	if !d.DriftAvailable || len(d.NewlyDrifted) != 1 || d.NewlyDrifted[0].URL != p ||
		d.NewlyDrifted[0].Band != audit.BandOffTopic || d.NewlyDrifted[0].PreviousBand != audit.BandMinor {
		t.Errorf("drift diff = %+v", d)
	}
}

func TestPrune(t *testing.T) { forEachBackend(t, testPrune) }

func testPrune(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	const u = "https://example.org/dead"
	var runs []int64
	var ids map[string]int64
	for day := range 4 {
		var r int64
		r, ids = nightlyRun(t, db, day, map[string]audit.Verdict{u: audit.VerdictGone}, true)
		runs = append(runs, r)
		mustApply(t, db, r)
	}
	want := mustHistories(t, db, ids[u])

	// Dry run: nothing removed.
	res, err := db.Prune(ctx, store.PruneOptions{Keep: 2, DryRun: true})
	if err != nil || !reflect.DeepEqual(res.Runs, []int64{runs[1], runs[0]}) {
		t.Fatalf("dry run = %+v, %v", res, err)
	}
	if n := count(t, db, `SELECT count(*) FROM runs`); n != 4 {
		t.Fatalf("dry run removed runs: %d left", n)
	}
	// --older-than: runs started more than 36h before the last one go, but
	// --keep 3 protects the third newest.
	now := histT0.Add(3 * 24 * time.Hour)
	res, err = db.Prune(ctx, store.PruneOptions{Keep: 3, OlderThan: 36 * time.Hour, Now: now})
	if err != nil || !reflect.DeepEqual(res.Runs, []int64{runs[0]}) {
		t.Fatalf("prune = %+v, %v", res, err)
	}
	res, err = db.Prune(ctx, store.PruneOptions{OlderThan: time.Hour, Now: now.Add(240 * time.Hour)})
	if err != nil || !reflect.DeepEqual(res.Runs, []int64{runs[2], runs[1]}) {
		t.Fatalf("prune everything old = %+v, %v (the newest run must stay)", res, err)
	}
	for _, table := range []string{"pages", "links", "checks", "history_events"} {
		if n := count(t, db, `SELECT count(*) FROM `+table+` WHERE run_id <> $1`, runs[3]); n != 0 {
			t.Errorf("%d rows of pruned runs left in %s", n, table)
		}
	}
	if got := mustHistories(t, db, ids[u]); !reflect.DeepEqual(got, want) {
		t.Errorf("prune changed the history summary:\n%+v\n%+v", got, want)
	}
	if err := db.Vacuum(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
	if res, err := db.Prune(ctx, store.PruneOptions{}); err != nil || len(res.Runs) != 0 {
		t.Errorf("prune without options = %+v, %v", res, err)
	}
}

// TestHistory_Pages: a run's checks applied a few targets at a time give
// every target its history.
func TestHistory_Pages(t *testing.T) {
	defer func(n int) { historyPage = n }(historyPage)
	historyPage = 2
	db := MustOpen(t)
	verdicts := map[string]audit.Verdict{}
	for i := range 7 {
		v := audit.VerdictOK
		if i%2 == 0 {
			v = audit.VerdictNotFound
		}
		verdicts["https://example.org/t"+string(rune('a'+i))] = v
	}
	run1, ids := nightlyRun(t, db, 0, verdicts, true)
	run2, _ := nightlyRun(t, db, 1, verdicts, true)
	if res := mustApply(t, db, run2); !reflect.DeepEqual(res.Runs, []int64{run1, run2}) || res.Targets != 14 || res.Confirmed != 4 {
		t.Errorf("result %+v, want runs %d and %d, 14 target updates, 4 confirmed", res, run1, run2)
	}
	var all []int64
	for _, id := range ids {
		all = append(all, id)
	}
	hs := mustHistories(t, db, all...)
	for u, id := range ids {
		h, ok := hs[id]
		if !ok || h.Confirmed != (verdicts[u] == audit.VerdictNotFound) {
			t.Errorf("%s: history %+v (found %v)", u, h, ok)
		}
	}
}

// TestHistory_ManyRows: histories are written many rows per statement;
// 150 targets (chunks of 64, 64, 16, 4, 1 and 1), applied in one page and
// in pages of 100 (a chunk never spans two pages), all get the history
// row by row would give them, and a second run updates every row.
func TestHistory_ManyRows(t *testing.T) {
	for _, page := range []int{2000, 100} {
		t.Run(fmt.Sprint("page ", page), func(t *testing.T) {
			defer func(n int) { historyPage = n }(historyPage)
			historyPage = page
			db := MustOpen(t)
			verdicts := map[string]audit.Verdict{}
			for i := range 150 {
				v := audit.VerdictOK
				if i%3 == 0 {
					v = audit.VerdictNotFound
				}
				verdicts[fmt.Sprintf("https://example.org/t%03d", i)] = v
			}
			run1, ids := nightlyRun(t, db, 0, verdicts, true)
			if res := mustApply(t, db, run1); res.Targets != 150 || res.Confirmed != 0 {
				t.Fatalf("first run: %+v, want 150 target updates, none confirmed", res)
			}
			run2, _ := nightlyRun(t, db, 1, verdicts, true)
			if res := mustApply(t, db, run2); res.Targets != 150 || res.Confirmed != 50 {
				t.Fatalf("second run: %+v, want 150 target updates, 50 confirmed", res)
			}
			var all []int64
			for _, id := range ids {
				all = append(all, id)
			}
			hs := mustHistories(t, db, all...)
			if len(hs) != 150 {
				t.Fatalf("%d histories, want 150", len(hs))
			}
			for u, id := range ids {
				h := hs[id]
				broken := verdicts[u] == audit.VerdictNotFound
				if h.TargetID != id || h.LastRun != run2 || h.LastVerdict != verdicts[u] || h.Confirmed != broken || h.FirstSeen.IsZero() {
					t.Errorf("%s: history %+v", u, h)
				}
				if want := 0; !broken && h.FailedRuns != want {
					t.Errorf("%s: %d failed runs, want %d", u, h.FailedRuns, want)
				}
				if broken && (h.FailedRuns != 2 || h.FailingSinceRun != run1) {
					t.Errorf("%s: failed runs %d since run %d, want 2 since %d", u, h.FailedRuns, h.FailingSinceRun, run1)
				}
			}
		})
	}
}

// TestDiff_Pages: each change of a diff counts the pages of the newer run
// linking to its target (a page linking twice counts once, the older
// run's pages not at all), the same whether the targets are counted one by
// one or in one pass over the run's links.
func TestDiff_Pages(t *testing.T) { forEachBackend(t, testDiff_Pages) }

func testDiff_Pages(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	const (
		gone  = "https://example.org/gone"  // broken in run 2 only: new
		moved = "https://example.org/moved" // moved in run 2 only: new
		back  = "https://example.org/back"  // broken in run 1, ok in run 2: recovered
	)
	run := func(day int, pages map[string][]string, verdicts map[string]audit.Verdict) int64 {
		at := histT0.Add(time.Duration(day) * 24 * time.Hour)
		r := &audit.Run{StartedAt: at, Mode: "site", Seeds: []string{"https://example.org/"}, Version: "test"}
		if err := db.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		for page, hrefs := range pages {
			p := &audit.Page{Extraction: audit.Extraction{URL: page}, Status: 200}
			for _, h := range hrefs {
				p.Links = append(p.Links, audit.Link{Element: "a", Attr: "href", Href: h, RawHref: h})
			}
			mustSave(t, db, r.ID, p)
		}
		var checks []audit.Check
		for u, v := range verdicts {
			c := audit.Check{RunID: r.ID, URL: u, Verdict: v, Status: 200, CheckedAt: at.Add(time.Minute)}
			if v.Broken() {
				c.Status = 404
			}
			checks = append(checks, c)
		}
		if missing, err := db.SaveChecksByURL(ctx, checks); err != nil || len(missing) != 0 {
			t.Fatalf("SaveChecksByURL: %v, %d missing", err, len(missing))
		}
		if err := db.FinishRun(ctx, r.ID, audit.RunComplete, at.Add(time.Hour), ""); err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	run1 := run(0, map[string][]string{
		"https://example.org/1": {gone, back, moved}, "https://example.org/2": {gone, back}, "https://example.org/3": {gone},
	}, map[string]audit.Verdict{gone: audit.VerdictOK, back: audit.VerdictNotFound, moved: audit.VerdictOK})
	run2 := run(1, map[string][]string{
		"https://example.org/1": {gone, gone + "#again", back, moved}, "https://example.org/2": {gone},
	}, map[string]audit.Verdict{gone: audit.VerdictNotFound, back: audit.VerdictOK, moved: audit.VerdictMoved})
	summary := func(d *audit.RunDiff) string {
		var b strings.Builder
		for _, l := range [][]audit.Change{d.NewBroken, d.Recovered, d.NewlyMoved} {
			for _, c := range l {
				fmt.Fprintf(&b, "%s:%d ", c.URL, c.Pages)
			}
			b.WriteString("| ")
		}
		return b.String()
	}
	want := gone + ":2 | " + back + ":1 | " + moved + ":1 | "
	defer func(n int) { pagesByTargetMax = n }(pagesByTargetMax)
	for _, max := range []int{64, 0} {
		pagesByTargetMax = max
		d, err := db.Diff(ctx, run1, run2)
		if err != nil {
			t.Fatal(err)
		}
		if got := summary(d); got != want {
			t.Errorf("counted one by one up to %d targets: diff = %s, want %s", max, got, want)
		}
	}
}
