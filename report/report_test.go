package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/linkrot/linkrot/audit"
)

var update = flag.Bool("update", false, "rewrite golden files")

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func specAt(s string) audit.Time { return audit.NewTime(at(s)) }

// fullDataset is a run with every part a report shows, archive results
// included (which no store API writes yet).
func fullDataset() *Dataset {
	t0 := at("2024-06-01T10:00:00Z")
	robust := audit.Link{Element: "a", Attr: "href", Href: "https://ext.example/study", Text: "the study",
		Robust: &audit.Robust{OriginalURL: "https://ext.example/study", VersionDate: specAt("2019-06-01T12:00:00Z"), VersionDateOnly: true,
			VersionDateRaw: "2019-06-01", Snapshots: []audit.Snapshot{
				{URL: "https://archive.example/web/20190601120000/https://ext.example/study"},
				{URL: "https://archive.example/web/20150101000000/https://ext.example/study", Datetime: specAt("2015-01-01T00:00:00Z")},
			}}}
	mset := audit.Link{Element: "a", Attr: "href", Href: "https://ext.example/essay", Text: "an essay",
		Mset: &audit.Mset{Raw: "2018-03-10, https://mirror.example/essay memento", Temporal: []audit.Time{specAt("2018-03-10T12:00:00Z")},
			Copies: []audit.Copy{{URL: "https://mirror.example/essay"}}}}
	other := audit.Link{Element: "a", Attr: "href", Href: "https://ext.example/dataset", Text: "the dataset",
		Robust: &audit.Robust{OriginalURL: "https://ext.example/dataset", VersionDate: specAt("2022-09-01T12:00:00Z"),
			Snapshots: []audit.Snapshot{{URL: "https://archive.example/web/20220901120000/https://ext.example/dataset", Datetime: specAt("2022-09-01T12:00:00Z")}}},
		Diagnostics: []audit.Diagnostic{{Field: "data-versiondate", Code: "lenient-datetime", Message: "missing Z"}}}
	pages := []*audit.Page{
		{Extraction: audit.Extraction{URL: "https://site.example/", Title: "Home",
			Identifiers: []audit.Identifier{{URL: "https://doi.example/10.1/home", Rel: "cite-as", Source: "html"}}},
			Status: 200, FetchedAt: t0},
		{Extraction: audit.Extraction{URL: "https://site.example/refs", Title: "References",
			Diagnostics: []audit.Diagnostic{{Field: "link-header", Code: "invalid-url", Message: "cannot parse"}}},
			Status: 200, FetchedAt: t0.Add(time.Second)},
		{Extraction: audit.Extraction{URL: "https://site.example/old"}, Status: 0, FetchError: "connection refused", FetchedAt: t0.Add(2 * time.Second)},
	}
	links := []Link{
		{ID: 1, Page: 0, TargetID: 11, Link: audit.Link{Element: "a", Attr: "href", Href: "https://site.example/refs", Text: "References"}},
		{ID: 2, Page: 0, TargetID: 12, Link: audit.Link{Element: "a", Attr: "href", Href: "https://ext.example/gone", Text: "workshop"}},
		{ID: 3, Page: 1, TargetID: 12, Link: audit.Link{Element: "a", Attr: "href", Href: "https://ext.example/gone", Text: "the workshop again"}},
		{ID: 4, Page: 1, TargetID: 13, Link: robust},
		{ID: 5, Page: 1, TargetID: 14, Link: mset},
		{ID: 6, Page: 1, TargetID: 15, Link: other},
		{ID: 7, Page: 1, TargetID: 16, Link: audit.Link{Element: "img", Attr: "src", Href: "https://cdn.example/logo.png", Text: "logo", Resource: true}},
		{ID: 8, Page: 1, TargetID: 17, Link: audit.Link{Element: "a", Attr: "href", Href: "https://ext.example/moved", Text: "partner"}},
		{ID: 9, Page: 1, Link: audit.Link{Element: "a", Attr: "href", Href: "javascript:void(0)", Text: "menu"}},
		// A second link to the study, without Robust Links: it shares the
		// target of link 4, not its memento or drift.
		{ID: 10, Page: 0, TargetID: 13, Link: audit.Link{Element: "a", Attr: "href", Href: "https://ext.example/study", Text: "the study, again"}},
		{ID: 11, Page: 0, TargetID: 11, Link: audit.Link{Element: "a", Attr: "href", Href: "https://site.example/refs#methods", Text: "our methods"}},
	}
	targets := []Target{
		{11, "https://site.example/refs", "site.example"}, {12, "https://ext.example/gone", "ext.example"},
		{13, "https://ext.example/study", "ext.example"}, {14, "https://ext.example/essay", "ext.example"},
		{15, "https://ext.example/dataset", "ext.example"}, {16, "https://cdn.example/logo.png", "cdn.example"},
		{17, "https://ext.example/moved", "ext.example"},
	}
	ok := func(id int64, u string) audit.Check {
		return audit.Check{RunID: 3, TargetID: id, URL: u, Verdict: audit.VerdictOK, Status: 200, Attempts: 1,
			Timings: audit.Timings{Total: 80 * time.Millisecond}, CheckedAt: t0.Add(time.Minute)}
	}
	gone := ok(12, "https://ext.example/gone")
	gone.Verdict, gone.Status = audit.VerdictGone, 410
	moved := ok(17, "https://ext.example/moved")
	moved.Verdict, moved.Replacement = audit.VerdictMoved, "https://ext.example/new"
	moved.Redirects = []audit.Redirect{{From: "https://ext.example/moved", To: "https://ext.example/new", Status: 308}}
	timeout := audit.Check{RunID: 3, TargetID: 16, URL: "https://cdn.example/logo.png", Verdict: audit.VerdictTimeout, ErrorClass: "timeout",
		Attempts: 3, Reason: "no answer in 30s", CheckedAt: t0.Add(time.Minute)}
	return &Dataset{
		Run: audit.Run{ID: 3, StartedAt: t0, FinishedAt: t0.Add(90 * time.Second), Status: audit.RunComplete, Mode: "site",
			Seeds: []string{"https://site.example/"}, Version: "test"},
		Stats:   audit.RunStats{Pages: 3, ErrorPages: 1, Links: 11, Targets: 7, RobustLinks: 2, MsetLinks: 1, Snapshots: 4, Identifiers: 1, Diagnostics: 2},
		Pages:   pages,
		Links:   links,
		Targets: targets,
		Checks: []audit.Check{ok(11, "https://site.example/refs"), gone, ok(13, "https://ext.example/study"), ok(14, "https://ext.example/essay"),
			ok(15, "https://ext.example/dataset"), timeout, moved},
		Findings: []audit.Finding{
			{RunID: 3, PageURL: "https://site.example/", LinkID: 2, Target: "https://ext.example/gone", Verdict: audit.VerdictGone, Message: "gone (HTTP 410)"},
			{RunID: 3, PageURL: "https://site.example/refs", LinkID: 3, Target: "https://ext.example/gone", Verdict: audit.VerdictGone, Message: "gone (HTTP 410)"},
			{RunID: 3, PageURL: "https://site.example/refs", LinkID: 7, Target: "https://cdn.example/logo.png", Verdict: audit.VerdictTimeout, Message: "no answer in 30s"},
			{RunID: 3, PageURL: "https://site.example/", LinkID: 11, Target: "https://site.example/refs", Verdict: audit.VerdictFragmentMissing,
				Message: `the page has no element with id "methods"`, Fragment: "methods"},
		},
		Fixes: []audit.Maintenance{{RunID: 3, Source: "https://site.example/refs", Target: "https://ext.example/moved", Replacement: "https://ext.example/new", Status: 308}},
		SnapshotChecks: []audit.SnapshotCheck{
			{RunID: 3, LinkID: 4, Source: "versionurl", Declared: "https://archive.example/web/20190601120000/https://ext.example/study",
				URL: "https://archive.example/web/20190601120000/https://ext.example/study", Verdict: audit.SnapshotOK, Status: 200,
				MementoDatetime: at("2019-06-01T12:00:00Z"), DeclaredDatetime: at("2019-06-01T12:00:00Z"), DeclaredDateOnly: true,
				Original: "https://ext.example/study", CheckedAt: t0.Add(2 * time.Minute)},
			{RunID: 3, LinkID: 4, Source: "versionurl", Declared: "https://archive.example/web/20150101000000/https://ext.example/study",
				URL: "https://archive.example/web/20150101000000/https://ext.example/study", Verdict: audit.SnapshotMissing, Status: 404,
				Reason: "the archive has no memento", DeclaredDatetime: at("2015-01-01T00:00:00Z"), CheckedAt: t0.Add(2 * time.Minute)},
			{RunID: 3, LinkID: 5, Source: "mset", Declared: "https://mirror.example/essay", URL: "https://mirror.example/essay",
				Verdict: audit.NotAMemento, Status: 200, Reason: "no Memento-Datetime", CheckedAt: t0.Add(2 * time.Minute)},
			{RunID: 3, LinkID: 6, Source: "versionurl", Declared: "https://archive.example/web/20220901120000/https://ext.example/dataset",
				URL: "https://archive.example/web/20220901120000/https://ext.example/dataset", Verdict: audit.SnapshotOK, Status: 200,
				MementoDatetime: at("2022-09-03T08:00:00Z"), DeclaredDatetime: at("2022-09-01T12:00:00Z"), DatetimeMismatch: true,
				DeclaredDelta: 44 * time.Hour, Original: "https://ext.example/press", OriginalMismatch: true, CheckedAt: t0.Add(2 * time.Minute)},
		},
		Mementos: []audit.Memento{
			{RunID: 3, LinkID: 2, TargetID: 12, Archive: "wayback", Wanted: at("2024-01-01T00:00:00Z"), WantedFrom: "first-seen",
				URL: "https://archive.example/web/20231230000000/https://ext.example/gone", Datetime: at("2023-12-30T00:00:00Z"),
				Distance: 48 * time.Hour, Representative: true, Count: 12, First: at("2010-01-01T00:00:00Z"), Last: at("2023-12-30T00:00:00Z"), CheckedAt: t0},
			{RunID: 3, LinkID: 5, TargetID: 14, Archive: "wayback", Wanted: at("2018-03-10T12:00:00Z"), WantedFrom: "mset",
				URL: "https://archive.example/web/20180301000000/https://ext.example/essay", Datetime: at("2018-03-01T00:00:00Z"),
				Distance: 228 * time.Hour, Representative: true, CheckedAt: t0},
			{RunID: 3, LinkID: 4, TargetID: 13, Archive: "timetravel", Wanted: at("2019-06-01T12:00:00Z"), WantedFrom: "versiondate",
				Error: "no memento", CheckedAt: t0},
			{RunID: 3, LinkID: 4, TargetID: 13, Archive: "wayback", Wanted: at("2019-06-01T12:00:00Z"), WantedFrom: "versiondate",
				URL: "https://archive.example/web/20190601120000/https://ext.example/study", Datetime: at("2019-06-01T12:00:00Z"),
				Representative: true, CheckedAt: t0},
			// A target-level lookup (LinkID 0), not tied to one link.
			{RunID: 3, TargetID: 15, Archive: "wayback", Wanted: at("2024-01-01T00:00:00Z"), WantedFrom: "first-seen",
				URL: "https://archive.example/web/20231201000000/https://ext.example/dataset", Datetime: at("2023-12-01T00:00:00Z"),
				Distance: 744 * time.Hour, Representative: false, CheckedAt: t0},
		},
		Drifts: []audit.Drift{
			{RunID: 3, LinkID: 4, TargetID: 13, Kind: "memento", TextMeasured: true, ReferenceURL: "https://archive.example/web/20190601120000id_/https://ext.example/study",
				ReferenceTime: at("2019-06-01T12:00:00Z"), LiveURL: "https://ext.example/study", SimHashDistance: 0, Jaccard: 1, Dice: 1, Cosine: 1,
				WordsReference: 300, WordsLive: 300, Band: audit.BandUnchanged, MeasuredAt: t0},
			{RunID: 3, LinkID: 5, TargetID: 14, Kind: "memento", TextMeasured: true, ReferenceURL: "https://archive.example/web/20180301000000id_/https://ext.example/essay",
				ReferenceTime: at("2018-03-01T00:00:00Z"), LiveURL: "https://ext.example/essay", SimHashDistance: 41, Jaccard: 0.01, Dice: 0.02, Cosine: 0.05,
				WordsReference: 800, WordsLive: 120, WordChange: -0.85, Band: audit.BandOffTopic,
				ExcerptReference: "Restoring coral reefs, one fragment at a time…", ExcerptLive: "Spring sale: 30% off garden furniture…", MeasuredAt: t0},
			{RunID: 3, TargetID: 15, Kind: "first-seen", ReferenceURL: "https://ext.example/dataset", ReferenceTime: at("2024-01-01T00:00:00Z"),
				LiveURL: "https://ext.example/dataset", SimHashDistance: 9, Jaccard: 0.7, Dice: 0.82, Cosine: 0.91, WordsReference: 500, WordsLive: 540,
				WordChange: 0.08, Band: audit.BandMinor, MeasuredAt: t0},
			{RunID: 3, LinkID: 1, TargetID: 11, Kind: "memento", TextMeasured: true, ReferenceURL: "https://site.example/refs", LiveURL: "https://site.example/refs",
				SimHashDistance: 20, Jaccard: 0.3, Dice: 0.46, Cosine: math.NaN(), WordsReference: 200, WordsLive: 90, WordChange: -0.55,
				Band: audit.BandMajor, MeasuredAt: t0},
		},
		IdentifierChecks: []audit.IdentifierCheck{
			{RunID: 3, AccessURL: "https://site.example/", Identifier: "https://doi.example/10.1/home", Rel: "cite-as", OwnPage: true,
				Resolves: true, LeadsBack: false, Status: 200, Reason: "the identifier resolves to another page", CheckedAt: t0},
			{RunID: 3, AccessURL: "https://ext.example/dataset", Identifier: "https://doi.example/10.2/dataset", Rel: "identifier",
				Resolves: true, LeadsBack: true, Status: 302, How: "redirect", CheckedAt: t0},
		},
		Suggestions: []audit.Suggestion{
			{RunID: 3, LinkID: 2, PageURL: "https://site.example/", Href: "https://ext.example/gone", Text: "workshop", Reason: "broken-with-memento",
				OriginalURL: "https://ext.example/gone", VersionDate: at("2023-12-30T00:00:00Z"),
				VersionURL: "https://archive.example/web/20231230000000/https://ext.example/gone",
				HTML:       `<a href="https://ext.example/gone" data-originalurl="https://ext.example/gone" data-versiondate="2023-12-30" data-versionurl="https://archive.example/web/20231230000000/https://ext.example/gone">workshop</a>`},
		},
		Runs: []RunSummary{
			{ID: 1, StartedAt: at("2024-04-01T10:00:00Z"), Status: audit.RunComplete, Pages: 3, Links: 9, Checked: 7, Broken: 0, Drifted: 0},
			{ID: 2, StartedAt: at("2024-05-01T10:00:00Z"), Status: audit.RunComplete, Pages: 3, Links: 9, Checked: 7, Broken: 1, Drifted: 1},
			{ID: 3, StartedAt: t0, Status: audit.RunComplete, Pages: 3, Links: 9, Checked: 7, Broken: 2, Drifted: 2},
		},
		History: []TargetHistory{
			{TargetID: 12, FirstSeen: at("2024-04-01T10:00:00Z"), FirstSeenRun: 1, FirstBroken: at("2024-05-01T10:01:00Z"), FirstBrokenRun: 2,
				LastOK: at("2024-04-01T10:01:00Z"), LastOKRun: 1, Tracked: true, Confirmed: true, ConfirmedAt: t0.Add(time.Minute), ConfirmedRun: 3,
				FailingSince: at("2024-05-01T10:01:00Z"), FailingSinceRun: 2, FailedRuns: 2, Checks: []HistoryEntry{
					{1, at("2024-04-01T10:01:00Z"), audit.VerdictOK, 200}, {2, at("2024-05-01T10:01:00Z"), audit.VerdictNotFound, 404},
					{3, t0.Add(time.Minute), audit.VerdictGone, 410}}},
		},
		Since: &audit.RunDiff{From: 2, To: 3, DriftAvailable: true,
			NewBroken: []audit.Change{{TargetID: 16, URL: "https://cdn.example/logo.png", Verdict: audit.VerdictTimeout,
				Previous: audit.VerdictOK, Pages: 1}},
			NewlyConfirmed: []audit.Change{{TargetID: 12, URL: "https://ext.example/gone", Verdict: audit.VerdictGone, Status: 410,
				Previous: audit.VerdictNotFound, Pages: 2}},
			Recovered: []audit.Change{{TargetID: 13, URL: "https://ext.example/study", Verdict: audit.VerdictOK, Status: 200,
				Previous: audit.VerdictTimeout, Pages: 2}},
			NewlyDrifted: []audit.Change{{TargetID: 14, URL: "https://ext.example/essay", Verdict: audit.VerdictOK, Status: 200,
				Band: audit.BandOffTopic, PreviousBand: audit.BandMinor, Pages: 1}},
			NewlyMoved: []audit.Change{{TargetID: 17, URL: "https://ext.example/moved", Verdict: audit.VerdictMoved, Status: 200,
				Previous: audit.VerdictOK, Replacement: "https://ext.example/new", Pages: 1}},
		},
		GeneratedAt: at("2024-06-01T12:00:00Z"),
		Generator:   "linkrot test",
	}
}

