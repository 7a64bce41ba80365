package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/linkrot/linkrot/audit"
)

// barChart is a horizontal bar chart drawn as inline SVG by the template.
type barChart struct {
	Title  string
	Width  int
	Height int
	LabelW int
	Bars   []bar
	// Empty is shown instead of the chart when there are no bars.
	Empty string
}

// bar is one bar of a barChart, laid out in SVG user units.
type bar struct {
	Label, FullLabel string
	Value            int
	Display          string
	Class            string
	Y, W             float64
	TextY            float64
	ValueX           float64
	// Href is a fragment of the report ("#links/verdict=gone"); "" for none.
	Href string
}

const (
	chartWidth = 520
	barHeight  = 18
	barGap     = 8
)

type barInput struct {
	label, class, href string
	value              int
	display            string
}

func newBarChart(title string, in []barInput, empty string) barChart {
	ch := barChart{Title: title, Width: chartWidth, LabelW: 170, Empty: empty}
	max := 0
	for _, b := range in {
		if b.value > max {
			max = b.value
		}
	}
	if max == 0 {
		ch.Height = 0
		return ch
	}
	plot := float64(ch.Width - ch.LabelW - 60)
	for i, b := range in {
		y := float64(i*(barHeight+barGap) + 4)
		w := plot * float64(b.value) / float64(max)
		if w < 2 {
			w = 2
		}
		d := b.display
		if d == "" {
			d = fmtInt(b.value)
		}
		ch.Bars = append(ch.Bars, bar{
			Label: shorten(b.label, 26), FullLabel: b.label, Value: b.value, Display: d,
			Class: b.class, Y: y, W: round1(w), TextY: y + 13, ValueX: round1(float64(ch.LabelW) + w + 6),
			Href: b.href,
		})
	}
	ch.Height = len(in)*(barHeight+barGap) + 4
	return ch
}

// stackChart is a set of 100% stacked bars (shares).
type stackChart struct {
	Title string
	Width int
	Rows  []stackRow
	Empty string
}

type stackRow struct {
	Label string
	Note  string
	// Y is the bar's top; TextY and NoteY the baselines of label and note.
	Y, TextY, NoteY float64
	Segs            []stackSeg
}

type stackSeg struct {
	X, W  float64
	Class string
	Title string
}

type stackInput struct {
	label, note string
	segs        []segInput
}

type segInput struct {
	value int
	class string
	title string
}

func newStackChart(title string, rows []stackInput, empty string) stackChart {
	ch := stackChart{Title: title, Width: chartWidth, Empty: empty}
	y := 0.0
	for _, r := range rows {
		total := 0
		for _, s := range r.segs {
			total += s.value
		}
		row := stackRow{Label: r.label, Note: r.note, TextY: y + 14, NoteY: y + 31, Y: y + 40}
		x := 0.0
		for _, s := range r.segs {
			if total == 0 || s.value == 0 {
				continue
			}
			w := float64(chartWidth) * float64(s.value) / float64(total)
			row.Segs = append(row.Segs, stackSeg{X: round1(x), W: round1(w), Class: s.class, Title: s.title})
			x += w
		}
		if total == 0 {
			row.Segs = append(row.Segs, stackSeg{X: 0, W: chartWidth, Class: "muted", Title: "nothing to measure"})
		}
		ch.Rows = append(ch.Rows, row)
		y += stackStep
	}
	return ch
}

// Height is the SVG height of a stack chart.
func (c stackChart) Height() int { return len(c.Rows)*stackStep - 4 }

const stackStep = 72

// lineChart is the trend across runs: one polyline per series.
type lineChart struct {
	Title  string
	Width  int
	Height int
	Series []series
	XTicks []tick
	YTicks []tick
	Empty  string
}

type series struct {
	Name   string
	Class  string
	Points string
	Dots   []dot
}

type dot struct {
	X, Y  float64
	Title string
}

type tick struct {
	X, Y  float64
	Label string
}

func newTrendChart(runs []RunSummary) lineChart {
	ch := lineChart{Title: "Broken and drifted targets per run", Width: chartWidth, Height: 200}
	if len(runs) < 2 {
		ch.Empty = "The trend appears from the second run of the same site."
		return ch
	}
	if len(runs) > 60 {
		runs = runs[len(runs)-60:]
	}
	max := 1
	for _, r := range runs {
		max = maxInt(max, maxInt(r.Broken, r.Drifted))
	}
	const left, right, top, bottom = 40.0, 10.0, 10.0, 30.0
	pw := float64(ch.Width) - left - right
	ph := float64(ch.Height) - top - bottom
	x := func(i int) float64 { return round1(left + pw*float64(i)/float64(len(runs)-1)) }
	y := func(v int) float64 { return round1(top + ph - ph*float64(v)/float64(max)) }
	for _, v := range []int{0, max / 2, max} {
		ch.YTicks = append(ch.YTicks, tick{X: left - 6, Y: y(v), Label: fmtInt(v)})
	}
	step := maxInt(1, len(runs)/8)
	for i := 0; i < len(runs); i += step {
		ch.XTicks = append(ch.XTicks, tick{X: x(i), Y: float64(ch.Height) - 10, Label: "#" + strconv.FormatInt(runs[i].ID, 10)})
	}
	for _, s := range []struct {
		name, class string
		get         func(RunSummary) int
	}{
		{"broken", "bad", func(r RunSummary) int { return r.Broken }},
		{"drifted", "warn", func(r RunSummary) int { return r.Drifted }},
	} {
		se := series{Name: s.name, Class: s.class}
		var pts []string
		for i, r := range runs {
			px, py := x(i), y(s.get(r))
			pts = append(pts, fmt.Sprintf("%g,%g", px, py))
			se.Dots = append(se.Dots, dot{X: px, Y: py, Title: fmt.Sprintf("run #%d (%s): %d %s",
				r.ID, r.StartedAt.UTC().Format("2006-01-02 15:04"), s.get(r), s.name)})
		}
		se.Points = strings.Join(pts, " ")
		ch.Series = append(ch.Series, se)
	}
	return ch
}

