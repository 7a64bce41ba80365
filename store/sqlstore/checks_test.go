package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store/storetest"
)

// linkedRun creates a run whose one page links to each of urls and returns
// the run and the target IDs by URL.
func linkedRun(tb testing.TB, db *DB, urls ...string) (int64, map[string]int64) {
	tb.Helper()
	return storetest.LinkedRun(tb, db, urls...)
}

// linkTargets saves, in runID, a page at pageURL linking to each of urls
// and returns the target IDs of all the run's targets by URL.
func linkTargets(tb testing.TB, db *DB, runID int64, pageURL string, urls ...string) map[string]int64 {
	tb.Helper()
	return storetest.LinkTargets(tb, db, runID, pageURL, urls...)
}

func mustSaveChecks(tb testing.TB, db *DB, checks ...audit.Check) {
	tb.Helper()
	storetest.MustSaveChecks(tb, db, checks...)
}

func mustChecks(tb testing.TB, db *DB, runID int64) []audit.Check {
	tb.Helper()
	return storetest.MustChecks(tb, db, runID)
}

const (
	hostileInject = `'); DROP TABLE checks;--`
	hostileQuotes = `"double" 'single' ` + "`back`" + ` \backslash ; {"json":[1]} </script><b>&amp;`
	hostileNUL    = "a\x00b\x00"
	hostileCtl    = "line1\r\nline2\ttab\x1b[31m\u2028\u2029"
)

// fullCheck returns a check of target (id, u) in runID with every stored
// field set.
func fullCheck(runID, targetID int64, u string) audit.Check {
	return audit.Check{
		RunID:      runID,
		TargetID:   targetID,
		URL:        u,
		Verdict:    audit.VerdictSoft404,
		Reason:     "probe of a random sibling answered 200 with 97% similar text",
		ErrorClass: "",
		Status:     200,
		FinalURL:   "https://example.com/new/" + hostileInject,
		Redirects: []audit.Redirect{
			{From: u, To: "https://example.com/tmp?x=" + hostileQuotes, Status: 302},
			{From: "https://example.com/tmp?x=" + hostileQuotes, To: "https://example.com/" + hostileNUL, Status: 307},
			{From: "https://example.com/" + hostileNUL, To: "https://example.com/new/" + hostileInject, Status: 301},
		},
		Replacement: "https://example.com/new/" + hostileInject,
		Attempts:    3,
		Timings: audit.Timings{
			DNS:       12 * time.Millisecond,
			Connect:   34 * time.Millisecond,
			TLS:       56 * time.Millisecond,
			FirstByte: 789 * time.Millisecond,
			Total:     2*time.Second + 345*time.Millisecond,
		},
		// Not UTC, with nanoseconds: reads back as the same instant in UTC.
		CheckedAt: time.Date(2024, 3, 1, 12, 30, 45, 123456789, time.FixedZone("CET", 3600)),
		Headers: map[string]string{
			"Content-Type":     "text/html; charset=utf-8",
			"Etag":             `W/"abc"`,
			"Last-Modified":    "Fri, 01 Mar 2024 10:00:00 GMT",
			"Link":             `<https://example.com/a>; rel="canonical", <https://web.archive.org/>; rel="memento"`,
			"Server":           hostileInject,
			"X-Quotes":         hostileQuotes,
			"X-Nul":            hostileNUL,
			"X-Control":        hostileCtl,
			"X-Unicode-Ключ":   "значение ✓ 🙂",
			hostileInject:      hostileQuotes,
			"":                 "empty name",
			"X-Big":            strings.Repeat("0123456789abcdef", 4096), // 64 KiB
			"Memento-Datetime": "Sun, 01 Jan 2023 00:00:00 GMT",
		},
		ContentType:  "text/html; charset=utf-8",
		ETag:         `W/"abc"`,
		LastModified: "Fri, 01 Mar 2024 10:00:00 GMT",
		Reused:       true,
		ReusedFrom:   runID, // replaced by tests that have an earlier run
		SHA256:       "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		SimHash:      0xF000000000000001,
		Words:        1234,
		Truncated:    true,
		Soft404: &audit.Soft404Evidence{
			ProbeURL:    "https://example.com/linkrot-probe-8f3a9c",
			ProbeStatus: 200,
			ProbeFinal:  "https://example.com/",
			Similarity:  0.9734375,
			Score:       1.6,
			Parked:      0.3,
			Signals: []audit.Soft404Signal{
				{Name: "probe", Score: 1, Match: "probe answered 200 with text 0.97 similar", Where: "probe"},
				{Name: "words", Score: 0.6, Match: `page not found: "Page <not> found"`, Where: "title"},
				{Name: "parked", Score: 0.3, Match: "link to a domain marketplace: dan.com/buy-domain", Where: "html"},
				{Name: "drift", Score: -1, Match: "minor since run 1", Where: "fingerprint"},
			},
		},
		Anchors: []string{"top", "sec"}, // not stored
	}
}

// stored returns c as Checks returns it: UTC time, no anchors.
func stored(c audit.Check) audit.Check { return storetest.Stored(c) }

func diffChecks(t *testing.T, got, want []audit.Check) {
	t.Helper()
	storetest.DiffChecks(t, got, want)
}

func TestChecks_RoundTrip(t *testing.T) { forEachBackend(t, testChecks_RoundTrip) }