// TestWrite_Golden renders the full dataset (archive results included) in
// the formats whose output depends on them.
func TestWrite_Golden(t *testing.T) {
	for _, f := range []struct {
		format Format
		file   string
	}{{HTML, "dataset.html"}, {JSON, "dataset.json"}, {CSV, "dataset.csv"}, {SARIF, "dataset.sarif"}} {
		t.Run(string(f.format), func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, f.format, fullDataset()); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("..", "testdata", "golden", f.file)
			if *update {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("output differs from %s; run go test ./report -run Golden -update and review the diff", golden)
			}
		})
	}
}

// TestWriteJSON_Schema validates the JSON output of the full dataset, of
// an empty one and the command's golden file against
// testdata/report.schema.json.
func TestWriteJSON_Schema(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "report.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	// Strict: every key the writer emits must be documented in the
	// schema, although the schema lets consumers expect more.
	v := &validator{root: schema, strict: true}
	check := func(name string, doc []byte) {
		var data any
		dec := json.NewDecoder(bytes.NewReader(doc))
		dec.UseNumber()
		if err := dec.Decode(&data); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, e := range v.validate("$", data, schema) {
			t.Errorf("%s: %s", name, e)
		}
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, fullDataset()); err != nil {
		t.Fatal(err)
	}
	check("full dataset", buf.Bytes())
	var ci bytes.Buffer
	if err := WriteJSON(&ci, ciDataset()); err != nil {
		t.Fatal(err)
	}
	check("dataset with positions", ci.Bytes())
	if !bytes.Contains(ci.Bytes(), []byte(`"file": "docs/index.md"`)) || !bytes.Contains(ci.Bytes(), []byte(`"column": 6`)) {
		t.Errorf("JSON links lack their positions")
	}
	// Every section of the schema is exercised by the full dataset.
	var doc map[string]any
	json.Unmarshal(buf.Bytes(), &doc)
	for _, k := range []string{"pages", "targets", "links", "findings", "fixes", "snapshot_checks", "mementos", "drifts", "identifier_checks", "suggestions", "runs"} {
		if arr, _ := doc[k].([]any); len(arr) == 0 {
			t.Errorf("full dataset has no %s: the schema test does not cover them", k)
		}
	}
	if doc["schema_version"] != float64(SchemaVersion) {
		t.Errorf("schema_version = %v", doc["schema_version"])
	}
	buf.Reset()
	if err := WriteJSON(&buf, &Dataset{}); err != nil {
		t.Fatal(err)
	}
	check("empty dataset", buf.Bytes())
	golden, err := os.ReadFile(filepath.Join("..", "testdata", "golden", "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	check("golden report.json", golden)
	// New fields may appear within a schema version: a document with a
	// key the schema does not know is still valid (not strict).
	var doc2 map[string]any
	json.Unmarshal(buf.Bytes(), &doc2)
	doc2["a_future_field"] = true
	future, _ := json.Marshal(doc2)
	var data any
	dec := json.NewDecoder(bytes.NewReader(future))
	dec.UseNumber()
	dec.Decode(&data)
	if errs := (&validator{root: schema}).validate("$", data, schema); len(errs) > 0 {
		t.Errorf("a document with an unknown field is invalid: %v", errs)
	}
}

// TestReportSchema_Documented checks that the schema describes every
// object and field, lists the values of the enumerated strings, and lets
// objects gain fields within a schema version (no additionalProperties:
// false).
func TestReportSchema_Documented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "report.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	var walk func(path string, s map[string]any)
	walk = func(path string, s map[string]any) {
		if d, _ := s["description"].(string); d == "" {
			t.Errorf("%s: no description", path)
		}
		if ap, ok := s["additionalProperties"].(bool); ok && !ap {
			t.Errorf("%s: additionalProperties false forbids the fields a schema version may add", path)
		}
		props, _ := s["properties"].(map[string]any)
		for k, p := range props {
			walk(path+"."+k, p.(map[string]any))
		}
		if items, ok := s["items"].(map[string]any); ok && items["properties"] != nil {
			walk(path+"[]", items)
		}
	}
	walk("$", schema)
	for name, d := range schema["$defs"].(map[string]any) {
		walk("$defs."+name, d.(map[string]any))
	}
	prop := func(path ...string) map[string]any {
		s := schema
		for _, p := range path {
			if p == "[]" {
				s = s["items"].(map[string]any)
				continue
			}
			s = s["properties"].(map[string]any)[p].(map[string]any)
		}
		return s
	}
	for _, e := range []struct {
		path []string
		want []string
	}{
		{[]string{"drifts", "[]", "kind"}, []string{driftMemento, driftFirstSeen}},
		{[]string{"drifts", "[]", "band"}, []string{audit.BandUnchanged, audit.BandMinor, audit.BandMajor, audit.BandOffTopic}},
		{[]string{"snapshot_checks", "[]", "verdict"}, []string{string(audit.SnapshotOK), string(audit.SnapshotMissing), string(audit.SnapshotError), string(audit.NotAMemento)}},
		{[]string{"snapshot_checks", "[]", "source"}, []string{"versionurl", "mset", "pwid"}},
		{[]string{"mementos", "[]", "wanted_from"}, []string{"versiondate", "mset", "first-seen"}},
		{[]string{"suggestions", "[]", "reason"}, []string{"no-robustness-data", "broken-with-memento", "use-identifier"}},
	} {
		got := asStrings(prop(e.path...)["enum"])
		sort.Strings(got)
		want := slices.Clone(e.want)
		sort.Strings(want)
		if !slices.Equal(got, want) {
			t.Errorf("%v: enum %v, want %v", e.path, got, want)
		}
	}
	var verdicts []string
	for _, v := range verdictList {
		verdicts = append(verdicts, string(v))
	}
	if got := asStrings(schema["$defs"].(map[string]any)["verdict"].(map[string]any)["enum"]); !slices.Equal(got, verdicts) {
		t.Errorf("verdict enum %v, want %v", got, verdicts)
	}
	for _, k := range []string{"0 for a target-level"} {
		if d := prop("mementos", "[]", "link_id")["description"].(string) + prop("drifts", "[]", "link_id")["description"].(string); !strings.Contains(d, k) {
			t.Errorf("link_id descriptions do not say what %q means: %s", k, d)
		}
	}
}

// validator checks a document against the subset of JSON Schema 2020-12
// that report.schema.json uses: type, const, enum, anyOf, properties,
// required, additionalProperties (false or a schema), items and $ref to
// $defs. When strict, a key an object's properties do not list is an error
// even where the schema allows it (so every field written is documented).
type validator struct {
	root   map[string]any
	strict bool
}

func (v *validator) validate(path string, data any, s map[string]any) []string {
	if ref, ok := s["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/$defs/")
		def, ok := v.root["$defs"].(map[string]any)[name].(map[string]any)
		if !ok {
			return []string{path + ": unknown $ref " + ref}
		}
		return v.validate(path, data, def)
	}
	var errs []string
	if alts, ok := s["anyOf"].([]any); ok {
		match := false
		for _, a := range alts {
			match = match || len(v.validate(path, data, a.(map[string]any))) == 0
		}
		if !match {
			errs = append(errs, fmt.Sprintf("%s: %v matches no anyOf branch", path, data))
		}
	}
	if c, ok := s["const"]; ok && fmt.Sprint(c) != fmt.Sprint(data) {
		errs = append(errs, fmt.Sprintf("%s: %v is not the constant %v", path, data, c))
	}
	if e, ok := s["enum"].([]any); ok {
		found := false
		for _, x := range e {
			found = found || fmt.Sprint(x) == fmt.Sprint(data)
		}
		if !found {
			errs = append(errs, fmt.Sprintf("%s: %v not in %v", path, data, e))
		}
	}
	if t, ok := s["type"]; ok {
		var types []string
		switch t := t.(type) {
		case string:
			types = []string{t}
		case []any:
			for _, x := range t {
				types = append(types, x.(string))
			}
		}
		match := false
		for _, ty := range types {
			match = match || typeIs(data, ty)
		}
		if !match {
			return append(errs, fmt.Sprintf("%s: %T is not %v", path, data, types))
		}
	}
	switch d := data.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		for _, r := range asStrings(s["required"]) {
			if _, ok := d[r]; !ok {
				errs = append(errs, path+": missing required "+r)
			}
		}
		keys := make([]string, 0, len(d))
		for k := range d {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if ps, ok := props[k].(map[string]any); ok {
				errs = append(errs, v.validate(path+"."+k, d[k], ps)...)
				continue
			}
			switch ap := s["additionalProperties"].(type) {
			case bool:
				if !ap || v.strict {
					errs = append(errs, path+": undocumented key "+k)
				}
			case map[string]any:
				errs = append(errs, v.validate(path+"."+k, d[k], ap)...)
			default:
				if v.strict && props != nil {
					errs = append(errs, path+": undocumented key "+k)
				}
			}
		}
	case []any:
		if items, ok := s["items"].(map[string]any); ok {
			for i, x := range d {
				errs = append(errs, v.validate(path+"["+strconv.Itoa(i)+"]", x, items)...)
			}
		}
	}
	return errs
}

