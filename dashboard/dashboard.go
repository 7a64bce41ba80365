// Package dashboard serves a live, read-only view of a linkrot database:
// the runs over time with the trend of broken, drifted and unprotected
// links, the latest run with the HTML report's filters and grouping, one
// page per target and per crawled page, search, and the progress of a
// run in progress over Server-Sent Events.
//
// Pages are rendered on the server with html/template in the HTML report's
// look (its stylesheet is reused, see report.StyleSheet) and work without
// JavaScript; the small inline script only submits filters on change and
// follows a running run live. Nothing loads from elsewhere: the Content
// Security Policy allows only the page's own inline style and script, by
// hash. Every string read from the database came from crawled pages and is
// hostile: it is escaped by html/template, and only http and https URLs
// ever become links.
//
// The handler never writes. State-changing actions (re-check a link,
// dismiss a finding) are handled elsewhere (linkrot serve); the dashboard
// only renders their forms, and only when Options.ActionsEnabled.
package dashboard

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store"
	"github.com/linkrot/linkrot/urls"
)

// Store is what the dashboard reads (store.Dashboard). Open it read-only
// (the adapters' OpenReadOnly) so that the dashboard cannot write.
type Store = store.Dashboard

// Options configure the dashboard. The zero value serves a read-only
// dashboard at the root of the server.
type Options struct {
	// ActionsEnabled renders the "re-check this link" and "dismiss this
	// finding" forms, which POST to Prefix+"/actions/recheck" (field
	// target_id) and Prefix+"/actions/dismiss" (field finding_id), each
	// with the field csrf set to CSRFToken. The caller handles those
	// POSTs; without it the dashboard shows no form.
	ActionsEnabled bool
	// CSRFToken is the value of every form's csrf field.
	CSRFToken string
	// Prefix is the path the handler is mounted under, without a
	// trailing slash ("" for the root). Links the pages make start with
	// it; the handler itself expects the prefix already stripped.
	Prefix string
	// PollInterval is how often /events reads the running runs' counts
	// (default 2s).
	PollInterval time.Duration
	// StreamLimit ends an /events stream after this long (default 30
	// minutes); the browser's EventSource reconnects.
	StreamLimit time.Duration
	// Logger receives errors that a page answers with 500 (default
	// slog.Default()).
	Logger *slog.Logger
	// Generator names the program in the pages' footer (e.g.
	// "linkrot 0.1.0").
	Generator string
}

// Bounds of what one page shows.
const (
	rowsPerPage   = 100
	trendRuns     = 60
	runsListed    = 50
	targetChecks  = 100
	targetLinks   = 500
	targetArchive = 100
	searchLimit   = 50
	maxQuery      = 300
	maxPageURL    = 4096
)

type handler struct {
	db    Store
	opts  Options
	log   *slog.Logger
	mux   *http.ServeMux
	cache runCache
}

// New returns the dashboard over db. Routes (relative to the mount
// point): / overview, /broken /links /pages the tables of a run (query
// run=N, default the latest finished run, plus the filters), /target/{id},
// /page?url=U, /search?q=S, /events (Server-Sent Events).
func New(db Store, opts Options) http.Handler {
	if opts.PollInterval <= 0 {
		opts.PollInterval = 2 * time.Second
	}
	if opts.StreamLimit <= 0 {
		opts.StreamLimit = 30 * time.Minute
	}
	opts.Prefix = strings.TrimRight(opts.Prefix, "/")
	h := &handler{db: db, opts: opts, log: opts.Logger, mux: http.NewServeMux()}
	if h.log == nil {
		h.log = slog.Default()
	}
	h.cache.entries = make(map[int64]*runEntry)
	h.mux.HandleFunc("GET /{$}", h.page(h.overview))
	h.mux.HandleFunc("GET /broken", h.page(h.broken))
	h.mux.HandleFunc("GET /links", h.page(h.links))
	h.mux.HandleFunc("GET /pages", h.page(h.pages))
	h.mux.HandleFunc("GET /target/{id}", h.page(h.target))
	h.mux.HandleFunc("GET /page", h.page(h.sitePage))
	h.mux.HandleFunc("GET /search", h.page(h.search))
	h.mux.HandleFunc("GET /events", h.events)
	h.mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		h.fail(w, r, errNotFound)
	})
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("X-Frame-Options", "DENY")
	h.mux.ServeHTTP(w, r)
}

// errBadRequest and errNotFound are answered with 400 and 404.
var (
	errBadRequest = errors.New("bad request")
	errNotFound   = errors.New("not found")
)

// page adapts a view builder: it renders the view's template, or the
// error page with the status the error calls for.
func (h *handler) page(build func(*http.Request) (*view, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, err := build(r)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		if v.fresh {
			// Data read for this request only (not shared through the
			// cache): redact URL passwords an older database may hold.
			urls.RedactStrings(&v.Data)
		}
		h.render(w, r, http.StatusOK, v)
	}
}

func (h *handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, msg := http.StatusInternalServerError, "The dashboard could not read the database."
	switch {
	case errors.Is(err, errBadRequest):
		status, msg = http.StatusBadRequest, "That request is not valid."
	case errors.Is(err, errNotFound), errors.Is(err, audit.ErrNotFound):
		status, msg = http.StatusNotFound, "Nothing here: no such run, target or page."
	case errors.Is(err, context.Canceled):
		return
	default:
		h.log.Error("dashboard", "path", r.URL.Path, "err", err)
	}
	h.render(w, r, status, &view{Title: http.StatusText(status), Tmpl: "error", Data: msg})
}

// runParam reads the run query parameter: 0 when absent.
func runParam(r *http.Request) (int64, error) {
	s := r.URL.Query().Get("run")
	if s == "" {
		return 0, nil
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, errBadRequest
	}
	return id, nil
}

// pickRun returns the run the query names, or the latest run that is not
// running (a running run is shown as in progress, its tables once it
// ends); nil when the database has none.
func (h *handler) pickRun(r *http.Request) (*audit.Run, error) {
	id, err := runParam(r)
	if err != nil {
		return nil, err
	}
	if id != 0 {
		return h.db.Run(r.Context(), id)
	}
	runs, err := h.db.RunSummaries(r.Context(), runsListed)
	if err != nil {
		return nil, err
	}
	for i := range runs {
		if runs[i].Status != audit.RunRunning {
			return &runs[i].Run, nil
		}
	}
	if len(runs) > 0 {
		return &runs[0].Run, nil
	}
	return nil, nil
}

// runCache keeps the loaded data of the last few finished runs: a
// filter change re-renders the same run without reading it again. A
// running run is never cached; an entry expires after a short time so
// that history applied after the run shows up.
type runCache struct {
	mu      sync.Mutex
	entries map[int64]*runEntry
}

type runEntry struct {
	data     *runData
	finished time.Time
	loaded   time.Time
}

const (
	cacheRuns = 4
	cacheTTL  = 30 * time.Second
)

func (c *runCache) get(run *audit.Run) *runData {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[run.ID]
	if e == nil || !e.finished.Equal(run.FinishedAt) || time.Since(e.loaded) > cacheTTL {
		return nil
	}
	return e.data
}

func (c *runCache) put(run *audit.Run, d *runData) {
	if run.Status == audit.RunRunning || run.FinishedAt.IsZero() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= cacheRuns {
		var oldest int64
		var at time.Time
		for id, e := range c.entries {
			if oldest == 0 || e.loaded.Before(at) {
				oldest, at = id, e.loaded
			}
		}
		delete(c.entries, oldest)
	}
	c.entries[run.ID] = &runEntry{data: d, finished: run.FinishedAt, loaded: time.Now()}
}
