package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkrot/linkrot/archives/archivetest"
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/drift"
	"github.com/linkrot/linkrot/drift/textsim"
	"github.com/linkrot/linkrot/urls"
)

// studyWorld is a loopback world of cited URLs with known truth: live
// pages (unchanged since their mementos), drifted pages, dead ones (404,
// 410), a soft-404 host and a parked host, and a Memento archive whose
// mementos sit at known distances from the citation dates (inside the
// window, outside it, or none at all). Every URL is cited twice: the
// second citation 40 days after the first, so one TimeMap serves two
// citations at different distances.
type studyWorld struct {
	web, soft, parked *countingServer
	arch              *archivetest.Archive
	// tm serves the archive's TimeMaps (a proxy, so that a test can make
	// one hang).
	tm   *countingServer
	refs []studyRef
	// byURL are the URLs' truths.
	byURL map[string]*studyURLTruth
	// died are the live paths that answer 404 from now on (a later wave).
	died map[string]bool
	mu   sync.Mutex // pages and died
}

// kill makes every twentieth live page (by URL number) answer 404 from
// now on, and returns their URLs.
func (w *studyWorld) kill() map[string]bool {
	out := map[string]bool{}
	for u, tr := range w.byURL {
		if tr.kind != "live" {
			continue
		}
		path := u[strings.LastIndex(u, "/page/"):]
		n, _ := strconv.Atoi(strings.TrimPrefix(path, "/page/"))
		if n%20 == 0 {
			out[u] = true
			w.mu.Lock()
			w.died[path] = true
			w.mu.Unlock()
		}
	}
	return out
}

// studyRef is one reference of the world and what its row must say.
type studyRef struct {
	id, url, citedAt, group string
	// citedFrom and citedTo are the citation's interval.
	citedFrom, citedTo time.Time
	bibDate            string // urldate as BibTeX/CSL give it
}

// studyURLTruth is what a URL is.
type studyURLTruth struct {
	kind     string // live, drift, dead, gone, soft, parked
	verdict  audit.Verdict
	status   int
	mementos []time.Time // archived at
	memBody  string
	liveBody string
}

// countingServer counts completed requests per path.
type countingServer struct {
	*httptest.Server
	mu     sync.Mutex
	counts map[string]int
	// trap, when set, is a path whose requests block until release is
	// closed (and reached is closed on the first).
	trap string
	// trapAfter lets this many requests of the trap path through first.
	trapAfter int
	reached   chan struct{}
	release   chan struct{}
	once      sync.Once
}

func newCountingServer(t *testing.T, h http.HandlerFunc) *countingServer {
	c := &countingServer{counts: map[string]int{}, reached: make(chan struct{}), release: make(chan struct{})}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		trap := c.trap
		if r.URL.Path != trap || c.counts[r.Method+" "+r.URL.Path] < c.trapAfter {
			trap = ""
		}
		c.mu.Unlock()
		if trap != "" {
			c.once.Do(func() { close(c.reached) })
			select {
			case <-c.release:
			case <-r.Context().Done():
				return
			}
		}
		h(w, r)
		c.mu.Lock()
		c.counts[r.Method+" "+r.URL.Path]++
		c.mu.Unlock()
	}))
	t.Cleanup(func() {
		c.once.Do(func() { close(c.reached) })
		select {
		case <-c.release:
		default:
			close(c.release)
		}
		c.Close()
	})
	return c
}

func (c *countingServer) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.counts))
	for k, v := range c.counts {
		out[k] = v
	}
	return out
}

func (c *countingServer) reset() {
	c.mu.Lock()
	c.counts = map[string]int{}
	c.mu.Unlock()
}

func studyPage(title, text string) string {
	return `<!DOCTYPE html><html><head><title>` + title + `</title></head><body><main><h1>` + title + `</h1><p>` + text + `</p></main></body></html>`
}