func asStrings(x any) []string {
	var out []string
	if a, ok := x.([]any); ok {
		for _, s := range a {
			out = append(out, s.(string))
		}
	}
	return out
}

func typeIs(data any, ty string) bool {
	switch ty {
	case "null":
		return data == nil
	case "string":
		_, ok := data.(string)
		return ok
	case "boolean":
		_, ok := data.(bool)
		return ok
	case "object":
		_, ok := data.(map[string]any)
		return ok
	case "array":
		_, ok := data.([]any)
		return ok
	case "number":
		_, ok := data.(json.Number)
		return ok
	case "integer":
		n, ok := data.(json.Number)
		if !ok {
			return false
		}
		_, err := n.Int64()
		return err == nil
	}
	return false
}

// TestWriteHTML_HostileArchiveAnswers puts script payloads in what
// archives and drift measurement answered (memento URLs, originals,
// excerpts, suggestion snippets) and checks they stay inert.
func TestWriteHTML_HostileArchiveAnswers(t *testing.T) {
	const (
		p1 = `<script>alert(1)</script>`
		p2 = `"><img src=x onerror=alert(1)>`
		p3 = `</script><script>alert(1)</script>`
		js = `javascript:alert(1)`
	)
	ds := fullDataset()
	ds.Mementos[0].URL = js
	ds.Mementos[0].Archive = p1
	ds.SnapshotChecks[3].Original = p2
	ds.SnapshotChecks[3].Reason = p3
	ds.SnapshotChecks[3].FinalURL = js
	ds.Drifts[1].ExcerptLive = p3 + p2
	ds.Drifts[1].LiveURL = js
	ds.Suggestions[0].HTML = `<a href="` + js + `">` + p1 + `</a>`
	ds.IdentifierChecks[0].Identifier = js
	ds.IdentifierChecks[0].Reason = p2
	ds.Run.Seeds = []string{js}
	ds.Since.NewBroken[0].URL = p1 + js
	ds.Since.NewlyMoved[0].Replacement = js
	ds.Since.Recovered[0].URL = p3 // server-rendered text: escaped, checked by the tokenizer below
	ds.Findings[3].Fragment = p3
	ds.Findings[3].Message = p2
	ds.Pages[0].Title = p3
	ds.Generator = p1
	var buf bytes.Buffer
	if err := WriteHTML(&buf, ds); err != nil {
		t.Fatal(err)
	}
	doc := buf.String()
	data := regexp.MustCompile(`(?s)<script type="application/json" id="report-data">(.*?)</script>`)
	markup := data.ReplaceAllString(doc, "")
	for _, p := range []string{p1, p2, p3, "onerror="} {
		if strings.Contains(markup, p) {
			t.Errorf("markup contains %q unescaped", p)
		}
	}
	if m := data.FindStringSubmatch(doc); m == nil || strings.ContainsAny(m[1], "<>") {
		t.Errorf("data block missing or not escaped for the script context")
	}
	if n := strings.Count(doc, "<script"); n != 2 {
		t.Errorf("%d <script> elements, want 2", n)
	}
	z := html.NewTokenizer(strings.NewReader(doc))
	for tt := z.Next(); tt != html.ErrorToken; tt = z.Next() {
		tok := z.Token()
		for _, a := range tok.Attr {
			k, v := strings.ToLower(a.Key), strings.ToLower(strings.TrimSpace(a.Val))
			if strings.HasPrefix(k, "on") || k == "style" {
				t.Errorf("<%s %s=%q>", tok.Data, a.Key, a.Val)
			}
			if (k == "href" || k == "src") && strings.HasPrefix(v, "javascript:") {
				t.Errorf("<%s %s=%q>: javascript: link", tok.Data, a.Key, a.Val)
			}
		}
	}
}

