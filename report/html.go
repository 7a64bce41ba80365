package report

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/linkrot/linkrot/audit"
)

//go:embed templates/report.html.tmpl templates/report.css templates/report.js templates/links.html.tmpl
var templateFS embed.FS

var (
	reportCSS = mustRead("templates/report.css")
	reportJS  = mustRead("templates/report.js")
	// The CSP hashes of the report's only inline style and script, computed
	// from the exact bytes the template writes between the tags.
	cssHash = hashSource(reportCSS)
	jsHash  = hashSource(reportJS)

	htmlTemplate = template.Must(template.New("report.html.tmpl").Funcs(template.FuncMap{
		"linkable": linkable,
		"fmtInt":   fmtInt,
		"vclass":   func(v audit.Verdict) string { return verdictClass(v) },
	}).ParseFS(templateFS, "templates/report.html.tmpl"))
)

func mustRead(name string) string {
	b, err := templateFS.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func hashSource(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// ContentSecurityPolicy is the policy the HTML report declares in a <meta>
// element: nothing may load or run but the report's own inline style and
// script (by hash). The report has no images (its charts are inline SVG),
// so none may load, data: URLs included.
func ContentSecurityPolicy() string {
	return "default-src 'none'; style-src " + cssHash + "; script-src " + jsHash +
		"; base-uri 'none'; form-action 'none'"
}

// htmlView is what the template renders.
type htmlView struct {
	Title       string
	CSP         string
	CSS         template.CSS
	JS          template.JS
	Data        json.RawMessage
	Site        []string
	Run         audit.Run
	Duration    string
	Started     string
	Finished    string
	Generated   string
	Generator   string
	Stats       audit.RunStats
	Checked     int
	Broken      int
	NeedFix     int
	FragOnly    int
	Moved       int
	Findings    int
	Drifted     int
	Snapshots   int
	Diagnostics int
	Identifiers int
	Verdicts    []verdictCount
	Charts      charts
	ArchiveRan  bool
	// LookupFailed lists failed archive lookups by archive ("ia 3,
	// arquivo 1"), "" when none failed.
	LookupFailed string
	Runs         int
	Since        *sinceView
	Traps        []trapView
	// InvalidURLs are links whose URL does not parse (at most
	// maxInvalidRows; InvalidMore counts the rest).
	InvalidURLs []invalidURLView
	InvalidMore int
	// Partial: the report details DetailLinks of the run's TotalLinks
	// links; LinkPages lists the link pages that hold them all.
	Partial                 bool
	TotalLinks, DetailLinks int
	LinkPages               []pagerItem
}

// sinceView is the "since last run" section of the overview.
type sinceView struct {
	From, To int64
	// First is true when the run is the site's first: nothing to compare.
	First bool
	Empty bool
	Lists []sinceList
}

// sinceList is one kind of change, with at most sinceItems of its targets.
type sinceList struct {
	Title, Class, Empty string
	Count               int
	Items               []sinceItem
	More                int
}

type sinceItem struct {
	URL string
	// Target is the index of the target detail (#target/N), -1 when the
	// target is not linked from the run.
	Target            int
	Now, Before       string
	NowClass          string
	Pages             int
	Replacement       string
	ReplacementIsLink bool
}

// sinceItems bounds each list of the section; the rest is counted.
const sinceItems = 25

func newSinceView(ix *index) *sinceView {
	d := ix.ds.Since
	if d == nil {
		return nil
	}
	v := &sinceView{From: d.From, To: d.To, First: d.From == 0, Empty: d.Empty()}
	if v.First {
		return v
	}
	list := func(title, class, empty string, cs []audit.Change, drift bool) {
		l := sinceList{Title: title, Class: class, Empty: empty, Count: len(cs)}
		for i, c := range cs {
			if i == sinceItems {
				l.More = len(cs) - i
				break
			}
			it := sinceItem{URL: c.URL, Target: -1, Pages: c.Pages, Replacement: c.Replacement}
			if ti, ok := ix.targetIdx[c.TargetID]; ok {
				it.Target = ti
			}
			if drift {
				it.Now, it.Before, it.NowClass = c.Band, c.PreviousBand, bandClass(c.Band)
			} else {
				it.Now, it.Before, it.NowClass = string(c.Verdict), string(c.Previous), verdictClass(c.Verdict)
				if c.Status != 0 {
					it.Now += " (" + itoa(c.Status) + ")"
				}
			}
			if it.Before == "" {
				it.Before = "not checked"
				if drift {
					it.Before = "not measured"
				}
			}
			it.ReplacementIsLink = linkable(c.Replacement)
			l.Items = append(l.Items, it)
		}
		v.Lists = append(v.Lists, l)
	}
	list("Newly broken", "bad", "Nothing newly broken.", d.NewBroken, false)
	list("Newly confirmed broken", "bad", "No failure newly confirmed.", d.NewlyConfirmed, false)
	list("Recovered", "good", "Nothing recovered.", d.Recovered, false)
	driftEmpty := "Nothing newly drifted."
	if !d.DriftAvailable {
		driftEmpty = "Drift was not measured in this run."
	}
	list("Newly drifted", "warn", driftEmpty, d.NewlyDrifted, true)
	list("Newly moved", "warn", "Nothing newly moved.", d.NewlyMoved, false)
	return v
}

type verdictCount struct {
	Verdict audit.Verdict
	Count   int
	Class   string
}

// WriteHTML writes the self-contained HTML report of ds to w. It writes
// no link pages: of a run with more links than the report details (see
// HTMLOptions), it lists those with something to show; WriteDir writes the
// rest beside it.
func WriteHTML(w io.Writer, ds *Dataset) error {
	ds = redactedDataset(ds) // URL passwords never printed (redact.go)
	ix := newIndex(ds)
	if ix.err != nil {
		return fmt.Errorf("read the run's links: %w", ix.err)
	}
	return writeHTML(w, ix, 0)
}

// writeHTML writes the HTML report of ix with linkPages link pages
// beside it.
func writeHTML(w io.Writer, ix *index, linkPages int) error {
	ds := ix.ds
	// The data island (tens of MB for a run of a million links) is
	// written straight to w, not through the template: html/template
	// would marshal a copy of it and escape a second one. scriptData
	// escapes what a <script> element must not hold ("<", ">", "&",
	// U+2028, U+2029), as the template would. The template renders a
	// marker in its place, found from the end (everything a page brings
	// comes before the data island), with a random part that no page can
	// guess.
	var nonce [12]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return fmt.Errorf("render html report: %w", err)
	}
	marker := "linkrot-data-" + hex.EncodeToString(nonce[:])
	v := htmlView{
		Partial:     ix.partial,
		TotalLinks:  ix.totalLinks,
		DetailLinks: len(ix.links),
		CSP:         ContentSecurityPolicy(),
		CSS:         template.CSS(reportCSS),
		JS:          template.JS(reportJS),
		Data:        json.RawMessage(strconv.Quote(marker)),
		Site:        siteOf(&ds.Run),
		Run:         ds.Run,
		Stats:       ds.Stats,
		Generator:   ds.Generator,
		Started:     fmtTime(ds.Run.StartedAt),
		Finished:    fmtTime(ds.Run.FinishedAt),
		Generated:   fmtTime(ds.GeneratedAt),
		Checked:     len(ds.Checks),
		Findings:    len(ds.Findings),
		Charts:      buildCharts(ix),
		ArchiveRan:  archiveStageRan(ds),
		Runs:        len(ds.Runs),
		Traps:       trapViews(ds),
	}
	for p := 1; p <= linkPages; p++ {
		v.LinkPages = append(v.LinkPages, pagerItem{Page: p, Href: LinksDir + "/" + linkPageName(p)})
	}
	v.InvalidURLs, v.InvalidMore = invalidURLViews(ix)
	v.LookupFailed = lookupFailed(ds.Mementos)
	v.Title = "linkrot report"
	if len(v.Site) > 0 {
		v.Title = "linkrot report: " + v.Site[0]
	}
	if !ds.Run.FinishedAt.IsZero() {
		v.Duration = roundDuration(ds.Run.FinishedAt.Sub(ds.Run.StartedAt)).String()
	}
	counts := ix.verdictCounts()
	for _, vd := range audit.Verdicts {
		if n := counts[vd]; n > 0 {
			v.Verdicts = append(v.Verdicts, verdictCount{vd, n, verdictClass(vd)})
			if vd.Broken() {
				v.Broken += n
			}
		}
	}
	v.Moved = counts[audit.VerdictMoved]
	v.NeedFix = len(ix.brokenTargets())
	v.FragOnly = v.NeedFix - v.Broken - v.Moved
	v.Since = newSinceView(ix)
	for _, d := range ix.driftByTarget {
		if drifted(d.Band) {
			v.Drifted++
		}
	}
	v.Snapshots = ix.snapshotRows
	v.Diagnostics = ds.Stats.Diagnostics
	v.Identifiers = len(identifierRows(ix))
	var page bytes.Buffer
	if err := htmlTemplate.Execute(&page, v); err != nil {
		return fmt.Errorf("render html report: %w", err)
	}
	quoted := []byte(strconv.Quote(marker))
	at := bytes.LastIndex(page.Bytes(), quoted)
	if at < 0 {
		return errors.New("render html report: the data island's place is missing from the template")
	}
	for _, part := range [][]byte{page.Bytes()[:at], scriptData(ix), page.Bytes()[at+len(quoted):]} {
		if _, err := w.Write(part); err != nil {
			return fmt.Errorf("write html report: %w", err)
		}
	}
	return nil
}

// siteOf returns the audited site(s) of a run: its seeds, with directory
// crawls ("DIR as BASE") shown as BASE.
func siteOf(r *audit.Run) []string {
	return r.SeedURLs()
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func roundDuration(d time.Duration) time.Duration {
	if d > time.Minute {
		return d.Round(time.Second)
	}
	return d.Round(time.Millisecond)
}

// lookupFailed lists the failed archive lookups of a run by archive:
// "ia 3, arquivo 1", "" when none failed.
func lookupFailed(ms []audit.Memento) string {
	n := map[string]int{}
	var names []string
	for _, m := range ms {
		if m.Status == audit.LookupFailed {
			if n[m.Archive] == 0 {
				names = append(names, m.Archive)
			}
			n[m.Archive]++
		}
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, a := range names {
		parts[i] = fmt.Sprintf("%s %d", a, n[a])
	}
	return strings.Join(parts, ", ")
}