// livingText is the text of a live page: long enough for the drift
// measures, distinct per page.
func livingText(n int) string {
	var b strings.Builder
	for i := range 60 {
		fmt.Fprintf(&b, "Observation %d of the survey of station %d records the water level, the temperature and the wind. ", i, n)
	}
	return b.String()
}

func driftedText(n int) string {
	var b strings.Builder
	for i := range 60 {
		fmt.Fprintf(&b, "Buy cheap tickets %d now: casino bonus offers and lottery winners announced daily for region %d. ", i, n)
	}
	return b.String()
}

// newStudyWorld builds a world of n references (n even: every URL is
// cited twice).
func newStudyWorld(t *testing.T, n int) *studyWorld {
	t.Helper()
	w := &studyWorld{byURL: map[string]*studyURLTruth{}, died: map[string]bool{}}
	pages := map[string]string{} // path -> live body
	w.web = newCountingServer(t, func(rw http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/dead/"):
			http.NotFound(rw, r)
			return
		case strings.HasPrefix(r.URL.Path, "/gone/"):
			http.Error(rw, "gone", http.StatusGone)
			return
		}
		w.mu.Lock()
		body, ok := pages[r.URL.Path]
		if w.died[r.URL.Path] {
			ok = false
		}
		w.mu.Unlock()
		if !ok {
			http.NotFound(rw, r)
			return
		}
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(rw, body)
	})
	w.soft = newCountingServer(t, func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(rw, studyPage("Page not found", "Sorry, the page you are looking for could not be found. It may have been moved or deleted. Return to the home page."))
	})
	lander, err := os.ReadFile(filepath.Join("..", "..", "check", "testdata", "parked", "sedo.html"))
	if err != nil {
		t.Fatal(err)
	}
	w.parked = newCountingServer(t, func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		rw.Write(lander)
	})
	w.arch = archivetest.New(t, archivetest.Options{})
	archURL, _ := url.Parse(w.arch.URL)
	proxy := httputil.NewSingleHostReverseProxy(archURL)
	w.tm = newCountingServer(t, proxy.ServeHTTP)
	base := time.Date(2014, 1, 6, 0, 0, 0, 0, time.UTC)
	groups := []string{"PLOS ONE", "Harvard Law Review", "Nature"}
	for i := 0; i < n; i++ {
		u := i / 2
		kinds := []string{"live", "live", "live-month", "live-out", "live-none", "drift", "dead", "gone", "soft", "parked"}
		kind := kinds[u%len(kinds)]
		var rawURL string
		switch kind {
		case "dead":
			rawURL = fmt.Sprintf("%s/dead/%d", w.web.URL, u)
		case "gone":
			rawURL = fmt.Sprintf("%s/gone/%d", w.web.URL, u)
		case "soft":
			rawURL = fmt.Sprintf("%s/articles/%d", w.soft.URL, u)
		case "parked":
			rawURL = fmt.Sprintf("%s/project/%d", w.parked.URL, u)
		default:
			rawURL = fmt.Sprintf("%s/page/%d", w.web.URL, u)
		}
		key, _, _ := urls.TargetKey(rawURL)
		day := base.AddDate(0, 0, (u*37)%2400) // citation days from 2014 to 2020
		ref := studyRef{id: fmt.Sprintf("10.1000/ref.%d", i), url: rawURL, group: groups[u%len(groups)]}
		first := i%2 == 0
		if !first {
			day = day.AddDate(0, 0, 40)
		}
		if kind == "live-month" {
			ref.citedFrom = time.Date(day.Year(), day.Month(), 1, 0, 0, 0, 0, time.UTC)
			ref.citedTo = ref.citedFrom.AddDate(0, 1, 0)
			ref.citedAt = ref.citedFrom.Format("2006-01")
		} else {
			ref.citedFrom, ref.citedTo = day, day.AddDate(0, 0, 1)
			ref.citedAt = day.Format("2006-01-02")
		}
		ref.bibDate = ref.citedAt
		w.refs = append(w.refs, ref)
		if !first {
			continue
		}
		tr := &studyURLTruth{kind: kind, status: 200, verdict: audit.VerdictOK}
		tr.liveBody = studyPage(fmt.Sprintf("Station %d", u), livingText(u))
		tr.memBody = tr.liveBody
		switch kind {
		case "dead":
			tr.verdict, tr.status = audit.VerdictNotFound, 404
		case "gone":
			tr.verdict, tr.status = audit.VerdictGone, 410
		case "soft":
			tr.verdict = audit.VerdictSoft404
		case "parked":
			tr.verdict = audit.VerdictParked
		case "drift":
			tr.liveBody = studyPage(fmt.Sprintf("Station %d", u), driftedText(u))
		}
		// Mementos at known distances from the first citation.
		d0 := ref.citedFrom
		switch kind {
		case "live":
			off := []time.Duration{-3 * 24 * time.Hour, 6 * time.Hour, (24 + 5*24) * time.Hour}[(u/10)%3]
			tr.mementos = []time.Time{d0.Add(off), d0.AddDate(-1, 0, 0)}
		case "live-month":
			tr.mementos = []time.Time{d0.AddDate(0, 0, 14)}
		case "live-out":
			tr.mementos = []time.Time{d0.AddDate(0, 0, -20), d0.AddDate(0, 0, 90)}
		case "live-none", "gone":
		default:
			tr.mementos = []time.Time{d0.Add(-2 * 24 * time.Hour)}
		}
		if kind == "drift" || kind == "live" {
			w.mu.Lock()
			pages["/page/"+strconv.Itoa(u)] = tr.liveBody
			w.mu.Unlock()
		}
		if strings.HasPrefix(kind, "live") {
			w.mu.Lock()
			pages["/page/"+strconv.Itoa(u)] = tr.liveBody
			w.mu.Unlock()
		}
		for _, at := range tr.mementos {
			w.arch.Add(archivetest.Memento{Original: key, Time: at, Body: tr.memBody})
		}
		w.byURL[rawURL] = tr
	}
	return w
}