// TestJW_String checks the data writer against encoding/json and that
// nothing in its output can end a script element.
func TestJW_String(t *testing.T) {
	for _, s := range []string{"", "plain", `"quoted" \back`, "</script><!--", "a\x00b\x1f\x7f", "\u2028\u2029", "héllo ✓", "bad\xffutf8", "&amp;"} {
		w := &jw{}
		w.str(s)
		var got string
		if err := json.Unmarshal(w.b, &got); err != nil {
			t.Errorf("%q: invalid JSON %s: %v", s, w.b, err)
			continue
		}
		want := strings.ToValidUTF8(s, "\ufffd")
		if got != want {
			t.Errorf("%q: round trip gave %q", s, got)
		}
		if bytes.ContainsAny(w.b, "<>&") || bytes.Contains(w.b, []byte("\u2028")) {
			t.Errorf("%q: output %s has characters unsafe in a script", s, w.b)
		}
	}
}

func TestParseFormat(t *testing.T) {
	for _, s := range []string{"html", "json", "csv", "junit", "markdown", "sarif", "md", "xml"} {
		if _, err := ParseFormat(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	if _, err := ParseFormat("pdf"); err == nil {
		t.Error("pdf accepted")
	}
}

func TestWriteDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "report")
	path, err := WriteDir(dir, fullDataset())
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(dir, IndexFile) {
		t.Errorf("path = %s", path)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		t.Errorf("report directory holds %v (%v), want index.html alone", entries, err)
	}
	if err := WriteFile(filepath.Join(dir, "sub", "x.json"), JSON, fullDataset()); err == nil {
		t.Error("WriteFile into a missing directory succeeded")
	}
}