func testChecks_RoundTrip(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	earlier := mustCreateRun(t, db)
	const full, minimal = "https://example.com/full", "https://example.com/a-minimal"
	runID, ids := linkedRun(t, db, full, minimal)

	c := fullCheck(runID, ids[full], full)
	c.ReusedFrom = earlier
	m := audit.Check{RunID: runID, TargetID: ids[minimal], Verdict: audit.VerdictOK}
	mustSaveChecks(t, db, c, m)

	wantM := m
	wantM.URL = minimal // from the target
	// Ordered by URL.
	diffChecks(t, mustChecks(t, db, runID), []audit.Check{wantM, stored(c)})

	t.Run("Columns", func(t *testing.T) {
		// The uint64 bit pattern, as int64.
		if got := count(t, db, `SELECT count(*) FROM checks WHERE simhash = $1`, int64(-1152921504606846975)); got != 1 {
			t.Errorf("simhash not stored as the int64 of its bits")
		}
		if got := count(t, db, `SELECT count(*) FROM checks WHERE checked_at = '2024-03-01T11:30:45.123456789Z'`); got != 1 {
			t.Errorf("checked_at not stored as UTC with 9 fraction digits")
		}
		if got := count(t, db, `SELECT count(*) FROM checks WHERE checked_at IS NULL AND reused_from IS NULL
			AND soft404_probe_url IS NULL AND soft404_probe_status IS NULL AND soft404_probe_final IS NULL
			AND soft404_similarity IS NULL AND redirects = '[]' AND headers = '{}'`); got != 1 {
			t.Errorf("minimal check: absent values not stored as NULL, [] and {}")
		}
		// JSON the database itself can read.
		jsonQuery := `SELECT count(*) FROM checks WHERE json_extract(headers, '$.Server') = $1
			AND json_array_length(redirects) = 3 AND json_extract(redirects, '$[2].status') = 301`
		jsonArg := any(hostileInject)
		if db.Postgres() {
			// PostgreSQL's json functions refuse a document holding
			// \u0000 (the NUL values above) except to parse it: the
			// values are compared as JSON text.
			jsonQuery = `SELECT count(*) FROM checks WHERE strpos(headers, $1) > 0
			AND json_typeof(CAST(redirects AS json)) = 'array' AND json_typeof(CAST(headers AS json)) = 'object'
			AND redirects LIKE '[{%},{%},{%"status":301}]'`
			jsonArg = `"Server":"` + hostileInject + `"`
		}
		if got := count(t, db, jsonQuery, jsonArg); got != 1 {
			t.Errorf("headers or redirects not queryable as JSON")
		}
		if got := count(t, db, `SELECT count(*) FROM checks WHERE headers LIKE '%</script>%'`); got != 1 {
			t.Errorf("headers JSON escapes HTML characters")
		}
	})

	t.Run("Timings", func(t *testing.T) {
		// Durations keep whole milliseconds.
		run2, ids := linkedRun(t, db, full)
		c := audit.Check{RunID: run2, TargetID: ids[full], URL: full, Verdict: audit.VerdictOK,
			Timings: audit.Timings{DNS: 1500 * time.Microsecond, Total: 999 * time.Microsecond}}
		mustSaveChecks(t, db, c)
		got := mustChecks(t, db, run2)
		if len(got) != 1 || got[0].Timings != (audit.Timings{DNS: time.Millisecond}) {
			t.Errorf("timings = %+v, want DNS 1ms, others 0", got)
		}
	})

	t.Run("InvalidUTF8", func(t *testing.T) {
		// Text columns and JSON columns alike replace invalid UTF-8
		// (store.ValidText; JSON as encoding/json writes it).
		bad := "\xff\xfe\xc3\x28 invalid"
		run3, ids := linkedRun(t, db, full)
		c := audit.Check{RunID: run3, TargetID: ids[full], URL: full, Verdict: audit.VerdictOK,
			Reason: bad, FinalURL: bad, Headers: map[string]string{"X-Bad": bad},
			Redirects: []audit.Redirect{{From: full, To: bad, Status: 302}}}
		mustSaveChecks(t, db, c)
		got := mustChecks(t, db, run3)
		if len(got) != 1 {
			t.Fatalf("got %d checks", len(got))
		}
		want := "\ufffd\ufffd\ufffd( invalid"
		if got[0].Reason != want || got[0].FinalURL != want {
			t.Errorf("text columns changed invalid UTF-8: %q, %q", got[0].Reason, got[0].FinalURL)
		}
		if got[0].Headers["X-Bad"] != want || got[0].Redirects[0].To != want {
			t.Errorf("JSON columns: %q, %q; want %q", got[0].Headers["X-Bad"], got[0].Redirects[0].To, want)
		}
	})

	t.Run("Soft404", func(t *testing.T) {
		run4, ids := linkedRun(t, db, full)
		for _, sim := range []float64{0, 1, math.NaN(), math.Inf(1), -0.5, math.SmallestNonzeroFloat64} {
			c := audit.Check{RunID: run4, TargetID: ids[full], URL: full, Verdict: audit.VerdictOK,
				Soft404: &audit.Soft404Evidence{ProbeURL: "https://example.com/probe", ProbeStatus: 404, Similarity: sim}}
			mustSaveChecks(t, db, c)
			got := mustChecks(t, db, run4)
			if len(got) != 1 || got[0].Soft404 == nil {
				t.Fatalf("similarity %v: got %+v", sim, got)
			}
			e := got[0].Soft404
			if e.ProbeURL != "https://example.com/probe" || e.ProbeStatus != 404 || e.ProbeFinal != "" {
				t.Errorf("similarity %v: evidence %+v", sim, e)
			}
			if g := e.Similarity; g != sim && !(math.IsNaN(g) && math.IsNaN(sim)) {
				t.Errorf("similarity %v read back as %v", sim, g)
			}
		}
	})

	if err := db.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
}

func TestChecks_Replace(t *testing.T) { forEachBackend(t, testChecks_Replace) }

func testChecks_Replace(t *testing.T) {
	db := MustOpen(t)
	const a, b = "https://example.com/a", "https://example.com/b"
	runID, ids := linkedRun(t, db, a, b)

	first := fullCheck(runID, ids[a], a)
	mustSaveChecks(t, db, first, audit.Check{RunID: runID, TargetID: ids[b], URL: b, Verdict: audit.VerdictGone, Status: 410})

	// A resumed run checks a again: every column is replaced, including
	// those the new check leaves empty.
	second := audit.Check{RunID: runID, TargetID: ids[a], URL: a, Verdict: audit.VerdictTimeout,
		ErrorClass: "timeout", Attempts: 2, CheckedAt: time.Date(2024, 3, 2, 0, 0, 0, 0, time.UTC)}
	mustSaveChecks(t, db, second)
	diffChecks(t, mustChecks(t, db, runID), []audit.Check{
		second,
		{RunID: runID, TargetID: ids[b], URL: b, Verdict: audit.VerdictGone, Status: 410},
	})

	// Within one batch, the last one wins.
	third := second
	third.Verdict = audit.VerdictNotFound
	third.Status = 404
	mustSaveChecks(t, db, first, third)
	if got := mustChecks(t, db, runID); len(got) != 2 || got[0].Verdict != audit.VerdictNotFound {
		t.Errorf("after a batch with two checks of a: %+v", got)
	}
	if got := count(t, db, `SELECT count(*) FROM checks`); got != 2 {
		t.Errorf("checks rows = %d, want 2", got)
	}
}

// TestChecks_Soft404Signals: the classifier's signals are stored as JSON
// the database can read, kept only with soft-404 evidence, and reset when
// the check is saved again without.
func TestChecks_Soft404Signals(t *testing.T) { forEachBackend(t, testChecks_Soft404Signals) }

