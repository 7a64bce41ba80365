package study

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// index.html is self-contained: no external resource, a Content Security
// Policy that allows only its own script and style (by hash) and data:
// images. Cited text (ids, URLs, titles, groups) reaches the page in two
// ways only: escaped by html/template, or as JSON data that the page's
// script puts into the table with textContent. Only http and https URLs
// become links; anything else (javascript:, data:) stays text.

const pageStyle = `
body{font:15px/1.45 system-ui,sans-serif;margin:2em auto;max-width:72em;padding:0 1em;color:#1b1b1b}
h1{font-size:1.6em}h2{font-size:1.25em;margin-top:2em}
table{border-collapse:collapse;font-size:.9em}
th,td{border-bottom:1px solid #ddd;padding:.25em .5em;text-align:left;vertical-align:top}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.scroll{overflow-x:auto}
#refs td{white-space:nowrap}
#refs td.long{white-space:normal;min-width:14em;max-width:28em;overflow-wrap:anywhere}
.charts{display:flex;flex-wrap:wrap;gap:1.5em}
figure{margin:0}figcaption{font-weight:600;margin-bottom:.3em}
svg.chart text{font-size:11px;fill:#333}
svg.chart .axis{stroke:#888;stroke-width:1}
svg.chart .grid{stroke:#eee;stroke-width:1}
svg.chart .ci{stroke-width:1.5}
.w1{fill:#1f5fa8;stroke:#1f5fa8}.w2{fill:#c2541b;stroke:#c2541b}.w3{fill:#2e8540;stroke:#2e8540}.w4{fill:#7b3fa0;stroke:#7b3fa0}
.legend span{margin-right:1em}
.pager{margin:.5em 0}.pager button{margin-right:.5em}
p.methods{max-width:60em}
`

const pageScript = `(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('refs-data').textContent);
  var size = 50, page = 0;
  var body = document.getElementById('refs-body');
  var info = document.getElementById('refs-page');
  var prev = document.getElementById('refs-prev');
  var next = document.getElementById('refs-next');
  var pages = Math.max(1, Math.ceil(data.length / size));
  function cell(tr, text, link, long) {
    var td = document.createElement('td');
    if (long) { td.className = 'long'; }
    if (link && /^https?:\/\//i.test(text)) {
      var a = document.createElement('a');
      a.href = text;
      a.rel = 'noopener noreferrer nofollow';
      a.textContent = text;
      td.appendChild(a);
    } else {
      td.textContent = text;
    }
    tr.appendChild(td);
  }
  function render() {
    while (body.firstChild) { body.removeChild(body.firstChild); }
    data.slice(page * size, (page + 1) * size).forEach(function (r) {
      var tr = document.createElement('tr');
      for (var i = 0; i < r.length; i++) { cell(tr, r[i], i === 1 || i === 9, i <= 4 && i !== 2 || i === 9); }
      body.appendChild(tr);
    });
    info.textContent = 'page ' + (page + 1) + ' of ' + pages + ' (' + data.length + ' rows)';
    prev.disabled = page === 0;
    next.disabled = page >= pages - 1;
  }
  prev.addEventListener('click', function () { if (page > 0) { page--; render(); } });
  next.addEventListener('click', function () { if (page < pages - 1) { page++; render(); } });
  render();
})();
`

func cspHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(h[:]) + "'"
}

var pageCSP = "default-src 'none'; script-src " + cspHash(pageScript) + "; style-src " + cspHash(pageStyle) +
	"; img-src data:; base-uri 'none'; form-action 'none'"