// TestCSP checks that the policy's hashes are those of the inline style
// and script the report contains.
func TestCSP(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteHTML(&buf, fullDataset()); err != nil {
		t.Fatal(err)
	}
	doc := buf.String()
	style := regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindStringSubmatch(doc)
	script := regexp.MustCompile(`(?s)<script>(.*?)</script>`).FindStringSubmatch(doc)
	if style == nil || script == nil {
		t.Fatal("no inline style or script")
	}
	csp := ContentSecurityPolicy()
	for _, want := range []string{"default-src 'none'", "style-src " + hashSource(style[1]), "script-src " + hashSource(script[1])} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	// The report has no images: nothing, not even data: URLs, may load.
	for _, bad := range []string{"unsafe", "img-src", "data:", "*"} {
		if strings.Contains(csp, bad) {
			t.Errorf("CSP %q allows more than the report's own code (%q)", csp, bad)
		}
	}
	if strings.Contains(doc, "<img") {
		t.Error("the report has an <img> element, which the CSP blocks")
	}
}

// bigDataset makes a run of n links over n/100 pages and n/2 targets: a
// tenth broken, a fifth with Robust Links, with history and drift.
func bigDataset(n int) *Dataset {
	ds := fullDataset()
	ds.Pages, ds.Links, ds.Targets, ds.Checks, ds.Findings = nil, nil, nil, nil, nil
	ds.SnapshotChecks, ds.Mementos, ds.Drifts, ds.Suggestions, ds.History = nil, nil, nil, nil, nil
	nt := n / 2
	t0 := ds.Run.StartedAt
	for i := range nt {
		u := "https://host" + strconv.Itoa(i%300) + ".example/path/to/article-" + strconv.Itoa(i) + ".html"
		ds.Targets = append(ds.Targets, Target{ID: int64(i + 1), URL: u, Host: "host" + strconv.Itoa(i%300) + ".example"})
		c := audit.Check{RunID: 3, TargetID: int64(i + 1), URL: u, Verdict: audit.VerdictOK, Status: 200, Attempts: 1,
			Timings: audit.Timings{Total: time.Duration(i%500) * time.Millisecond}, CheckedAt: t0}
		if i%10 == 0 {
			c.Verdict, c.Status = audit.VerdictNotFound, 404
		}
		ds.Checks = append(ds.Checks, c)
		ds.History = append(ds.History, TargetHistory{TargetID: int64(i + 1), FirstSeen: t0.Add(-720 * time.Hour), FirstSeenRun: 1,
			Checks: []HistoryEntry{{1, t0.Add(-720 * time.Hour), audit.VerdictOK, 200}, {2, t0.Add(-360 * time.Hour), audit.VerdictOK, 200}, {3, t0, c.Verdict, c.Status}}})
		if i%50 == 0 {
			ds.Drifts = append(ds.Drifts, audit.Drift{RunID: 3, TargetID: int64(i + 1), Kind: "first-seen", ReferenceURL: u, LiveURL: u,
				SimHashDistance: i % 64, Jaccard: 0.5, Dice: 0.6, Cosine: 0.7, WordsReference: 400, WordsLive: 380, WordChange: -0.05, Band: audit.BandMinor})
		}
	}
	for p := range n / 100 {
		ds.Pages = append(ds.Pages, &audit.Page{Extraction: audit.Extraction{URL: "https://site.example/articles/" + strconv.Itoa(p) + ".html",
			Title: "Article number " + strconv.Itoa(p)}, Status: 200, FetchedAt: t0})
	}
	for i := range n {
		ti := (i * 7919) % nt
		l := Link{ID: int64(i + 1), Page: i / 100, TargetID: int64(ti + 1),
			Link: audit.Link{Element: "a", Attr: "href", Href: ds.Targets[ti].URL, Text: "a link to article " + strconv.Itoa(ti)}}
		if i%5 == 0 {
			l.Robust = &audit.Robust{OriginalURL: l.Href, VersionDate: specAt("2020-01-01T12:00:00Z"),
				Snapshots: []audit.Snapshot{{URL: "https://archive.example/web/20200101120000/" + l.Href}}}
		}
		ds.Links = append(ds.Links, l)
		if ti%10 == 0 {
			ds.Findings = append(ds.Findings, audit.Finding{RunID: 3, PageURL: ds.Pages[i/100].URL, LinkID: l.ID, Target: l.Href,
				Verdict: audit.VerdictNotFound, Message: "not-found (HTTP 404)"})
		}
	}
	ds.Stats = audit.RunStats{Pages: len(ds.Pages), Links: n, Targets: nt}
	return ds
}

