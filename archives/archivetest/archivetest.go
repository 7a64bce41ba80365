// Package archivetest runs a Memento web archive on loopback for tests
// (and for demos): an httptest server that the tests own and fill with
// mementos. No test of linkrot may reach a real archive; this one speaks
// what they speak (shared/notes/archive-protocols.md):
//
//   - /web/<URI-R>: a 302-style TimeGate (RFC 7089 pattern 2.1, the
//     Wayback Machine's): Accept-Datetime selects the closest memento,
//     Location points to it, Link lists original, timemap and the first,
//     last and selected mementos with their datetimes; no Accept-Datetime
//     selects the latest, a malformed one gives 400, no memento 404.
//   - /tg200/<URI-R>: a 200-style TimeGate (pattern 2.2, pywb's default):
//     the memento itself with Content-Location and Memento-Datetime.
//   - /web/<1-14 digits>[flags]/<URI-R>: Wayback replay. An exact
//     14-digit timestamp serves the memento (with a replay banner, except
//     in id_ mode, which serves the archived bytes); any other timestamp
//     redirects (302) to the closest capture, as the Wayback Machine does.
//     A resource without captures gives 404 without Memento-Datetime.
//   - /timemap/link/<URI-R>: a link-format TimeMap; with Options.PageSize,
//     an index TimeMap of paging TimeMaps /timemap/link/page/<n>/<URI-R>.
//   - POST /save and GET /save/status/<job id>: Save Page Now 2; a URL
//     containing "pending-forever" never leaves "pending".
//
// Every request is logged with its arrival time (Requests), so tests can
// count requests per window; Options.TooManyRequests makes the archive
// answer 429 with Retry-After first, Options.TimeGateLatest makes the
// TimeGates pick the latest memento instead of the closest.
package archivetest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/linkrot/linkrot/archives/memento"
	"github.com/linkrot/linkrot/urls"
)

// Memento is one capture the fixture archive holds.
type Memento struct {
	// Original is the URI-R, matched after urls.NormalizeURL, http and
	// https interchangeably (as the Wayback Machine does).
	Original string
	// Time is the capture instant (to the second).
	Time time.Time
	// Status is the archived status (default 200): a memento of a 404 is
	// served as 404 with Memento-Datetime (RFC 7089 §4.5.5).
	Status int
	// Body is the archived HTML.
	Body string
	// NoDatetime serves the capture without Memento-Datetime, like a
	// replay system that does not speak Memento.
	NoDatetime bool
	// LinkOriginal, when set, is announced as rel="original" instead of
	// Original: a memento of something else than the link says.
	LinkOriginal string
}

// Options configure the fixture archive.
type Options struct {
	// PageSize splits TimeMaps of more mementos into an index TimeMap and
	// paging TimeMaps of this many mementos (0: one TimeMap).
	PageSize int
	// TooManyRequests answers the first N requests 429 with
	// Retry-After: RetryAfter (default "1").
	TooManyRequests int
	RetryAfter      string
	// SavePolls is the number of status requests a save job answers
	// "pending" before "success" (default 1).
	SavePolls int
	// Banner is inserted after <body> in non-id_ replays (default a
	// Wayback-like toolbar).
	Banner string
	// TimeGateLatest makes both TimeGates select the latest memento
	// whatever the Accept-Datetime, as a TimeGate that ignores datetime
	// negotiation would; the Link header still lists the first and last
	// mementos, and the TimeMap all of them, so that a client preferring
	// the closest memento can still find it.
	TimeGateLatest bool
}

// Request is one request the archive received.
type Request struct {
	Time   time.Time
	Method string
	Path   string // the request URI
	Status int
}

// Archive is a running fixture archive.
type Archive struct {
	*httptest.Server
	opts Options

	mu       sync.Mutex
	mementos map[string][]Memento // by key(Original)
	log      []Request
	limited  int
	jobs     map[string]*job
	jobSeq   int
}

type job struct {
	url   string
	polls int
}

// New starts a fixture archive, closed at the end of the test.
func New(tb interface {
	Helper()
	Cleanup(func())
}, opts Options) *Archive {
	tb.Helper()
	if opts.RetryAfter == "" {
		opts.RetryAfter = "1"
	}
	if opts.SavePolls <= 0 {
		opts.SavePolls = 1
	}
	if opts.Banner == "" {
		opts.Banner = `<div id="wm-ipp">Wayback Machine toolbar: this page is an archived copy, captured by the fixture archive; navigate captures, share, report</div>`
	}
	a := &Archive{opts: opts, mementos: map[string][]Memento{}, jobs: map[string]*job{}}
	a.Server = httptest.NewServer(http.HandlerFunc(a.serve))
	tb.Cleanup(a.Close)
	return a
}

