package report

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/linkrot/linkrot/audit"
)

//go:embed templates/report.html.tmpl templates/report.css templates/report.js
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
// script (by hash) and data: images.
func ContentSecurityPolicy() string {
	return "default-src 'none'; style-src " + cssHash + "; script-src " + jsHash +
		"; img-src data:; base-uri 'none'; form-action 'none'"
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
	Moved       int
	Findings    int
	Drifted     int
	Snapshots   int
	Diagnostics int
	Identifiers int
	Verdicts    []verdictCount
	Charts      charts
	ArchiveRan  bool
	Runs        int
}

type verdictCount struct {
	Verdict audit.Verdict
	Count   int
	Class   string
}

// WriteHTML writes the self-contained HTML report of ds to w.
func WriteHTML(w io.Writer, ds *Dataset) error {
	ix := newIndex(ds)
	v := htmlView{
		CSP:        ContentSecurityPolicy(),
		CSS:        template.CSS(reportCSS),
		JS:         template.JS(reportJS),
		Data:       json.RawMessage(scriptData(ix)),
		Site:       siteOf(&ds.Run),
		Run:        ds.Run,
		Stats:      ds.Stats,
		Generator:  ds.Generator,
		Started:    fmtTime(ds.Run.StartedAt),
		Finished:   fmtTime(ds.Run.FinishedAt),
		Generated:  fmtTime(ds.GeneratedAt),
		Checked:    len(ds.Checks),
		Findings:   len(ds.Findings),
		Charts:     buildCharts(ix),
		ArchiveRan: archiveStageRan(ds),
		Runs:       len(ds.Runs),
	}
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
	for _, d := range ix.driftByTarget {
		if drifted(d.Band) {
			v.Drifted++
		}
	}
	v.Snapshots = len(snapshotRows(ix))
	v.Diagnostics = ds.Stats.Diagnostics
	v.Identifiers = len(identifierRows(ix))
	if err := htmlTemplate.Execute(w, v); err != nil {
		return fmt.Errorf("render html report: %w", err)
	}
	return nil
}

// siteOf returns the audited site(s) of a run: its seeds, with directory
// crawls ("DIR as BASE") shown as BASE.
func siteOf(r *audit.Run) []string {
	var out []string
	for _, s := range r.Seeds {
		if _, after, ok := strings.Cut(s, " as "); ok {
			s = after
		}
		out = append(out, s)
	}
	return out
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