var pageTemplate = template.Must(template.New("index").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{.CSP}}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Reference rot study: {{.Input.Name}}</title>
<style>{{.Style}}</style>
</head><body>
<h1>Reference rot study</h1>
<p>{{.Counts}}</p>
<h2>Methods</h2>
<p class="methods" id="methods">{{.Methods}}</p>
<h2>Shares by citation year</h2>
<p class="legend">{{range .Legend}}<span><svg width="10" height="10" aria-hidden="true"><rect class="{{.Class}}" width="10" height="10"/></svg> {{.Label}}</span>{{end}} Whiskers: Wilson 95% intervals.</p>
<div class="charts">{{range .Charts}}<figure><figcaption>{{.Title}}</figcaption>{{.SVG}}</figure>{{end}}</div>
<h2>Summary</h2>
<table id="summary"><thead><tr><th>wave</th><th>scope</th><th>key</th><th>n</th><th>link rot</th><th>drift among live</th><th>reference rot</th><th>representative memento</th><th>new rot since the previous wave</th></tr></thead><tbody>
{{range .Summary}}<tr><td class="num">{{.Wave}}</td><td>{{.Scope}}</td><td>{{.Key}}</td><td class="num">{{.N}}</td>{{range .Shares}}<td class="num">{{.}}</td>{{end}}</tr>
{{end}}</tbody></table>
{{if .Malformed}}<h2>Malformed rows</h2><ul id="malformed">{{range .Malformed}}<li>line {{.Line}}: {{.Reason}}</li>{{end}}</ul>{{if .MalformedMore}}<p>… and {{.MalformedMore}} more (study.json lists them all).</p>{{end}}{{end}}
<h2>References</h2>
{{if lt .Shown .Rows}}<p id="refs-capped">The table shows the first {{.Shown}} of {{.Rows}} rows; references.csv has them all.</p>{{end}}
<div class="pager"><button id="refs-prev" type="button">previous</button><button id="refs-next" type="button">next</button><span id="refs-page"></span></div>
<div class="scroll"><table id="refs"><thead><tr><th>id</th><th>url</th><th>cited at</th><th>group</th><th>title</th><th>wave</th><th>live verdict</th><th>status</th><th>broken</th><th>memento</th><th>memento datetime</th><th>distance (days)</th><th>representative</th><th>drift</th><th>reference rot</th></tr></thead>
<tbody id="refs-body"></tbody></table></div>
<noscript><p>The references table needs JavaScript; references.csv has every row.</p></noscript>
<script type="application/json" id="refs-data">{{.Data}}</script>
<script>{{.Script}}</script>
</body></html>
`))

type chartView struct {
	Title string
	SVG   template.HTML
}

type summaryView struct {
	Wave       int
	Scope, Key string
	N          int
	Shares     []string
}

// maxMalformedShown caps the malformed rows listed in the page.
const maxMalformedShown = 200

// WriteHTML writes index.html: rows are the first rows of the study (at
// most Params.HTMLRows of them are shown), total the number of rows in
// all, sum the summary.
func WriteHTML(w io.Writer, s *Study, rows []Row, total int, sum []SummaryRow) error {
	shown := rows
	if limit := s.Params.htmlRows(); len(shown) > limit {
		shown = shown[:limit]
	}
	data := make([][]string, 0, len(shown))
	for _, r := range shown {
		rec := ReferenceRecord(r)
		// id, url, cited_at, group, title, wave, verdict, status, broken,
		// memento url, datetime, distance, representative, drift, rot;
		// raw text (no apostrophes: the page is not a spreadsheet).
		rec[0], rec[1], rec[3], rec[4], rec[10] = r.Ref.ID, r.Ref.URL, r.Ref.Group, r.Ref.Title, ""
		if r.Memento != nil {
			rec[10] = r.Memento.URL
		}
		data = append(data, []string{rec[0], rec[1], rec[2], rec[3], rec[4], rec[5], rec[7], rec[8], rec[9], rec[10], rec[11], rec[12], rec[14], rec[15], rec[16]})
	}
	js, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("write index.html: %w", err)
	}
	var sv []summaryView
	for _, x := range sum {
		v := summaryView{Wave: x.Wave, Scope: x.Scope, Key: x.Key, N: x.N}
		for _, sh := range x.shares() {
			v.Shares = append(v.Shares, shareText(sh))
		}
		sv = append(sv, v)
	}
	var charts []chartView
	titles := []string{"Link rot", "Content drift among live references", "Reference rot", "References with a representative memento", "New link rot since the previous wave"}
	for i, t := range titles {
		charts = append(charts, chartView{Title: t, SVG: template.HTML(chartSVG(shareNames[i], i, sum))})
	}
	type legend struct{ Class, Label string }
	var leg []legend
	for i, wv := range s.Waves {
		leg = append(leg, legend{Class: waveClass(i), Label: fmt.Sprintf("wave %d (checked %s)", wv.Number, wv.CheckedAt.UTC().Format("2006-01-02"))})
	}
	malformed := s.Input.Errors
	more := 0
	if len(malformed) > maxMalformedShown {
		more = len(malformed) - maxMalformedShown
		malformed = malformed[:maxMalformedShown]
	}
	err = pageTemplate.Execute(w, map[string]any{
		"CSP":           pageCSP,
		"Style":         template.CSS(pageStyle),
		"Script":        template.JS(pageScript),
		"Data":          template.JS(js),
		"Input":         s.Input,
		"Counts":        countsText(s, total),
		"Methods":       Methods(s),
		"Legend":        leg,
		"Charts":        charts,
		"Summary":       sv,
		"Malformed":     malformed,
		"MalformedMore": more,
		"Shown":         len(shown),
		"Rows":          total,
	})
	if err != nil {
		return fmt.Errorf("write index.html: %w", err)
	}
	return nil
}

func countsText(s *Study, rows int) string {
	return fmt.Sprintf("%s references to %s distinct URLs from %s (%s), %d wave(s), %s rows; %s malformed rows skipped.",
		Thousands(len(s.Input.References)), Thousands(DistinctURLs(s.Input.References)), s.Input.Name, s.Input.Format,
		len(s.Waves), Thousands(rows), Thousands(len(s.Input.Errors)))
}

func shareText(sh Share) string {
	if sh.N == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f%% [%.1f–%.1f] (%d/%d)", 100*sh.P(), 100*sh.Lo, 100*sh.Hi, sh.K, sh.N)
}

func waveClass(i int) string { return "w" + strconv.Itoa(i%4+1) }

// Methods is the methods paragraph, filled from the study's parameters.
func Methods(s *Study) string {
	refs := s.Input.References
	minY, maxY := 0, 0
	for i, r := range refs {
		y := r.CitedAt.Year()
		if i == 0 || y < minY {
			minY = y
		}
		if i == 0 || y > maxY {
			maxY = y
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "We studied %s references to %s distinct URLs, cited from %d to %d, read from %s (%s, SHA-256 %s); %s malformed rows were skipped. ",
		Thousands(len(refs)), Thousands(DistinctURLs(refs)), minY, maxY, s.Input.Name, s.Input.Format, s.Input.Digest, Thousands(len(s.Input.Errors)))
	for _, w := range s.Waves {
		fmt.Fprintf(&b, "Wave %d checked the live URLs on %s. ", w.Number, w.CheckedAt.UTC().Format("2006-01-02"))
	}
	b.WriteString("Each distinct URL was checked once and its result shared by every reference to it. ")
	b.WriteString("Link rot is a live verdict that does not lead to content: not found, gone, other client errors, server errors, DNS, connection and TLS errors, redirect loops and too many redirects, redirects to the site's root, soft 404s and parked domains; timeouts, rate limiting, blocked requests and skipped or refused URLs are unmeasured and left out of the share's denominator (Klein et al. 2014; Zittrain, Albert and Lessig 2014). ")
	archives := "no archive"
	if len(s.Params.Archives) > 0 {
		archives = strings.Join(s.Params.Archives, ", ")
	}
	fmt.Fprintf(&b, "A representative memento is the memento nearest the citation date within %s days before or after it, from %s; a citation date known only to the month or year counts as that whole month or year, and ties go to the earlier memento (Klein et al. 2014). ",
		strconv.FormatFloat(s.Params.window().Hours()/24, 'f', -1, 64), archives)
	t := s.Params.Thresholds.WithDefaults()
	fmt.Fprintf(&b, "Content drift compares the live page's main text with the representative memento's and sorts it into bands (Jones et al. 2016): off-topic when cosine similarity < %g, Jaccard distance > %g, Sørensen–Dice distance > %g, SimHash Hamming distance > %d or the word count fell by more than %g; major when cosine < %g, Jaccard distance > %g, SimHash distance > %d or the word count changed by more than %g; minor otherwise. Drift beyond minor (major, off-topic) counts as content drift, and reference rot is link rot or content drift. ",
		t.OffTopicCosine, t.OffTopicJaccardDistance, t.OffTopicDiceDistance, t.OffTopicSimHash, t.OffTopicWordDrop,
		t.MajorCosine, t.MajorJaccardDistance, t.MajorSimHash, t.MajorWordChange)
	fmt.Fprintf(&b, "Shares are given with Wilson score 95%% intervals. linkrot %s.", s.Params.Version)
	return b.String()
}

// chartSVG draws one share by citation year, one series a wave, each
// point (circle.pt) with its Wilson interval as a whisker (line.ci).
func chartSVG(name string, idx int, sum []SummaryRow) string {
	const w, h, left, right, top, bottom = 420, 240, 44, 12, 12, 36
	yearSet := map[int]bool{}
	waveSet := map[int]bool{}
	for _, s := range sum {
		if s.Scope == ScopeYear {
			y, _ := strconv.Atoi(s.Key)
			yearSet[y] = true
			waveSet[s.Wave] = true
		}
	}
	years := sortedKeys(yearSet)
	waves := sortedKeys(waveSet)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" data-share="%s" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s by citation year">`,
		name, w, h, w, h, html.EscapeString(name))
	plotW, plotH := float64(w-left-right), float64(h-top-bottom)
	yOf := func(v float64) float64 { return float64(top) + plotH*(1-v) }
	for _, g := range []float64{0, .25, .5, .75, 1} {
		fmt.Fprintf(&b, `<line class="grid" x1="%d" x2="%d" y1="%.1f" y2="%.1f"/>`, left, w-right, yOf(g), yOf(g))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%d%%</text>`, left-4, yOf(g)+4, int(g*100))
	}
	fmt.Fprintf(&b, `<line class="axis" x1="%d" x2="%d" y1="%.1f" y2="%.1f"/>`, left, w-right, yOf(0), yOf(0))
	slot := plotW / math.Max(1, float64(len(years)))
	xOf := func(i, wi int) float64 {
		off := 0.0
		if len(waves) > 1 {
			off = (float64(wi) - float64(len(waves)-1)/2) * math.Min(8, slot/float64(len(waves)+1))
		}
		return float64(left) + slot*(float64(i)+0.5) + off
	}
	step := 1
	for len(years)/step > 12 {
		step++
	}
	for i, y := range years {
		if i%step == 0 {
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%d</text>`, xOf(i, 0)-0, h-bottom+16, y)
		}
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">citation year</text>`, left+int(plotW/2), h-4)
	byKey := map[[2]int]SummaryRow{}
	for _, s := range sum {
		if s.Scope == ScopeYear {
			y, _ := strconv.Atoi(s.Key)
			byKey[[2]int{s.Wave, y}] = s
		}
	}
	for wi, wave := range waves {
		cls := waveClass(wi)
		for i, y := range years {
			s, ok := byKey[[2]int{wave, y}]
			if !ok {
				continue
			}
			sh := s.shares()[idx]
			if sh.N == 0 {
				continue
			}
			x := xOf(i, wi)
			fmt.Fprintf(&b, `<line class="ci %s" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, cls, x, x, yOf(sh.Lo), yOf(sh.Hi))
			fmt.Fprintf(&b, `<circle class="pt %s" data-year="%d" data-wave="%d" data-k="%d" data-n="%d" cx="%.1f" cy="%.1f" r="3.5"><title>%d, wave %d: %s</title></circle>`,
				cls, y, wave, sh.K, sh.N, x, yOf(sh.P()), y, wave, html.EscapeString(shareText(sh)))
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}

func sortedKeys(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}