func testChecks_Soft404Signals(t *testing.T) {
	db := MustOpen(t)
	const u = "https://example.com/parked"
	runID, ids := linkedRun(t, db, u)
	c := audit.Check{RunID: runID, TargetID: ids[u], URL: u, Verdict: audit.VerdictParked, Status: 200,
		Soft404: &audit.Soft404Evidence{Parked: 1.7, Signals: []audit.Soft404Signal{
			{Name: "parked", Score: 0.8, Match: "parking code from sedoparking.com", Where: "html"},
			{Name: "drift", Score: 0.4, Match: "off-topic since run 3", Where: "fingerprint"}}}}
	mustSaveChecks(t, db, c)
	diffChecks(t, mustChecks(t, db, runID), []audit.Check{c})
	jsonQuery := `SELECT count(*) FROM checks WHERE json_extract(soft404_signals, '$.signals[0].name') = 'parked'
		AND json_extract(soft404_signals, '$.parked') = 1.7 AND soft404_probe_url = '' AND verdict = 'parked'`
	if db.Postgres() {
		jsonQuery = `SELECT count(*) FROM checks WHERE CAST(soft404_signals AS json) -> 'signals' -> 0 ->> 'name' = 'parked'
		AND CAST(CAST(soft404_signals AS json) ->> 'parked' AS DOUBLE PRECISION) = 1.7 AND soft404_probe_url = '' AND verdict = 'parked'`
	}
	if got := count(t, db, jsonQuery); got != 1 {
		t.Errorf("signals not queryable as JSON")
	}
	c2 := c
	c2.Verdict, c2.Soft404 = audit.VerdictOK, nil
	mustSaveChecks(t, db, c2)
	if got := count(t, db, `SELECT count(*) FROM checks WHERE soft404_signals IS NULL`); got != 1 {
		t.Errorf("signals kept after the check was replaced without them")
	}
	diffChecks(t, mustChecks(t, db, runID), []audit.Check{c2})
}

func TestChecks_EveryVerdict(t *testing.T) { forEachBackend(t, testChecks_EveryVerdict) }

func testChecks_EveryVerdict(t *testing.T) {
	// The verdict CHECK constraints of the schema must accept exactly
	// audit.Verdicts: a new verdict needs a migration. invalid-url is a
	// link's own verdict (the link has no target, so no check): findings
	// take it, checks refuse it.
	db := MustOpen(t)
	var urls []string
	for _, v := range audit.Verdicts {
		urls = append(urls, "https://example.com/"+string(v))
	}
	runID, ids := linkedRun(t, db, urls...)
	var checks []audit.Check
	var findings []audit.Finding
	for i, v := range audit.Verdicts {
		if v != audit.VerdictInvalidURL {
			checks = append(checks, audit.Check{RunID: runID, TargetID: ids[urls[i]], Verdict: v})
		}
		findings = append(findings, audit.Finding{RunID: runID, PageURL: "https://example.org/", Target: urls[i], Verdict: v})
	}
	if err := db.SaveChecks(context.Background(), checks); err != nil {
		t.Fatalf("a verdict of audit.Verdicts is refused by the checks table (add a migration): %v", err)
	}
	if err := db.SaveFindings(context.Background(), findings); err != nil {
		t.Fatalf("a verdict of audit.Verdicts is refused by the findings table (add a migration): %v", err)
	}
	if got := count(t, db, `SELECT count(DISTINCT verdict) FROM checks`); got != len(checks) {
		t.Errorf("distinct verdicts stored = %d, want %d", got, len(checks))
	}
	if got := count(t, db, `SELECT count(DISTINCT verdict) FROM findings`); got != len(audit.Verdicts) {
		t.Errorf("distinct finding verdicts stored = %d, want %d", got, len(audit.Verdicts))
	}
	linkOnly := audit.Check{RunID: runID, TargetID: ids[urls[slices.Index(audit.Verdicts, audit.VerdictInvalidURL)]], Verdict: audit.VerdictInvalidURL}
	if err := db.SaveChecks(context.Background(), []audit.Check{linkOnly}); err == nil || !strings.Contains(err.Error(), "checks_verdict") {
		t.Errorf("a check with the link verdict invalid-url: %v, want the checks_verdict constraint", err)
	}

	bogus := checks[0]
	bogus.Verdict = "mostly-fine"
	err := db.SaveChecks(context.Background(), []audit.Check{bogus})
	if err == nil || !strings.Contains(err.Error(), "checks_verdict") {
		t.Errorf("unknown verdict: %v, want the checks_verdict constraint", err)
	}
	f := findings[0]
	f.Verdict = ""
	if err := db.SaveFindings(context.Background(), []audit.Finding{f}); err == nil {
		t.Error("empty finding verdict accepted")
	}
}

func TestChecks_Errors(t *testing.T) { forEachBackend(t, testChecks_Errors) }

func testChecks_Errors(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	const a, b = "https://example.com/a", "https://example.com/b"
	runID, ids := linkedRun(t, db, a, b)
	good := audit.Check{RunID: runID, TargetID: ids[a], URL: a, Verdict: audit.VerdictOK}

	for _, tc := range []struct {
		name     string
		bad      audit.Check
		notFound bool
		contains string
	}{
		{"UnknownRun", audit.Check{RunID: 999, TargetID: ids[b], Verdict: audit.VerdictOK}, true, "run 999"},
		{"UnknownTarget", audit.Check{RunID: runID, TargetID: 999999, Verdict: audit.VerdictOK}, true, "target 999999"},
		{"WrongURL", audit.Check{RunID: runID, TargetID: ids[b], URL: a, Verdict: audit.VerdictOK}, false, "not the target's URL"},
		{"UnknownReusedFrom", audit.Check{RunID: runID, TargetID: ids[b], Verdict: audit.VerdictOK, Reused: true, ReusedFrom: 999}, false, "FOREIGN KEY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The good check comes first: the failed batch must take it back.
			err := db.SaveChecks(ctx, []audit.Check{good, tc.bad})
			if err == nil {
				t.Fatal("SaveChecks succeeded")
			}
			if errors.Is(err, audit.ErrNotFound) != tc.notFound {
				t.Errorf("error %v: ErrNotFound = %v, want %v", err, !tc.notFound, tc.notFound)
			}
			// Case-blind: SQLite says FOREIGN KEY, PostgreSQL foreign key.
			if !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(tc.contains)) || !strings.HasPrefix(err.Error(), "save checks: ") {
				t.Errorf("error %q, want it to start with the operation and mention %q", err, tc.contains)
			}
			if got := count(t, db, `SELECT count(*) FROM checks`); got != 0 {
				t.Errorf("%d checks stored by a failed batch", got)
			}
		})
	}
	t.Run("Cancelled", func(t *testing.T) {
		cctx := &errAfter{Context: ctx}
		cctx.n.Store(2)
		err := db.SaveChecks(cctx, []audit.Check{good, good, good, good, good})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("SaveChecks: %v, want context.Canceled", err)
		}
		if got := count(t, db, `SELECT count(*) FROM checks`); got != 0 {
			t.Errorf("%d checks stored by a cancelled batch", got)
		}
	})

	if err := db.SaveChecks(ctx, nil); err != nil {
		t.Errorf("empty batch: %v", err)
	}
	mustSaveChecks(t, db, good)
}