// args are the flags of a study of the world.
func (w *studyWorld) args(db, out string) []string {
	fx := fmt.Sprintf("fx=%s/web/,timemap=%s/timemap/link/,rate=1000000", w.arch.URL, w.tm.URL)
	return []string{"--db", db, "--out", out, "--allow-private", "--archive", fx,
		"--fetch-rate", "1000000/min", "--timeout", "5s", "--retries", "0", "--per-host", "8", "--archive-workers", "4", "--quiet"}
}

// writeCSV writes the references (and malformed rows when bad) as CSV.
func (w *studyWorld) writeCSV(t *testing.T, path string, bad bool) {
	var b strings.Builder
	cw := csv.NewWriter(&b)
	cw.Write([]string{"id", "url", "cited_at", "group"})
	for i, r := range w.refs {
		cw.Write([]string{r.id, r.url, r.citedAt, r.group})
		if bad && i == 3 {
			cw.Write([]string{"bad.1", "", "2015-01-01", "X"})
			cw.Write([]string{"bad.2", "ftp://example.org/x", "2015-01-01", "X"})
			cw.Write([]string{"bad.3", "http://example.org/y", "the day before", "X"})
		}
	}
	cw.Flush()
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (w *studyWorld) writeJSONL(t *testing.T, path string) {
	var b strings.Builder
	for _, r := range w.refs {
		js, _ := json.Marshal(map[string]string{"id": r.id, "url": r.url, "cited_at": r.citedAt, "group": r.group})
		b.Write(append(js, '\n'))
	}
	os.WriteFile(path, []byte(b.String()), 0o644)
}

func (w *studyWorld) writeBibTeX(t *testing.T, path string) {
	var b strings.Builder
	for _, r := range w.refs {
		fmt.Fprintf(&b, "@misc{%s,\n  url = {%s},\n  urldate = {%s},\n  group = {%s}\n}\n\n", r.id, r.url, r.bibDate, r.group)
	}
	os.WriteFile(path, []byte(b.String()), 0o644)
}

func (w *studyWorld) writeCSL(t *testing.T, path string) {
	var items []map[string]any
	for _, r := range w.refs {
		parts := []int{r.citedFrom.Year(), int(r.citedFrom.Month())}
		if len(r.citedAt) == 10 {
			parts = append(parts, r.citedFrom.Day())
		}
		items = append(items, map[string]any{"id": r.id, "type": "webpage", "URL": r.url,
			"accessed": map[string]any{"date-parts": [][]int{parts}}, "group": r.group})
	}
	js, _ := json.MarshalIndent(items, "", " ")
	os.WriteFile(path, js, 0o644)
}

// expectRow is the references.csv row the truth gives for reference r
// in wave 1 (checked_at left out: it is when the run started).
func (w *studyWorld) expectRow(r studyRef, window time.Duration, th drift.Thresholds) map[string]string {
	tr := w.byURL[r.url]
	row := map[string]string{"id": r.id, "url": r.url, "cited_at": r.citedAt, "group": r.group, "title": "", "wave": "1",
		"live_verdict": string(tr.verdict), "live_status": strconv.Itoa(tr.status)}
	broken := tr.verdict != audit.VerdictOK
	row["broken"] = strconv.FormatBool(broken)
	row["memento_url"], row["memento_datetime"], row["memento_distance_days"], row["memento_archive"] = "", "", "", ""
	row["representative"], row["drift"] = "false", "unmeasured"
	// The nearest memento by hand: distance to the citation interval,
	// ties to the earlier.
	best, bestAbs := -1, time.Duration(0)
	var bestD time.Duration
	for i, m := range tr.mementos {
		var d time.Duration
		switch {
		case m.Before(r.citedFrom):
			d = m.Sub(r.citedFrom)
		case !m.Before(r.citedTo):
			d = m.Sub(r.citedTo) + time.Nanosecond
		}
		a := d
		if a < 0 {
			a = -a
		}
		if best < 0 || a < bestAbs {
			best, bestAbs, bestD = i, a, d
		}
	}
	representative := false
	if best >= 0 {
		m := tr.mementos[best]
		key, _, _ := urls.TargetKey(r.url)
		row["memento_url"] = w.arch.URLOf(key, m, "")
		row["memento_datetime"] = m.UTC().Format(time.RFC3339)
		days := math.Round(bestD.Hours()/24*100) / 100
		if days == 0 {
			days = 0
		}
		row["memento_distance_days"] = strconv.FormatFloat(days, 'f', -1, 64)
		row["memento_archive"] = "fx"
		representative = bestAbs <= window
		row["representative"] = strconv.FormatBool(representative)
	}
	rot := broken
	if !broken && representative {
		band := th.Band(drift.Compare(textsim.MainText([]byte(tr.memBody)), textsim.MainText([]byte(tr.liveBody)), 1))
		row["drift"] = band
		rot = band == audit.BandMajor || band == audit.BandOffTopic
	}
	row["reference_rot"] = ""
	if broken || row["drift"] != "unmeasured" {
		row["reference_rot"] = strconv.FormatBool(rot)
	}
	return row
}

// readCSV reads a CSV file as maps by header.
func readCSV(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = r[i]
		}
		out = append(out, m)
	}
	return out
}

// withoutColumn returns a file's bytes with one CSV column blanked.
func withoutColumn(t *testing.T, path, col string) string {
	t.Helper()
	rows := readCSV(t, path)
	var b strings.Builder
	for _, r := range rows {
		r[col] = ""
		js, _ := json.Marshal(r)
		b.Write(append(js, '\n'))
	}
	return b.String()
}