// Add stores mementos.
func (a *Archive) Add(ms ...Memento) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, m := range ms {
		m.Time = m.Time.UTC().Truncate(time.Second)
		k := key(m.Original)
		a.mementos[k] = append(a.mementos[k], m)
		sort.SliceStable(a.mementos[k], func(i, j int) bool { return a.mementos[k][i].Time.Before(a.mementos[k][j].Time) })
	}
}

// Requests returns the requests received so far, in arrival order.
func (a *Archive) Requests() []Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Request(nil), a.log...)
}

// Count returns how many requests had a URI starting with prefix.
func (a *Archive) Count(prefix string) int {
	n := 0
	for _, r := range a.Requests() {
		if strings.HasPrefix(r.Path, prefix) {
			n++
		}
	}
	return n
}

// Config returns the archive configuration pointing at the fixture, at
// rate requests a minute, with Save Page Now enabled.
func (a *Archive) Config(name string, rate float64) memento.Archive {
	return memento.Archive{
		Name:     name,
		TimeGate: a.URL + "/web/",
		TimeMap:  a.URL + "/timemap/link/",
		Rate:     rate,
		Save:     a.URL + "/save",
		SaveRate: rate,
	}
}

// Config200 is Config with the 200-style TimeGate.
func (a *Archive) Config200(name string, rate float64) memento.Archive {
	c := a.Config(name, rate)
	c.TimeGate = a.URL + "/tg200/"
	return c
}

// Flag returns the --archive value of Config.
func (a *Archive) Flag(name, rate string) string {
	return fmt.Sprintf("%s=%s/web/,timemap=%s/timemap/link/,rate=%s,save=%s/save,save-rate=%s", name, a.URL, a.URL, rate, a.URL, rate)
}

// URLOf returns the replay URL of a capture of original at t, with flags
// ("" or "id_").
func (a *Archive) URLOf(original string, t time.Time, flags string) string {
	return a.URL + "/web/" + memento.Timestamp14(t) + flags + "/" + original
}

func key(original string) string {
	n, err := urls.NormalizeURL(original)
	if err != nil {
		n = original
	}
	n = strings.TrimPrefix(strings.TrimPrefix(n, "https://"), "http://")
	// Like the Wayback Machine's canonicalisation, percent-encoded and
	// raw forms of a URL are one resource.
	if d, err := url.PathUnescape(n); err == nil {
		n = d
	}
	return n
}

func (a *Archive) captures(original string) []Memento {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Memento(nil), a.mementos[key(original)]...)
}