// BenchmarkWriteHTML_100k renders the HTML report of a run with 100,000
// links (go test -run=^$ -bench=WriteHTML -benchmem ./report).
func BenchmarkWriteHTML_100k(b *testing.B) {
	ds := bigDataset(100_000)
	var size int
	b.ResetTimer()
	for b.Loop() {
		var buf bytes.Buffer
		if err := WriteHTML(&buf, ds); err != nil {
			b.Fatal(err)
		}
		size = buf.Len()
	}
	b.ReportMetric(float64(size)/(1<<20), "MiB/report")
}

// TestWriteCSV_PerLink checks that every CSV row holds the link's own
// results: two links to one target do not share a memento or a drift
// measured for one of them, a target-level memento says so, and the drift
// since first seen has its own columns.
func TestWriteCSV_PerLink(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteCSV(&buf, fullDataset()); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, name := range recs[0] {
		col[name] = i
	}
	for _, name := range []string{"target_id", "soft404_probe_status", "snapshot_statuses", "snapshot_datetime_mismatches",
		"snapshot_originals", "snapshot_original_mismatches", "snapshot_checked_at", "memento_scope", "memento_wanted_from",
		"drift_text_measured", "drift_live_url", "drift_measured_at", "first_seen_band", "first_seen_simhash_distance", "first_seen_measured_at"} {
		if _, ok := col[name]; !ok {
			t.Errorf("no column %s", name)
		}
	}
	row := map[string][]string{}
	for _, r := range recs[1:] {
		row[r[col["link_id"]]] = r
	}
	get := func(link, name string) string {
		t.Helper()
		r, ok := row[link]
		if !ok {
			t.Fatalf("no row for link %s", link)
		}
		return r[col[name]]
	}
	for _, c := range []struct{ link, column, want string }{
		// Links 2 and 3 share a target; only link 2 had a memento lookup.
		{"2", "memento_scope", "link"},
		{"2", "memento_url", "https://archive.example/web/20231230000000/https://ext.example/gone"},
		{"3", "memento_url", ""},
		{"3", "memento_scope", ""},
		// Links 4 and 10 share a target; the drift and memento are link 4's.
		{"4", "drift_band", audit.BandUnchanged},
		{"4", "drift_live_url", "https://ext.example/study"},
		{"4", "drift_text_measured", "true"},
		{"4", "memento_url", "https://archive.example/web/20190601120000/https://ext.example/study"},
		{"10", "drift_band", ""},
		{"10", "drift_jaccard", ""},
		{"10", "memento_url", ""},
		// Link 6's target has a drift since first seen and a target-level
		// memento, but no drift of its own.
		{"6", "drift_band", ""},
		{"6", "first_seen_band", audit.BandMinor},
		{"6", "first_seen_simhash_distance", "9"},
		{"6", "first_seen_jaccard", ""},
		{"6", "memento_scope", "target"},
		{"6", "memento_url", "https://archive.example/web/20231201000000/https://ext.example/dataset"},
		{"6", "snapshot_datetime_mismatches", "true"},
		{"6", "snapshot_original_mismatches", "true"},
		{"6", "snapshot_originals", "https://ext.example/press"},
		{"6", "snapshot_statuses", "200"},
		{"4", "snapshot_statuses", "200 | 404"},
		{"11", "verdict", string(audit.VerdictFragmentMissing)},
	} {
		if _, ok := col[c.column]; !ok {
			t.Errorf("no column %s", c.column)
			continue
		}
		if got := get(c.link, c.column); got != c.want {
			t.Errorf("link %s: %s = %q, want %q", c.link, c.column, got, c.want)
		}
	}
}