// charts are the Overview's charts.
type charts struct {
	Verdicts barChart
	Hosts    barChart
	Coverage stackChart
	Drift    barChart
	Trend    lineChart
}

func buildCharts(ix *index) charts {
	ds := ix.ds
	counts := ix.verdictCounts()
	var vin []barInput
	for _, v := range audit.Verdicts {
		if n := counts[v]; n > 0 {
			vin = append(vin, barInput{label: string(v), class: verdictClass(v), value: n, href: "#links/verdict=" + string(v)})
		}
	}

	// Broken targets by host, top 10.
	byHost := map[string]int{}
	for _, ti := range ix.brokenTargets() {
		t := ds.Targets[ti]
		if c := ix.checkByTarget[t.ID]; c != nil && c.Verdict.Broken() {
			h := t.Host
			if h == "" {
				h = "(no host)"
			}
			byHost[h]++
		}
	}
	hosts := make([]string, 0, len(byHost))
	for h := range byHost {
		hosts = append(hosts, h)
	}
	slices.SortFunc(hosts, func(a, b string) int {
		if byHost[a] != byHost[b] {
			return byHost[b] - byHost[a]
		}
		return strings.Compare(a, b)
	})
	var hin []barInput
	for i, h := range hosts {
		if i == 10 {
			break
		}
		hin = append(hin, barInput{label: h, class: "bad", value: byHost[h], href: "#broken/host=" + h})
	}

	// Robustness coverage over hyperlinks (not embedded resources).
	cv := ix.coverage
	hyper, robust, mset, both := cv.hyper, cv.robust, cv.mset, cv.both
	none := hyper - robust - mset - both
	withData := robust + mset + both
	cov := []stackInput{{
		label: "Hyperlinks with robustness data",
		note:  pct(withData, hyper) + " of " + fmtInt(hyper) + " hyperlinks (Robust Links " + fmtInt(robust+both) + ", mset " + fmtInt(mset+both) + ")",
		segs: []segInput{
			{robust, "good", fmtInt(robust) + " with Robust Links attributes"},
			{both, "good2", fmtInt(both) + " with Robust Links and mset"},
			{mset, "info", fmtInt(mset) + " with mset"},
			{none, "muted", fmtInt(none) + " without robustness data"},
		},
	}}

	// Per hyperlink: does one of the snapshots it declares work? (Counted
	// over every link by scanLinks.)
	const (
		snapNone = iota
		snapWorks
		snapUnchecked
		snapError
		snapBroken
	)
	n := ix.snapStates
	declaring := n[snapWorks] + n[snapUnchecked] + n[snapError] + n[snapBroken]
	n[snapNone] = hyper - declaring
	note := pct(n[snapWorks], hyper) + " of " + fmtInt(hyper) + " hyperlinks (" + fmtInt(n[snapWorks]) + " of the " + fmtInt(declaring) + " that declare a snapshot)"
	switch {
	case declaring == 0:
		note = "no hyperlink declares a snapshot (data-versionurl, mset copy or pwid)"
	case n[snapUnchecked] == declaring:
		note = fmtInt(declaring) + " of " + fmtInt(hyper) + " hyperlinks declare snapshots, none audited"
		if !archiveStageRan(ds) {
			note += " (the archive stage did not run)"
		}
	}
	cov = append(cov, stackInput{
		label: "Hyperlinks whose snapshot works",
		note:  note,
		segs: []segInput{
			{n[snapWorks], "good", fmtInt(n[snapWorks]) + " with a working snapshot"},
			{n[snapError], "warn", fmtInt(n[snapError]) + " whose snapshots could not be fetched"},
			{n[snapBroken], "bad", fmtInt(n[snapBroken]) + " whose snapshots are missing or not mementos"},
			{n[snapUnchecked], "info", fmtInt(n[snapUnchecked]) + " with snapshots not audited"},
			{n[snapNone], "muted", fmtInt(n[snapNone]) + " declaring no snapshot"},
		},
	})

	bands := map[string]int{}
	for _, d := range ix.driftByTarget {
		bands[d.Band]++
	}
	var din []barInput
	for _, b := range []string{audit.BandUnchanged, audit.BandMinor, audit.BandMajor, audit.BandOffTopic} {
		din = append(din, barInput{label: b, class: bandClass(b), value: bands[b], href: "#drift/band=" + b})
	}
	driftEmpty := "No drift measured in this run."
	if !archiveStageRan(ds) {
		driftEmpty = "No drift measured: the archive stage did not run for this run."
	}
	return charts{
		Verdicts: newBarChart("Targets per verdict", vin, "No target was checked in this run."),
		Hosts:    newBarChart("Broken targets by host (top 10)", hin, "No broken targets."),
		Coverage: newStackChart("Robustness coverage", cov, ""),
		Drift:    newBarChart("Targets per drift band", din, driftEmpty),
		Trend:    newTrendChart(ds.Runs),
	}
}

func pct(n, of int) string {
	if of == 0 {
		return "0%"
	}
	p := 100 * float64(n) / float64(of)
	if p > 0 && p < 1 {
		return "<1%"
	}
	return strconv.Itoa(int(p+0.5)) + "%"
}

// fmtInt formats n with thousands separators.
func fmtInt(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'f', 3, 64) }

func round1(f float64) float64 { return float64(int(f*10+0.5)) / 10 }

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// shorten cuts s to n runes with an ellipsis.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