func TestPreviousChecks(t *testing.T) { forEachBackend(t, testPreviousChecks) }

func testPreviousChecks(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	urls := map[string]string{}
	for _, name := range []string{"okThenTimeout", "okThenNotFound", "sameRunOnly", "noHistory",
		"laterRun", "transientOnly", "newerInOlderRun", "tie", "noTime", "old", "okThenSkipped", "refusedOnly"} {
		urls[name] = "https://example.com/" + name
	}
	r1, ids := linkedRun(t, db, slices.Sorted(maps.Values(urls))...)
	r2 := mustCreateRun(t, db)
	cur := mustCreateRun(t, db)
	later := mustCreateRun(t, db)

	day := func(d int) time.Time { return time.Date(2024, 3, d, 12, 0, 0, 0, time.UTC) }
	check := func(run int64, name string, v audit.Verdict, at time.Time) audit.Check {
		return audit.Check{RunID: run, TargetID: ids[urls[name]], URL: urls[name], Verdict: v, CheckedAt: at,
			ETag: fmt.Sprintf(`"%d-%s"`, run, v), LastModified: at.Format(time.RFC1123)}
	}
	saved := []audit.Check{
		check(r1, "okThenTimeout", audit.VerdictOK, day(1)),
		check(r2, "okThenTimeout", audit.VerdictTimeout, day(2)),
		check(r1, "okThenNotFound", audit.VerdictOK, day(1)),
		check(r2, "okThenNotFound", audit.VerdictNotFound, day(2)),
		check(cur, "sameRunOnly", audit.VerdictOK, day(3)),
		check(r1, "laterRun", audit.VerdictGone, day(1)),
		check(later, "laterRun", audit.VerdictOK, day(4)),
		check(r1, "transientOnly", audit.VerdictServerError, day(1)),
		check(r2, "transientOnly", audit.VerdictRateLimited, day(2)),
		check(r2, "transientOnly", audit.VerdictConnectionError, day(2)), // replaces the rate-limited one
		check(r1, "newerInOlderRun", audit.VerdictMoved, day(3)),
		check(r2, "newerInOlderRun", audit.VerdictOK, day(2)),
		check(r1, "tie", audit.VerdictOK, day(2)),
		check(r2, "tie", audit.VerdictRedirected, day(2)),
		check(r1, "noTime", audit.VerdictOK, day(1)),
		check(r2, "noTime", audit.VerdictBlocked, time.Time{}),
		check(r1, "old", audit.VerdictOK, time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)),
		// Skipped and refused depend on that run's settings, not the target.
		check(r1, "okThenSkipped", audit.VerdictOK, day(1)),
		check(r2, "okThenSkipped", audit.VerdictSkipped, day(2)),
		check(r2, "refusedOnly", audit.VerdictRefused, day(2)),
	}
	full := fullCheck(r1, ids[urls["noHistory"]], urls["noHistory"])
	full.Verdict = audit.VerdictOK
	full.ReusedFrom = 0
	mustSaveChecks(t, db, saved...)

	want := map[string]audit.Check{
		"okThenTimeout":   saved[0],
		"okThenNotFound":  saved[3],
		"laterRun":        saved[5],
		"newerInOlderRun": saved[10],
		"tie":             saved[13], // same time: the later run
		"noTime":          saved[14], // a dated check beats an undated one
		"old":             saved[16], // whatever its age
		"okThenSkipped":   saved[17],
	}
	allIDs := make([]int64, 0, len(ids)+2)
	for _, id := range ids {
		allIDs = append(allIDs, id)
	}
	allIDs = append(allIDs, allIDs[0], 987654321) // a duplicate and an unknown ID
	// maxAge and now do not filter.
	got, err := db.PreviousChecks(ctx, cur, allIDs, time.Hour, day(28))
	if err != nil {
		t.Fatal(err)
	}
	for name, w := range want {
		g, ok := got[ids[urls[name]]]
		if !ok {
			t.Errorf("%s: no previous check, want run %d %s", name, w.RunID, w.Verdict)
			continue
		}
		diffChecks(t, []audit.Check{*g}, []audit.Check{stored(w)})
	}
	for name, u := range urls {
		if _, ok := want[name]; !ok {
			if g, ok := got[ids[u]]; ok {
				t.Errorf("%s: got run %d %s, want none", name, g.RunID, g.Verdict)
			}
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d previous checks, want %d", len(got), len(want))
	}

	// Every stored field comes back, as from Checks.
	mustSaveChecks(t, db, full)
	got, err = db.PreviousChecks(ctx, cur, []int64{full.TargetID}, 0, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if g := got[full.TargetID]; g == nil {
		t.Error("full check not found")
	} else {
		diffChecks(t, []audit.Check{*g}, []audit.Check{stored(full)})
	}

	// From the first run's point of view there is no history at all.
	if got, err := db.PreviousChecks(ctx, r1, allIDs, 0, time.Now()); err != nil || len(got) != 0 {
		t.Errorf("PreviousChecks(first run) = %v, %v; want none", got, err)
	}
}

// TestPreviousChecks_Plan checks that each target is a seek in the cache
// index, not a scan of its history or a sort.
//
// SQLite-only: it reads SQLite's EXPLAIN QUERY PLAN.
func TestPreviousChecks_Plan(t *testing.T) {
	db := MustOpen(t)
	query, args := db.previousChecksQuery(3, []int64{1, 2, 3})
	rows, err := db.read.Query("EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	joined := strings.Join(plan, "\n")
	t.Logf("plan:\n%s", joined)
	if !strings.Contains(joined, "SEARCH p USING INDEX checks_target_checked_at (target_id=?)") ||
		strings.Contains(joined, "FOR ORDER BY") || strings.Contains(joined, "SCAN p") || strings.Contains(joined, "SCAN c") {
		t.Errorf("query plan:\n%s\nwant a search of checks_target_checked_at without a sort", joined)
	}
}

func TestLinkRefs(t *testing.T) { forEachBackend(t, testLinkRefs) }

func testLinkRefs(t *testing.T) {
	db := MustOpen(t)
	runID := mustCreateRun(t, db)
	mustSave(t, db, runID, fullPage(url0), notFoundPage("https://example.org/gone"))
	refs, err := db.LinkRefs(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	links := fullPage(url0).Links
	if len(refs) != len(links) {
		t.Fatalf("got %d link refs, want %d", len(refs), len(links))
	}
	targets, err := db.Targets(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	targetIDs := map[string]int64{}
	for _, tr := range targets {
		targetIDs[tr.URL] = tr.ID
	}
	wantTarget := []string{"https://example.com/a", "https://example.net/b", pwidHref,
		"https://example.org/logo.png", "", "mailto:someone@example.org", ""}
	pageID := refs[0].PageID
	for i, r := range refs {
		l := links[i]
		_, frag, _ := strings.Cut(l.Href, "#")
		want := audit.LinkRef{LinkID: r.LinkID, PageID: pageID, PageURL: url0, TargetID: targetIDs[wantTarget[i]],
			Href: l.Href, Fragment: frag, Element: l.Element, Attr: l.Attr, Text: l.Text, Resource: l.Resource}
		if r != want || r.LinkID == 0 || (i > 0 && r.LinkID <= refs[i-1].LinkID) {
			t.Errorf("link %d = %+v\nwant %+v", i, r, want)
		}
	}
	if refs[0].Fragment != "sec" || !refs[3].Resource || refs[4].TargetID != 0 {
		t.Errorf("fixture assumptions broken: %+v", refs)
	}
}

func TestFindings_RoundTrip(t *testing.T) { forEachBackend(t, testFindings_RoundTrip) }

func testFindings_RoundTrip(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	runID := mustCreateRun(t, db)
	mustSave(t, db, runID, fullPage(url0))
	refs, err := db.LinkRefs(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	other := mustCreateRun(t, db)
	mustSave(t, db, other, fullPage(url0))
	otherRefs, err := db.LinkRefs(ctx, other)
	if err != nil {
		t.Fatal(err)
	}

	in := []audit.Finding{
		{RunID: runID, PageURL: url0, LinkID: refs[0].LinkID, Target: "https://example.com/a",
			Verdict: audit.VerdictFragmentMissing, Message: "no element with id " + hostileQuotes, Fragment: "sec"},
		{RunID: runID, PageURL: "https://example.org/" + hostileInject, Target: hostileNUL,
			Verdict: audit.VerdictNotFound, Message: hostileCtl},
		{RunID: runID, PageURL: url0, LinkID: refs[1].LinkID, Target: "https://example.net/b",
			Verdict: audit.VerdictGone, Message: "410 Gone"},
		{RunID: runID, PageURL: url0, LinkID: refs[0].LinkID, Target: "https://example.com/a",
			Verdict: audit.VerdictMoved, Message: "moved permanently"},
	}
	if err := db.SaveFindings(ctx, in); err != nil {
		t.Fatal(err)
	}
	got, err := db.Findings(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	// By page URL, then target, then save order.
	want := []audit.Finding{in[1], in[0], in[3], in[2]} // "https://example.org/'" < url0
	validTextDeep(want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Findings =\n%+v\nwant\n%+v", got, want)
	}
	if got := count(t, db, `SELECT count(*) FROM findings WHERE link_id IS NULL`); got != 1 {
		t.Errorf("findings without link = %d rows, want 1 (LinkID 0 stored as NULL)", got)
	}

	for name, bad := range map[string]audit.Finding{
		"UnknownLink":    {RunID: runID, LinkID: 999999, Verdict: audit.VerdictOK},
		"OtherRunsLink":  {RunID: runID, LinkID: otherRefs[0].LinkID, Verdict: audit.VerdictOK},
		"UnknownRunLink": {RunID: 999, LinkID: refs[0].LinkID, Verdict: audit.VerdictOK},
	} {
		err := db.SaveFindings(ctx, []audit.Finding{in[0], bad})
		if !errors.Is(err, audit.ErrNotFound) || !strings.HasPrefix(err.Error(), "save findings: ") {
			t.Errorf("%s: %v, want ErrNotFound", name, err)
		}
	}
	if got := count(t, db, `SELECT count(*) FROM findings`); got != len(in) {
		t.Errorf("findings rows = %d after failed batches, want %d", got, len(in))
	}
	if f, err := db.Findings(ctx, other); err != nil || f != nil {
		t.Errorf("Findings(other run) = %v, %v", f, err)
	}
}

func TestMaintenance_RoundTrip(t *testing.T) { forEachBackend(t, testMaintenance_RoundTrip) }

func testMaintenance_RoundTrip(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	runID := mustCreateRun(t, db)
	other := mustCreateRun(t, db)
	rec := func(run int64, src, tgt, repl string, status int) audit.Maintenance {
		return audit.Maintenance{RunID: run, Source: src, Target: tgt, Replacement: repl, Status: status}
	}
	first := []audit.Maintenance{
		rec(runID, "https://example.org/b", "https://old.example/x", "https://new.example/x", 301),
		rec(runID, "https://example.org/a", "https://old.example/y", "https://new.example/y?"+hostileInject, 308),
		rec(runID, "https://example.org/a", "https://old.example/x", "https://new.example/x", 301),
		rec(runID, "https://example.org/a", "https://old.example/y", "https://ignored.example/", 301), // duplicate in the batch
		rec(other, "https://example.org/a", "https://old.example/y", "https://other.example/", 308),   // other run
	}
	if err := db.SaveMaintenance(ctx, first); err != nil {
		t.Fatal(err)
	}
	// A later batch repeating a pair is ignored too.
	if err := db.SaveMaintenance(ctx, []audit.Maintenance{
		rec(runID, "https://example.org/b", "https://old.example/x", "https://later.example/", 308),
		rec(runID, "https://example.org/c"+hostileNUL, "https://old.example/z", "https://new.example/z", 301),
	}); err != nil {
		t.Fatal(err)
	}
	got, err := db.Maintenance(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	want := []audit.Maintenance{
		first[2], first[1], first[0],
		rec(runID, "https://example.org/c"+hostileNUL, "https://old.example/z", "https://new.example/z", 301),
	}
	validTextDeep(want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Maintenance =\n%+v\nwant\n%+v", got, want)
	}
	if got, err := db.Maintenance(ctx, other); err != nil || !reflect.DeepEqual(got, first[4:]) {
		t.Errorf("Maintenance(other) = %+v, %v", got, err)
	}
}

func TestVerdictCounts_TopBroken(t *testing.T) { forEachBackend(t, testVerdictCounts_TopBroken) }

func testVerdictCounts_TopBroken(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	runID := mustCreateRun(t, db)
	const (
		dead    = "https://example.com/dead"    // 404, linked from 3 pages, 4 links
		gone    = "https://example.com/gone"    // 410, 1 page
		slow    = "https://example.com/slow"    // timeout, 1 page, 2 links
		blocked = "https://example.com/blocked" // not broken
		fine    = "https://example.com/fine"
	)
	page := func(u string, hrefs ...string) *audit.Page {
		p := &audit.Page{Extraction: audit.Extraction{URL: u, Parsed: true}, Status: 200}
		for _, h := range hrefs {
			p.Links = append(p.Links, audit.Link{Element: "a", Attr: "href", Href: h, RawHref: h})
		}
		return p
	}
	mustSave(t, db, runID,
		page("https://example.org/1", dead, dead+"#frag", fine, slow, slow),
		page("https://example.org/2", dead, gone, blocked, fine),
		page("https://example.org/3", dead, fine),
	)
	// Another run linking the same target must not count.
	run0 := mustCreateRun(t, db)
	mustSave(t, db, run0, page("https://example.org/9", dead, dead, gone))

	targets, err := db.Targets(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int64{}
	for _, tr := range targets {
		ids[tr.URL] = tr.ID
	}
	var pageTarget int64 // a page's own URL, checked but linked from nowhere
	if err := db.read.QueryRow(`SELECT target_id FROM pages WHERE run_id = $1 AND url = 'https://example.org/3'`, runID).Scan(&pageTarget); err != nil {
		t.Fatal(err)
	}
	mustSaveChecks(t, db,
		audit.Check{RunID: runID, TargetID: ids[dead], Verdict: audit.VerdictNotFound, Status: 404},
		audit.Check{RunID: runID, TargetID: ids[gone], Verdict: audit.VerdictGone, Status: 410},
		audit.Check{RunID: runID, TargetID: ids[slow], Verdict: audit.VerdictTimeout},
		audit.Check{RunID: runID, TargetID: ids[blocked], Verdict: audit.VerdictBlocked, Status: 403},
		audit.Check{RunID: runID, TargetID: ids[fine], Verdict: audit.VerdictOK, Status: 200},
		audit.Check{RunID: runID, TargetID: pageTarget, Verdict: audit.VerdictServerError, Status: 503},
		audit.Check{RunID: run0, TargetID: ids[fine], Verdict: audit.VerdictNotFound, Status: 404},
	)

	counts, err := db.VerdictCounts(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	wantCounts := map[audit.Verdict]int{
		audit.VerdictNotFound: 1, audit.VerdictGone: 1, audit.VerdictTimeout: 1,
		audit.VerdictBlocked: 1, audit.VerdictOK: 1, audit.VerdictServerError: 1,
	}
	if !maps.Equal(counts, wantCounts) {
		t.Errorf("VerdictCounts = %v, want %v", counts, wantCounts)
	}

	top, err := db.TopBroken(ctx, runID, 0)
	if err != nil {
		t.Fatal(err)
	}
	wantTop := []audit.BrokenTarget{
		{URL: dead, Verdict: audit.VerdictNotFound, Status: 404, Pages: 3, Links: 4},
		{URL: gone, Verdict: audit.VerdictGone, Status: 410, Pages: 1, Links: 1},
		{URL: slow, Verdict: audit.VerdictTimeout, Status: 0, Pages: 1, Links: 2},
		{URL: "https://example.org/3", Verdict: audit.VerdictServerError, Status: 503},
	}
	if !reflect.DeepEqual(top, wantTop) {
		t.Errorf("TopBroken =\n%+v\nwant\n%+v", top, wantTop)
	}
	top, err = db.TopBroken(ctx, runID, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(top, wantTop[:2]) {
		t.Errorf("TopBroken(limit 2) = %+v", top)
	}
}

// TestChecks_Batcher drives SaveChecks through audit.Batcher, as the
// checking stage does: many producers, one committing goroutine.
func TestChecks_Batcher(t *testing.T) { forEachBackend(t, testChecks_Batcher) }

func testChecks_Batcher(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	const producers, each = 8, 50
	urls := make([]string, producers*each)
	for i := range urls {
		urls[i] = fmt.Sprintf("https://example.com/batch/%d", i)
	}
	runID, ids := linkedRun(t, db, urls...)
	w := audit.NewBatcher(ctx, func(ctx context.Context, checks []audit.Check) error {
		return db.SaveChecks(ctx, checks)
	}, audit.WriterOptions{BatchSize: 30, FlushInterval: 5 * time.Millisecond, QueueSize: 16})

	var wg sync.WaitGroup
	for g := range producers {
		wg.Go(func() {
			for i := g * each; i < (g+1)*each; i++ {
				w.Add(audit.Check{RunID: runID, TargetID: ids[urls[i]], URL: urls[i], Verdict: audit.VerdictOK, Words: i})
			}
		})
	}
	// Reads run while the batches commit.
	wg.Go(func() {
		for range 20 {
			if _, err := db.CheckedTargetIDs(ctx, runID); err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if w.Saved() != len(urls) {
		t.Errorf("Saved = %d, want %d", w.Saved(), len(urls))
	}
	checked, err := db.CheckedTargetIDs(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if len(checked) != len(urls) {
		t.Errorf("%d targets checked, want %d", len(checked), len(urls))
	}
}

// TestMigrate_FromV1 upgrades a database holding only migration 0001, built
// here with raw SQL, and checks that its rows survive.
//
// SQLite-only: it builds a schema-1 SQLite file by hand (PostgreSQL databases start at the current schema).
func TestMigrate_FromV1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v1.db")
	raw := rawDB(t, path, "_pragma=foreign_keys(1)")
	if _, err := raw.Exec(migrations()[0].sql); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`PRAGMA user_version = 1`,
		`INSERT INTO runs (id, started_at, status, mode, seeds, args, version)
			VALUES (7, '2024-01-02T03:04:05.000000006Z', 'complete', 'site', '["https://example.org/"]', '[]', 'v1')`,
		`INSERT INTO targets (id, url, host, scheme, first_seen_run, first_seen_at)
			VALUES (11, 'https://example.org/a', 'example.org', 'https', 7, '2024-01-02T03:04:05.000000006Z')`,
		`INSERT INTO pages (id, run_id, url, request_url, target_id, depth, status, content_type, charset,
			size, truncated, parsed, title, base, fetch_error, fetched_at, duration_ms)
			VALUES (3, 7, 'https://example.org/', 'https://example.org/', NULL, 0, 200, 'text/html', 'utf-8',
			100, 0, 1, 'Home', '', '', '2024-01-02T03:04:06.000000000Z', 15)`,
		`INSERT INTO links (page_id, run_id, ord, element, attr, href, raw_href, target_id, text, rel,
			resource, fragment, has_robust, has_mset)
			VALUES (3, 7, 0, 'a', 'href', 'https://example.org/a#top', '/a#top', 11, 'A', '', 0, 'top', 0, 0)`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := raw.Close(); err != nil {
		t.Fatal(err)
	}

	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := userVersion(t, db.write); got != latestVersion() || got < 2 {
		t.Errorf("user_version = %d, want %d", got, latestVersion())
	}
	r, err := db.Run(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != "v1" || r.Status != audit.RunComplete || r.StartedAt.Nanosecond() != 6 {
		t.Errorf("run after migration = %+v", r)
	}
	pages := mustPages(t, db, 7)
	if len(pages) != 1 || pages[0].Title != "Home" || len(pages[0].Links) != 1 || pages[0].Links[0].RawHref != "/a#top" {
		t.Errorf("pages after migration = %+v", pages)
	}
	// The new tables work on the old rows.
	mustSaveChecks(t, db, audit.Check{RunID: 7, TargetID: 11, URL: "https://example.org/a", Verdict: audit.VerdictOK})
	refs, err := db.LinkRefs(ctx, 7)
	if err != nil || len(refs) != 1 || refs[0].TargetID != 11 || refs[0].Fragment != "top" {
		t.Errorf("LinkRefs = %+v, %v", refs, err)
	}
	if err := db.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
}

// v1Fixture is a database written by linkrot with schema version 1. Every
// future migration must open it and keep its rows (TestMigrate_V1Fixture).
var v1Fixture = filepath.Join("..", "..", "testdata", "db", "v1.db")

// v1FixtureRun describes the run the fixture holds.
var v1FixtureRun = struct {
	id    int64
	stats audit.RunStats
}{1, audit.RunStats{Pages: 3, ErrorPages: 2, Links: 7, Targets: 5, RobustLinks: 3, MsetLinks: 1,
	Snapshots: 5, Identifiers: 2, PWIDs: 3, Diagnostics: 4, Redirects: 2}}

// TestWriteV1Fixture writes the v1 fixture: schema 0001 only, written by
// the store's own CreateRun and SavePages (which must still write only 0001
// tables). With LINKROT_WRITE_V1_FIXTURE=1 it regenerates the committed
// file; otherwise it writes a fresh copy and checks that it holds the same
// rows as the committed one.
//
// SQLite-only: it writes the SQLite fixture file.
func TestWriteV1Fixture(t *testing.T) {
	target := v1Fixture
	if os.Getenv("LINKROT_WRITE_V1_FIXTURE") != "1" {
		target = filepath.Join(t.TempDir(), "v1.db")
		defer func() { sameRows(t, v1Fixture, target) }()
	}
	ctx := context.Background()
	abs, err := filepath.Abs(target)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(abs + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
	write, err := sql.Open("sqlite", dsn(abs, "_txlock=immediate"))
	if err != nil {
		t.Fatal(err)
	}
	write.SetMaxOpenConns(1)
	if err := applyMigration(ctx, write, migrations()[0]); err != nil {
		t.Fatal(err)
	}
	read, err := sql.Open("sqlite", dsn(abs, "_pragma=query_only(1)"))
	if err != nil {
		t.Fatal(err)
	}
	db := &DB{path: abs, write: write, read: read}
	r := &audit.Run{StartedAt: time.Date(2024, 3, 1, 9, 59, 0, 0, time.UTC), Mode: "site",
		Seeds: []string{url0}, Args: []string{"crawl", url0}, Version: "v1-fixture"}
	if err := db.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	if r.ID != v1FixtureRun.id {
		t.Fatalf("run ID %d, want %d", r.ID, v1FixtureRun.id)
	}
	mustSave(t, db, r.ID, fullPage(url0), failedPage("https://example.org/down"), notFoundPage("https://example.org/gone"))
	if err := db.FinishRun(ctx, r.ID, audit.RunComplete, time.Date(2024, 3, 1, 10, 1, 0, 0, time.UTC), ""); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// One self-contained, compact file.
	raw := rawDB(t, abs, "")
	for _, q := range []string{`PRAGMA journal_mode = DELETE`, `PRAGMA page_size = 1024`, `VACUUM`} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if v := userVersion(t, raw); v != 1 {
		t.Fatalf("fixture has user_version %d", v)
	}
	if err := raw.Close(); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(abs)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes)", abs, info.Size())
}

// sameRows checks that two fixture databases have the same tables with the
// same row counts.
func sameRows(t *testing.T, committed, fresh string) {
	t.Helper()
	if t.Failed() {
		return
	}
	counts := func(path string) map[string]int {
		raw := rawDB(t, path, "")
		defer raw.Close()
		rows, err := raw.Query(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				t.Fatal(err)
			}
			names = append(names, n)
		}
		rows.Close()
		out := map[string]int{}
		for _, n := range names {
			var c int
			if err := raw.QueryRow(`SELECT count(*) FROM "` + n + `"`).Scan(&c); err != nil {
				t.Fatal(err)
			}
			out[n] = c
		}
		return out
	}
	copyTo := filepath.Join(t.TempDir(), "committed.db")
	b, err := os.ReadFile(committed)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(copyTo, b, 0o644); err != nil {
		t.Fatal(err)
	}
	want, got := counts(copyTo), counts(fresh)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("regenerated fixture differs from %s:\n got %v\nwant %v", committed, got, want)
	}
}

// TestMigrate_V1Fixture opens a copy of the committed version-1 database
// and checks that it is migrated to the latest version with its rows kept.
//
// SQLite-only: it migrates the committed SQLite fixture file.
func TestMigrate_V1Fixture(t *testing.T) {
	ctx := context.Background()
	src, err := os.Open(v1Fixture)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	path := filepath.Join(t.TempDir(), "v1.db")
	dst, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	raw := rawDB(t, path, "")
	if v := userVersion(t, raw); v != 1 {
		t.Fatalf("fixture has user_version %d, want 1", v)
	}
	raw.Close()

	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := userVersion(t, db.write); got != latestVersion() {
		t.Errorf("user_version = %d, want %d", got, latestVersion())
	}
	if err := db.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
	r, err := db.Run(ctx, v1FixtureRun.id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != "v1-fixture" || r.Status != audit.RunComplete || r.Mode != "site" ||
		!r.StartedAt.Equal(time.Date(2024, 3, 1, 9, 59, 0, 0, time.UTC)) {
		t.Errorf("run = %+v", r)
	}
	stats, err := db.RunStats(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if *stats != v1FixtureRun.stats {
		t.Errorf("RunStats = %+v\nwant %+v", *stats, v1FixtureRun.stats)
	}
	pages := mustPages(t, db, r.ID)
	if len(pages) != 3 || pages[0].URL != url0 || len(pages[0].Links) != 7 ||
		pages[0].Links[0].Robust == nil || len(pages[0].Links[0].Robust.Snapshots) != 2 ||
		!pages[0].FetchedAt.Equal(time.Date(2024, 3, 1, 10, 0, 0, 123456789, time.UTC)) {
		t.Errorf("pages of the fixture run changed: %+v", pages)
	}

	// Later stages work on the migrated rows.
	targets, err := db.Targets(ctx, r.ID)
	if err != nil || len(targets) != v1FixtureRun.stats.Targets {
		t.Fatalf("Targets = %+v, %v", targets, err)
	}
	var checks []audit.Check
	for _, tr := range targets {
		checks = append(checks, audit.Check{RunID: r.ID, TargetID: tr.ID, URL: tr.URL, Verdict: audit.VerdictOK})
	}
	mustSaveChecks(t, db, checks...)
	if got := mustChecks(t, db, r.ID); len(got) != len(targets) {
		t.Errorf("%d checks, want %d", len(got), len(targets))
	}
}

// benchCheck returns a check like the checker produces for a live 200 HTML
// target.
func benchCheck(runID, targetID int64, u string, i int) audit.Check {
	return audit.Check{
		RunID: runID, TargetID: targetID, URL: u,
		Verdict: audit.VerdictOK, Status: 200, FinalURL: u, Attempts: 1,
		Redirects: []audit.Redirect{{From: strings.Replace(u, "https:", "http:", 1), To: u, Status: 301}},
		Timings: audit.Timings{DNS: 3 * time.Millisecond, Connect: 20 * time.Millisecond,
			TLS: 40 * time.Millisecond, FirstByte: 120 * time.Millisecond, Total: 180 * time.Millisecond},
		CheckedAt: time.Now(),
		Headers: map[string]string{
			"Content-Type":   "text/html; charset=utf-8",
			"Content-Length": "23456",
			"Server":         "nginx",
			"Etag":           fmt.Sprintf(`"%x"`, i),
			"Last-Modified":  "Fri, 01 Mar 2024 10:00:00 GMT",
		},
		ContentType:  "text/html; charset=utf-8",
		ETag:         fmt.Sprintf(`"%x"`, i),
		LastModified: "Fri, 01 Mar 2024 10:00:00 GMT",
		SHA256:       "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		SimHash:      0xF0F0F0F0F0F0F0F0 ^ uint64(i),
		Words:        800,
	}
}

// benchTargets inserts n targets straight into the table and returns their
// IDs and URLs.
func benchTargets(tb testing.TB, db *DB, prefix string, n int) ([]int64, []string) {
	tb.Helper()
	if _, err := db.write.Exec(`
		WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i + 1 < $2)
		INSERT INTO targets (url, host, scheme, first_seen_at)
		SELECT 'https://bench.example/' || $1 || '/' || i, 'bench.example', 'https', '2024-01-01T00:00:00.000000000Z'
		FROM seq`, prefix, n); err != nil {
		tb.Fatal(err)
	}
	rows, err := db.read.Query(`SELECT id, url FROM targets WHERE url >= $1 AND url < $2 ORDER BY id`,
		"https://bench.example/"+prefix+"/", "https://bench.example/"+prefix+"0")
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	ids, urls := make([]int64, 0, n), make([]string, 0, n)
	for rows.Next() {
		var id int64
		var u string
		if err := rows.Scan(&id, &u); err != nil {
			tb.Fatal(err)
		}
		ids, urls = append(ids, id), append(urls, u)
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	if len(ids) != n {
		tb.Fatalf("inserted %d targets, want %d", len(ids), n)
	}
	return ids, urls
}

// BenchmarkSaveChecks measures SaveChecks on batches of 500 new checks.
func BenchmarkSaveChecks(b *testing.B) {
	const perBatch = 500
	ctx := context.Background()
	db := MustOpen(b)
	runID := mustCreateRun(b, db)
	ids, urls := benchTargets(b, db, "save", b.N*perBatch)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		batch := make([]audit.Check, perBatch)
		for j := range batch {
			k := i*perBatch + j
			batch[j] = benchCheck(runID, ids[k], urls[k], k)
		}
		b.StartTimer()
		if err := db.SaveChecks(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*perBatch)/b.Elapsed().Seconds(), "checks/s")
}

// BenchmarkPreviousChecks looks up 100,000 targets, each with a check in
// two earlier runs (one of them transient).
func BenchmarkPreviousChecks(b *testing.B) {
	const n, perBatch = 100_000, 500
	ctx := context.Background()
	db := MustOpen(b)
	r1, r2 := mustCreateRun(b, db), mustCreateRun(b, db)
	cur := mustCreateRun(b, db)
	ids, urls := benchTargets(b, db, "prev", n)
	for _, run := range []int64{r1, r2} {
		for lo := 0; lo < n; lo += perBatch {
			batch := make([]audit.Check, 0, perBatch)
			for k := lo; k < min(lo+perBatch, n); k++ {
				c := benchCheck(run, ids[k], urls[k], k)
				if run == r2 && k%2 == 0 {
					c.Verdict = audit.VerdictTimeout
				}
				batch = append(batch, c)
			}
			if err := db.SaveChecks(ctx, batch); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		got, err := db.PreviousChecks(ctx, cur, ids, 0, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		if len(got) != n {
			b.Fatalf("got %d previous checks, want %d", len(got), n)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "targets/s")
}

// TestWriterSQL_NoEphemeralIndex: the statements the writer runs for every
// check and finding build no temporary index per row. SQLite codes a CHECK
// constraint's IN list of more than two constants as an ephemeral index
// built again for every row written (21 inserts for the verdict list), which
// is why 0015 spells the verdict constraints as equalities. snapshots keeps
// its three-value IN list (unnamed, and rare rows).
func TestWriterSQL_NoEphemeralIndex(t *testing.T) {
	db := MustOpen(t)
	if db.dialect != dialectSQLite {
		t.Fatal("SQLite test")
	}
	for _, q := range []string{upsertFullCheckSQL, upsertCheckSQL, insertFindingSQL(true), saverSQL(true, false)[0],
		saverSQL(true, false)[1], saverSQL(true, false)[3], insEvidenceSQL} {
		args := make([]any, numParams(q))
		for i := range args {
			args[i] = 1
		}
		rows, err := db.write.Query("EXPLAIN "+q, args...)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			var (
				addr         int
				op           string
				p1, p2, p3   any
				p4, p5, note any
			)
			if err := rows.Scan(&addr, &op, &p1, &p2, &p3, &p4, &p5, &note); err != nil {
				t.Fatal(err)
			}
			if op == "OpenEphemeral" {
				n++
			}
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%d ephemeral tables opened by %.60s...", n, q)
		}
	}
}