// TestCoverageChart checks the robustness coverage counts links, not
// snapshots: a link with one working snapshot of two works, and the chart
// has a legend.
func TestCoverageChart(t *testing.T) {
	ch := buildCharts(newIndex(fullDataset())).Coverage
	if len(ch.Rows) != 2 {
		t.Fatalf("%d coverage rows, want 2", len(ch.Rows))
	}
	// 10 hyperlinks; links 4 and 6 have a working snapshot, link 5 only a
	// copy that is not a memento.
	if want := "20% of 10 hyperlinks (2 of the 3 that declare a snapshot)"; ch.Rows[1].Note != want {
		t.Errorf("snapshot row note %q, want %q", ch.Rows[1].Note, want)
	}
	var segs []string
	for _, s := range ch.Rows[1].Segs {
		segs = append(segs, s.Title)
	}
	if want := []string{"2 with a working snapshot", "1 whose snapshots are missing or not mementos", "7 declaring no snapshot"}; !slices.Equal(segs, want) {
		t.Errorf("snapshot row segments %q, want %q", segs, want)
	}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, fullDataset()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `<div class="legend"><b>Hyperlinks whose snapshot works:</b><span><i class="good"></i>2 with a working snapshot</span>`) {
		t.Error("the coverage chart has no legend")
	}
}