// closest returns the capture nearest to t (the earlier on a tie).
func closest(ms []Memento, t time.Time) (Memento, bool) {
	cands := make([]memento.Candidate, len(ms))
	for i, m := range ms {
		cands[i] = memento.Candidate{URL: strconv.Itoa(i), Datetime: m.Time}
	}
	c, ok := memento.Nearest(cands, t)
	if !ok {
		return Memento{}, false
	}
	i, _ := strconv.Atoi(c.URL)
	return ms[i], true
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(s int) {
	if w.status == 0 {
		w.status = s
	}
	w.ResponseWriter.WriteHeader(s)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (a *Archive) serve(w http.ResponseWriter, r *http.Request) {
	sw := &statusWriter{ResponseWriter: w}
	arrived := time.Now()
	defer func() {
		a.mu.Lock()
		a.log = append(a.log, Request{Time: arrived, Method: r.Method, Path: r.RequestURI, Status: sw.status})
		a.mu.Unlock()
	}()
	a.mu.Lock()
	limited := a.limited < a.opts.TooManyRequests
	if limited {
		a.limited++
	}
	a.mu.Unlock()
	if limited {
		sw.Header().Set("Retry-After", a.opts.RetryAfter)
		http.Error(sw, "too many requests", http.StatusTooManyRequests)
		return
	}
	// The URI-R follows the route prefix verbatim (ServeMux would clean
	// the "//" of "http://").
	uri := r.RequestURI
	switch {
	case strings.HasPrefix(uri, "/save/status/"):
		a.saveStatus(sw, strings.TrimPrefix(uri, "/save/status/"))
	case uri == "/save" || uri == "/save/":
		a.save(sw, r)
	case strings.HasPrefix(uri, "/timemap/link/page/"):
		rest := strings.TrimPrefix(uri, "/timemap/link/page/")
		n, orig, _ := strings.Cut(rest, "/")
		page, err := strconv.Atoi(n)
		if err != nil {
			http.NotFound(sw, r)
			return
		}
		a.timemap(sw, orig, page)
	case strings.HasPrefix(uri, "/timemap/link/"):
		a.timemap(sw, strings.TrimPrefix(uri, "/timemap/link/"), -1)
	case strings.HasPrefix(uri, "/tg200/"):
		a.timegate(sw, r, strings.TrimPrefix(uri, "/tg200/"), true)
	case strings.HasPrefix(uri, "/web/"):
		rest := strings.TrimPrefix(uri, "/web/")
		if rest != "" && rest[0] >= '0' && rest[0] <= '9' {
			a.replay(sw, r, uri)
			return
		}
		a.timegate(sw, r, rest, false)
	default:
		http.NotFound(sw, r)
	}
}

func (a *Archive) links(orig string, m *Memento, list []Memento) string {
	var parts []string
	parts = append(parts, fmt.Sprintf(`<%s>; rel="original"`, orig))
	parts = append(parts, fmt.Sprintf(`<%s/web/%s>; rel="timegate"`, a.URL, orig))
	parts = append(parts, fmt.Sprintf(`<%s/timemap/link/%s>; rel="timemap"; type="application/link-format"`, a.URL, orig))
	for i, c := range list {
		var rel []string
		if i == 0 {
			rel = append(rel, "first")
		}
		if i == len(list)-1 {
			rel = append(rel, "last")
		}
		if m == nil || !c.Time.Equal(m.Time) {
			if len(rel) == 0 {
				continue
			}
		}
		rel = append(rel, "memento")
		parts = append(parts, fmt.Sprintf(`<%s>; rel="%s"; datetime="%s"`, a.URLOf(orig, c.Time, ""), strings.Join(rel, " "), memento.FormatDatetime(c.Time)))
	}
	return strings.Join(parts, ",\n ")
}

// timegate negotiates: 302 to the closest memento, or (style200) the
// memento itself with Content-Location.
func (a *Archive) timegate(w http.ResponseWriter, r *http.Request, orig string, style200 bool) {
	list := a.captures(orig)
	want := time.Now()
	if ad := r.Header.Get("Accept-Datetime"); ad != "" {
		t, err := memento.ParseDatetime(ad)
		if err != nil {
			w.Header().Set("Vary", "accept-datetime")
			http.Error(w, "malformed Accept-Datetime", http.StatusBadRequest)
			return
		}
		want = t
	}
	m, ok := closest(list, want)
	if ok && a.opts.TimeGateLatest {
		m = list[len(list)-1]
	}
	w.Header().Set("Vary", "accept-datetime")
	if !ok {
		http.Error(w, "no memento", http.StatusNotFound)
		return
	}
	w.Header().Set("Link", a.links(orig, &m, list))
	if style200 {
		w.Header().Set("Content-Location", a.URLOf(orig, m.Time, ""))
		a.writeMemento(w, orig, m, true)
		return
	}
	w.Header().Set("Location", a.URLOf(orig, m.Time, ""))
	w.WriteHeader(http.StatusFound)
}

// replay serves /web/<ts>[flags]/<orig>.
func (a *Archive) replay(w http.ResponseWriter, r *http.Request, uri string) {
	wb, ok := memento.ParseWaybackURL(a.URL + uri)
	if !ok {
		http.NotFound(w, r)
		return
	}
	list := a.captures(wb.Original)
	ts := wb.Timestamp + strings.Repeat("0", 14-len(wb.Timestamp))
	want, err := memento.ParseTimestamp14(ts)
	if err != nil {
		want = time.Now()
	}
	m, ok := closest(list, want)
	if !ok {
		http.Error(w, "Wayback Machine has not archived that URL.", http.StatusNotFound)
		return
	}
	if memento.Timestamp14(m.Time) != wb.Timestamp {
		w.Header().Set("Location", a.URLOf(wb.Original, m.Time, wb.Flags))
		w.WriteHeader(http.StatusFound)
		return
	}
	a.writeMemento(w, wb.Original, m, wb.Flags != "id_")
}

func (a *Archive) writeMemento(w http.ResponseWriter, orig string, m Memento, banner bool) {
	if !m.NoDatetime {
		w.Header().Set("Memento-Datetime", memento.FormatDatetime(m.Time))
		linkOrig := orig
		if m.LinkOriginal != "" {
			linkOrig = m.LinkOriginal
		}
		w.Header().Set("Link", a.links(linkOrig, &m, a.captures(orig)))
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	body := m.Body
	if banner {
		if i := strings.Index(body, "<body>"); i >= 0 {
			body = body[:i+6] + a.opts.Banner + body[i+6:]
		} else {
			body = a.opts.Banner + body
		}
	}
	status := m.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	fmt.Fprint(w, body)
}

// timemap writes the TimeMap of orig; page -1 is the whole TimeMap (or the
// index when paged).
func (a *Archive) timemap(w http.ResponseWriter, orig string, page int) {
	list := a.captures(orig)
	if len(list) == 0 {
		http.Error(w, "no captures", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/link-format")
	var b strings.Builder
	fmt.Fprintf(&b, "<%s>;rel=\"original\",\n<%s/web/%s>; rel=\"timegate\",\n", orig, a.URL, orig)
	size := a.opts.PageSize
	if size > 0 && len(list) > size && page < 0 {
		// Index TimeMap: only other TimeMaps (RFC 7089 §5.1.1).
		fmt.Fprintf(&b, "<%s/timemap/link/%s>; rel=\"self\"; type=\"application/link-format\"", a.URL, orig)
		for p := 0; p*size < len(list); p++ {
			fmt.Fprintf(&b, ",\n<%s/timemap/link/page/%d/%s>\n  ; rel=\"timemap\"; type=\"application/link-format\"\n  ; from=\"%s\"", a.URL, p, orig, memento.FormatDatetime(list[p*size].Time))
		}
		b.WriteString("\n")
		fmt.Fprint(w, b.String())
		return
	}
	from, to := 0, len(list)
	if page >= 0 && size > 0 {
		from, to = page*size, min((page+1)*size, len(list))
		if from >= len(list) {
			http.Error(w, "no such page", http.StatusNotFound)
			return
		}
	}
	fmt.Fprintf(&b, "<%s/timemap/link/%s>; rel=\"self\"; type=\"application/link-format\"", a.URL, orig)
	for i := from; i < to; i++ {
		m := list[i]
		rel := "memento"
		if i == 0 {
			rel = "first memento"
		}
		if i == len(list)-1 {
			rel = "last " + rel
		}
		fmt.Fprintf(&b, ",\n<%s>\n  ; rel=\"%s\"; datetime=\"%s\"", a.URLOf(orig, m.Time, ""), rel, memento.FormatDatetime(m.Time))
	}
	b.WriteString("\n")
	fmt.Fprint(w, b.String())
}

func (a *Archive) save(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	if err := r.ParseForm(); err != nil || r.PostForm.Get("url") == "" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"status":"error","message":"missing url"}`)
		return
	}
	u := r.PostForm.Get("url")
	a.mu.Lock()
	a.jobSeq++
	id := fmt.Sprintf("spn2-%04d", a.jobSeq)
	a.jobs[id] = &job{url: u}
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]string{"url": u, "job_id": id})
}

func (a *Archive) saveStatus(w http.ResponseWriter, rawID string) {
	id, _ := url.PathUnescape(rawID)
	a.mu.Lock()
	j := a.jobs[id]
	var done bool
	var u string
	if j != nil {
		j.polls++
		u = j.url
		done = j.polls > a.opts.SavePolls && !strings.Contains(j.url, "pending-forever")
	}
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case j == nil, !done:
		// SPN2 answers "pending" for unknown jobs too.
		fmt.Fprintf(w, `{"status":"pending","job_id":%q}`, id)
	default:
		now := time.Now().UTC().Truncate(time.Second)
		a.Add(Memento{Original: u, Time: now, Body: "<html><body><p>captured on request</p></body></html>"})
		json.NewEncoder(w).Encode(map[string]string{"status": "success", "job_id": id,
			"timestamp": memento.Timestamp14(now), "original_url": u})
	}
}