// TestWriteHTML_Since checks the overview's "since last run" section:
// the five lists, with links to the target details, and the note for a
// site's first run.
func TestWriteHTML_Since(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteHTML(&buf, fullDataset()); err != nil {
		t.Fatal(err)
	}
	doc := buf.String()
	for _, want := range []string{`<h2 id="since">Since last run</h2>`, "What changed since run #2",
		`Newly broken <span class="chip bad">1</span>`, `Newly confirmed broken <span class="chip bad">1</span>`,
		`Recovered <span class="chip good">1</span>`, `Newly drifted <span class="chip warn">1</span>`, `Newly moved <span class="chip warn">1</span>`,
		`<a class="url" href="#target/1">https://ext.example/gone</a>`, `<span class="badge bad">off-topic</span> was minor`,
		`now at <a class="url" href="https://ext.example/new"`} {
		if !strings.Contains(doc, want) {
			t.Errorf("since section lacks %s", want)
		}
	}
	ds := fullDataset()
	ds.Since = &audit.RunDiff{To: 3, NewBroken: ds.Since.NewBroken}
	buf.Reset()
	if err := WriteHTML(&buf, ds); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "This is the first run of this site") || strings.Contains(buf.String(), "Newly broken") {
		t.Error("a first run shows changes instead of saying there is nothing to compare with")
	}
	var md strings.Builder
	if err := WriteMarkdown(&md, fullDataset()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "### Since run #2\n\n1 newly broken · 1 newly confirmed broken · 1 recovered · 1 newly drifted · 1 newly moved") {
		t.Errorf("markdown lacks the since section:\n%s", md.String())
	}
}

// TestWriteHTML_Counts checks that the Broken links tab counts its rows
// and the overview card says what it counts, and that the script gets the
// missing #fragments of the links (for their evidence and fix).
func TestWriteHTML_Counts(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteHTML(&buf, fullDataset()); err != nil {
		t.Fatal(err)
	}
	doc := buf.String()
	// Rows: gone and timeout (broken), moved, and refs (#methods missing).
	for _, want := range []string{
		`Broken links<span class="n bad">4</span>`,
		`<div class="num">2</div><div class="lbl">targets with a broken verdict (4 to fix in all, with moved and missing #fragments)</div>`,
		`4 targets need fixing: 2 with a broken verdict, 1 moved, 1 linked with a missing <code>#fragment</code>.`,
		`"fragments":[[10,"methods","the page has no element with id \"methods\""]]`,
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("report lacks %s", want)
		}
	}
}

// TestWriteHTML_DataIsland: the data island, written straight to the
// output beside the template, is the whole of scriptData's JSON, in its
// script element, once, even when a page's text looks like the marker the
// template leaves in its place.
func TestWriteHTML_DataIsland(t *testing.T) {
	ds := fullDataset()
	fake := `"linkrot-data-000000000000000000000000"`
	ds.Pages[0].Title = fake
	ds.Run.Seeds = []string{"https://example.org/" + fake}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, ds); err != nil {
		t.Fatal(err)
	}
	doc := buf.String()
	m := regexp.MustCompile(`(?s)<script type="application/json" id="report-data">(.*?)</script>`).FindAllStringSubmatch(doc, -1)
	if len(m) != 1 {
		t.Fatalf("%d data islands, want 1", len(m))
	}
	var data struct {
		V     int     `json:"v"`
		Pages [][]any `json:"pages"`
	}
	if err := json.Unmarshal([]byte(m[0][1]), &data); err != nil {
		t.Fatalf("data island is not JSON: %v", err)
	}
	if data.V != 1 || len(data.Pages) != len(ds.Pages) || data.Pages[0][1] != fake {
		t.Errorf("data island: v %d, %d pages (want %d), first title %v", data.V, len(data.Pages), len(ds.Pages), data.Pages[0][1])
	}
	for _, mk := range regexp.MustCompile(`linkrot-data-[0-9a-f]{24}`).FindAllString(doc, -1) {
		if mk != "linkrot-data-000000000000000000000000" {
			t.Errorf("the marker %s was left in the report", mk)
		}
	}
}
