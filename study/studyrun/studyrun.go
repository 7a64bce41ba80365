// Package studyrun is the run side of linkrot study: the reference list
// stored as a run's links, the study's archives stage and the waves read
// back from the store. The command (cmd/linkrot) starts the run with
// linkrot.Start and hands this package's Archiver to it.
package studyrun

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/archives/memento"
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/drift"
	"github.com/linkrot/linkrot/drift/textsim"
	"github.com/linkrot/linkrot/httpx"
	"github.com/linkrot/linkrot/study"
	"github.com/linkrot/linkrot/urls"
)

// The reference list is stored
// as the run's links (one link per reference, so that the run's check
// stage checks each distinct URL once), the study's archives stage (one
// TimeMap per URL and archive serving all its citations, drift of the
// live page against each citation's representative memento) and the
// waves read back from the database.

// studyLinksPerPage is how many references one stored page of the
// reference list holds.
const studyLinksPerPage = 1000

// studyPageURL names the stored page of the reference list that holds the
// references from index first on: not a web URL, so that no target is
// made of it.
func studyPageURL(digest string, first int) string {
	return fmt.Sprintf("urn:linkrot:study:%s:%d", digest, first+1)
}

// SaveLinks stores the reference list as the run's pages, one link
// per reference. A page the run holds already is kept (the store keeps
// the first page of a URL), so a study killed while storing them stores
// the rest when resumed.
func SaveLinks(ctx context.Context, db Store, run *audit.Run, in *study.Input) error {
	now := time.Now().UTC()
	refs := in.References
	for first := 0; first < len(refs); first += studyLinksPerPage {
		end := min(first+studyLinksPerPage, len(refs))
		p := &audit.Page{RequestURL: studyPageURL(in.Digest, first), Status: 200, ContentType: "text/plain", FetchedAt: now}
		p.URL = p.RequestURL
		p.Links = make([]audit.Link, 0, end-first)
		for _, r := range refs[first:end] {
			text := r.ID
			if len(text) > 200 {
				text = text[:200]
			}
			p.Links = append(p.Links, audit.Link{Element: "a", Attr: "href", Href: r.URL, Text: text, Line: r.Line})
		}
		if err := db.SaveCrawl(ctx, run.ID, []*audit.Page{p}, nil); err != nil {
			return fmt.Errorf("store the references: %w", err)
		}
	}
	return db.MarkStage(ctx, run.ID, audit.StageCrawl)
}

// studyKey is the stored (normalized) URL of a cited URL: its target's.
func studyKey(u string) string {
	if k, _, ok := urls.TargetKey(u); ok {
		return k
	}
	return u
}

// studyTargets are the run's targets of the reference list: their URLs
// and links, in target ID order.
type studyTargets struct {
	ids   []int64
	url   map[int64]string
	links map[int64][]int64
}

func readStudyTargets(ctx context.Context, db Store, runID int64) (*studyTargets, error) {
	t := &studyTargets{url: map[int64]string{}, links: map[int64][]int64{}}
	err := db.EachLinkTarget(ctx, runID, func(linkID, targetID int64, targetURL string) error {
		if _, ok := t.url[targetID]; !ok {
			t.ids = append(t.ids, targetID)
			t.url[targetID] = targetURL
		}
		t.links[targetID] = append(t.links[targetID], linkID)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(t.ids)
	for _, l := range t.links {
		slices.Sort(l)
	}
	return t, nil
}

// Store is what a study run needs of the store: the run's pages and
// checks, its mementos and drifts, and its settings and stages.
type Store interface {
	SaveCrawl(ctx context.Context, runID int64, pages []*audit.Page, queued []audit.FrontierEntry) error
	MarkStage(ctx context.Context, runID int64, stage string) error
	EachLinkTarget(ctx context.Context, runID int64, fn func(linkID, targetID int64, targetURL string) error) error
	EachCheck(ctx context.Context, runID int64, fn func(c *audit.Check) error) error
	Mementos(ctx context.Context, runID int64) ([]audit.Memento, error)
	SaveMementos(ctx context.Context, ms []audit.Memento) error
	Drifts(ctx context.Context, runID int64) ([]audit.Drift, error)
	SaveDrifts(ctx context.Context, ds []audit.Drift) error
	DriftFailures(ctx context.Context, runID int64) ([]audit.DriftFailure, error)
	SaveDriftFailures(ctx context.Context, fs []audit.DriftFailure) error
	Run(ctx context.Context, id int64) (*audit.Run, error)
	RunSettings(ctx context.Context, runID int64) (fingerprint string, settings []byte, err error)
	Stages(ctx context.Context, runID int64) (map[string]time.Time, error)
}

// Options configures an Archiver.
type Options struct {
	Client     *memento.Client   // the Memento client of the run's archives stage
	Archives   []memento.Archive // the archives asked
	Refs       *study.Input      // the reference list
	Window     time.Duration     // the representative memento's window
	Shingle    int               // drift's shingle size (< 1: 3)
	Thresholds drift.Thresholds  // drift's bands
	MaxBody    int64             // body cap of live pages and mementos
	Workers    int               // URLs worked on at once (< 1: 1)
	Log        *slog.Logger
}

// NewArchiver returns the archives stage of a study run on db.
func NewArchiver(db Store, o Options) *Archiver {
	a := &Archiver{db: db, client: o.Client, archives: o.Archives, refs: o.Refs, window: o.Window,
		shingle: o.Shingle, th: o.Thresholds, maxBody: o.MaxBody, workers: max(o.Workers, 1), log: o.Log}
	if a.shingle < 1 {
		a.shingle = 3
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	return a
}

// Archiver is the archives stage of a study run (a
// linkrot.Archiver), after the checks, in two steps that each store as
// they go, so that a killed study repeats neither: first, for every
// distinct URL without mementos stored, each archive's TimeMap once, and
// the memento nearest each citation (a row per reference and archive, as
// the archives stage stores its nearest mementos; a URL's rows are
// stored together, so a URL with rows is done); then, for every
// representative nearest memento of a URL whose live page leads to
// content, the drift of the live page against it (the live page fetched
// once per URL), unless a measure or a failure of it is stored.
type Archiver struct {
	db       Store
	client   *memento.Client
	archives []memento.Archive
	refs     *study.Input
	window   time.Duration
	shingle  int
	th       drift.Thresholds
	maxBody  int64
	workers  int
	log      *slog.Logger
	run      *audit.Run
}

func (a *Archiver) Begin(_ context.Context, run *audit.Run) error { a.run = run; return nil }
func (a *Archiver) Checked(*audit.Check)                          {}
func (a *Archiver) Close()                                        {}

// studyURLResult is what the stage stores of one URL at a step.
type studyURLResult struct {
	mementos []audit.Memento
	drifts   []audit.Drift
	failures []audit.DriftFailure
}

func (a *Archiver) Finish(ctx context.Context) error {
	run := a.run
	ts, err := readStudyTargets(ctx, a.db, run.ID)
	if err != nil {
		return err
	}
	done := map[int64]bool{}
	ms, err := a.db.Mementos(ctx, run.ID)
	if err != nil {
		return err
	}
	for _, m := range ms {
		done[m.TargetID] = true
	}
	ms = nil
	checks := map[int64]audit.Verdict{}
	err = a.db.EachCheck(ctx, run.ID, func(c *audit.Check) error {
		checks[c.TargetID] = c.Verdict
		return nil
	})
	if err != nil {
		return err
	}
	cited := map[string][]study.CitedAt{}
	for _, r := range a.refs.References {
		k := studyKey(r.URL)
		cited[k] = append(cited[k], r.CitedAt)
	}
	var todo []int64
	for _, id := range ts.ids {
		if !done[id] {
			todo = append(todo, id)
		}
	}
	if n := len(ts.ids) - len(todo); n > 0 {
		a.log.Info("study: TimeMaps asked before", "urls", n)
	}
	err = a.each(ctx, todo, func(id int64) (studyURLResult, bool) {
		return a.timeMaps(ctx, run.ID, id, ts.url[id], ts.links[id], cited[ts.url[id]])
	})
	if err != nil {
		return err
	}
	cited = nil
	if ms, err = a.db.Mementos(ctx, run.ID); err != nil {
		return err
	}
	// The drift step: the representative nearest mementos of live URLs
	// not measured yet.
	measured := map[[2]string]bool{}
	key := func(target int64, u string) [2]string { return [2]string{strconv.FormatInt(target, 10), u} }
	ds, err := a.db.Drifts(ctx, run.ID)
	if err != nil {
		return err
	}
	for _, d := range ds {
		measured[key(d.TargetID, d.ReferenceURL)] = true
	}
	ds = nil
	fs, err := a.db.DriftFailures(ctx, run.ID)
	if err != nil {
		return err
	}
	for _, f := range fs {
		measured[key(f.TargetID, f.ReferenceURL)] = true
	}
	need := map[int64][]audit.Memento{}
	var targets []int64
	for _, m := range ms {
		if !m.Nearest || !m.Representative || m.URL == "" || study.Broken(checks[m.TargetID]) != study.No {
			continue
		}
		k := key(m.TargetID, m.URL)
		if measured[k] {
			continue
		}
		measured[k] = true
		if need[m.TargetID] == nil {
			targets = append(targets, m.TargetID)
		}
		need[m.TargetID] = append(need[m.TargetID], m)
	}
	ms = nil
	slices.Sort(targets)
	return a.each(ctx, targets, func(id int64) (studyURLResult, bool) {
		return a.drift(ctx, run.ID, id, ts.url[id], need[id])
	})
}

// each runs fn for the targets on the stage's workers and stores what
// they return through one writer. It returns ctx's error when it ended
// first.
func (a *Archiver) each(ctx context.Context, targets []int64, fn func(id int64) (studyURLResult, bool)) error {
	if len(targets) == 0 {
		return nil
	}
	results := make(chan studyURLResult, 64)
	werr := make(chan error, 1)
	go func() { werr <- a.write(context.WithoutCancel(ctx), results) }()
	jobs := make(chan int64)
	var wg sync.WaitGroup
	for range max(a.workers, 1) {
		wg.Go(func() {
			for id := range jobs {
				if r, ok := fn(id); ok && ctx.Err() == nil {
					results <- r
				}
			}
		})
	}
feed:
	for _, id := range targets {
		select {
		case jobs <- id:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	close(results)
	if err := <-werr; err != nil {
		return err
	}
	return ctx.Err()
}

// write stores the results as they come, in batches: at most every
// quarter second or 256 URLs. A URL's rows are in one batch.
func (a *Archiver) write(ctx context.Context, in <-chan studyURLResult) error {
	var batch []studyURLResult
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		var ms []audit.Memento
		var ds []audit.Drift
		var fs []audit.DriftFailure
		for _, r := range batch {
			ms, ds, fs = append(ms, r.mementos...), append(ds, r.drifts...), append(fs, r.failures...)
		}
		batch = batch[:0]
		if len(ds) > 0 {
			if err := a.db.SaveDrifts(ctx, ds); err != nil {
				return err
			}
		}
		if len(fs) > 0 {
			if err := a.db.SaveDriftFailures(ctx, fs); err != nil {
				return err
			}
		}
		if len(ms) > 0 {
			return a.db.SaveMementos(ctx, ms)
		}
		return nil
	}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var err error
	for {
		select {
		case r, ok := <-in:
			if !ok {
				if err == nil {
					err = flush()
				}
				return err
			}
			if err != nil {
				continue // drain
			}
			batch = append(batch, r)
			if len(batch) >= 256 {
				err = flush()
			}
		case <-tick.C:
			if err == nil {
				err = flush()
			}
		}
	}
}

// timeMaps asks every archive's TimeMap of u once and judges all its
// citations (one link each) against it: per citation and archive the
// nearest memento, and across archives the nearest of all (Nearest).
// ok is false when ctx ended before the URL was done: nothing of it is
// stored then.
func (a *Archiver) timeMaps(ctx context.Context, runID, targetID int64, u string, links []int64, cited []study.CitedAt) (studyURLResult, bool) {
	var res studyURLResult
	now := time.Now().UTC()
	if len(cited) > len(links) {
		cited = cited[:len(links)]
	}
	// all[i] are archive i's mementos, oldest first.
	all := make([][]study.Memento, len(a.archives))
	type tmInfo struct {
		count       int
		first, last time.Time
		status, err string
	}
	info := make([]tmInfo, len(a.archives))
	for i, ar := range a.archives {
		tm, err := a.client.TimeMap(ctx, ar, u)
		if ctx.Err() != nil {
			return res, false
		}
		switch {
		case errors.Is(err, memento.ErrNoMemento):
			info[i] = tmInfo{status: audit.LookupNoMemento, err: "no memento"}
		case err != nil:
			info[i] = tmInfo{status: audit.LookupFailed, err: truncateStr(err.Error(), 300)}
		case len(tm.Mementos) == 0:
			info[i] = tmInfo{status: audit.LookupNoMemento, err: "no memento"}
		default:
			info[i] = tmInfo{status: audit.LookupFound, count: len(tm.Mementos),
				first: tm.Mementos[0].Datetime, last: tm.Mementos[len(tm.Mementos)-1].Datetime}
			for _, c := range tm.Mementos {
				all[i] = append(all[i], study.Memento{Datetime: c.Datetime.UTC(), URL: c.URL, Archive: ar.Name})
			}
		}
	}
	for j, at := range cited {
		bestArchive := -1
		var bestAt time.Time
		var bestAbs time.Duration
		rows := make([]audit.Memento, len(a.archives))
		for i, ar := range a.archives {
			m := audit.Memento{RunID: runID, LinkID: links[j], TargetID: targetID, Archive: ar.Name,
				Wanted: at.From, WantedFrom: "versiondate", URIR: u, CheckedAt: now,
				Count: info[i].count, First: info[i].first, Last: info[i].last, Status: info[i].status, Error: info[i].err}
			if k := study.Nearest(at, all[i]); k >= 0 {
				c := all[i][k]
				m.URL, m.Datetime, m.Distance = c.URL, c.Datetime, absDur(study.Distance(at, c.Datetime))
				m.Representative = m.Distance <= a.window
				// Across archives: the nearest, a tie to the earlier,
				// then to the archive asked first (study.Nearest's rule).
				if bestArchive < 0 || m.Distance < bestAbs || (m.Distance == bestAbs && c.Datetime.Before(bestAt)) {
					bestArchive, bestAt, bestAbs = i, c.Datetime, m.Distance
				}
			}
			rows[i] = m
		}
		if bestArchive >= 0 {
			rows[bestArchive].Nearest = true
		}
		res.mementos = append(res.mementos, rows...)
	}
	return res, true
}

// drift measures the live page of u (fetched once) against each memento
// of need: a measure or a failure each.
func (a *Archiver) drift(ctx context.Context, runID, targetID int64, u string, need []audit.Memento) (studyURLResult, bool) {
	var res studyURLResult
	now := time.Now().UTC()
	live, final, why := a.liveText(ctx, u)
	if ctx.Err() != nil {
		return res, false
	}
	for _, m := range need {
		fail := func(liveURL, why string) {
			res.failures = append(res.failures, audit.DriftFailure{RunID: runID, LinkID: m.LinkID, TargetID: targetID, Kind: "memento",
				ReferenceURL: m.URL, LiveURL: liveURL, Reason: truncateStr(why, 300), MeasuredAt: now})
		}
		if why != "" {
			fail(u, why)
			continue
		}
		var ar memento.Archive
		for _, x := range a.archives {
			if x.Name == m.Archive {
				ar = x
			}
		}
		ref, note, mwhy := a.mementoText(ctx, ar, m, u)
		if ctx.Err() != nil {
			return res, false
		}
		if mwhy != "" {
			fail(final, mwhy)
			continue
		}
		ms := drift.Compare(ref, live, a.shingle)
		d := audit.Drift{RunID: runID, LinkID: m.LinkID, TargetID: targetID, Kind: "memento",
			ReferenceURL: m.URL, ReferenceTime: m.Datetime, LiveURL: final,
			SimHashDistance: ms.SimHash, Jaccard: ms.Jaccard, Dice: ms.Dice, Cosine: ms.Cosine,
			WordsReference: ms.WordsReference, WordsLive: ms.WordsLive, WordChange: ms.WordChange,
			TextMeasured: ms.TextMeasured, Band: a.th.Band(ms), MeasuredAt: now, ReferenceNote: note}
		d.ExcerptReference, d.ExcerptLive = drift.Excerpts(ref, live, 25)
		res.drifts = append(res.drifts, d)
	}
	return res, true
}

// liveText fetches the live page's main text, as the archives stage
// does for drift; why says why there is none.
func (a *Archiver) liveText(ctx context.Context, u string) (text, final, why string) {
	resp, _, _, err := a.client.Fetch(ctx, u, a.maxBody)
	if err != nil {
		return "", u, "live page: " + err.Error()
	}
	final = resp.URL.String()
	ct := resp.Header.Get("Content-Type")
	switch {
	case resp.Status < 200 || resp.Status > 299:
		return "", final, fmt.Sprintf("live page answered status %d", resp.Status)
	case !httpx.IsHTML(ct, resp.Body):
		return "", final, "live page is not HTML (Content-Type " + truncateStr(ct, 100) + ")"
	}
	return textsim.MainText(httpx.DecodeHTML(resp.Body, ct)), final, ""
}

// mementoText fetches memento m (its raw form when the archive has one)
// and returns its main text and how it was had ("raw" or why not).
func (a *Archiver) mementoText(ctx context.Context, ar memento.Archive, m audit.Memento, uriR string) (text, note, why string) {
	raw, note := m.URL, "raw"
	if ar.Name != "" {
		var isRaw bool
		if raw, isRaw = ar.RawURL(m.URL, uriR, m.Datetime); !isRaw {
			note = "not raw: measured on the replayed page"
		}
	}
	mr, err := a.client.FetchMemento(ctx, raw, a.maxBody)
	switch {
	case err != nil:
		return "", note, "memento: " + err.Error()
	case mr.Status < 200 || mr.Status > 299:
		return "", note, fmt.Sprintf("memento answered status %d", mr.Status)
	case mr.Datetime.IsZero():
		return "", note, "memento answered without Memento-Datetime: no reference"
	case len(mr.Body) == 0:
		return "", note, "memento has an empty body"
	}
	return textsim.MainText(httpx.DecodeHTML(mr.Body, mr.Header.Get("Content-Type"))), note, ""
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func truncateStr(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// Wave reads a study run's results back as a wave: per cited URL
// (Reference.URL) the live check and the mementos nearest its citations,
// each with the drift measured against it. A URL without a check is not
// in the wave (the run did not get to it).
func Wave(ctx context.Context, db Store, run *audit.Run, number int, in *study.Input) (study.Wave, error) {
	w := study.Wave{Number: number, CheckedAt: run.StartedAt, Results: map[string]study.Result{}}
	ts, err := readStudyTargets(ctx, db, run.ID)
	if err != nil {
		return w, err
	}
	byURL := make(map[string]int64, len(ts.url))
	for id, u := range ts.url {
		byURL[u] = id
	}
	checks := map[int64]*audit.Check{}
	err = db.EachCheck(ctx, run.ID, func(c *audit.Check) error {
		cc := *c
		checks[c.TargetID] = &audit.Check{Verdict: cc.Verdict, Status: cc.Status, CheckedAt: cc.CheckedAt}
		return nil
	})
	if err != nil {
		return w, err
	}
	type dkey struct {
		target int64
		url    string
		at     time.Time
	}
	bands := map[dkey]string{}
	ds, err := db.Drifts(ctx, run.ID)
	if err != nil {
		return w, err
	}
	for _, d := range ds {
		if d.Kind == "memento" {
			bands[dkey{d.TargetID, d.ReferenceURL, d.ReferenceTime.UTC()}] = d.Band
		}
	}
	ds = nil
	ms, err := db.Mementos(ctx, run.ID)
	if err != nil {
		return w, err
	}
	type mk struct {
		archive, url string
	}
	found := map[int64][]study.Memento{}
	seen := map[int64]map[mk]bool{}
	for _, m := range ms {
		if m.URL == "" || m.Datetime.IsZero() {
			continue
		}
		k := mk{m.Archive, m.URL}
		if seen[m.TargetID] == nil {
			seen[m.TargetID] = map[mk]bool{}
		}
		if seen[m.TargetID][k] {
			continue
		}
		seen[m.TargetID][k] = true
		found[m.TargetID] = append(found[m.TargetID], study.Memento{Datetime: m.Datetime.UTC(), URL: m.URL, Archive: m.Archive,
			Drift: bands[dkey{m.TargetID, m.URL, m.Datetime.UTC()}]})
	}
	ms = nil
	for _, r := range in.References {
		if _, ok := w.Results[r.URL]; ok {
			continue
		}
		id, ok := byURL[studyKey(r.URL)]
		if !ok {
			continue
		}
		c := checks[id]
		if c == nil {
			continue
		}
		w.Results[r.URL] = study.Result{URL: r.URL, Verdict: c.Verdict, Status: c.Status, Mementos: found[id]}
	}
	return w, nil
}

// EarlierRuns are the complete runs of the same study before run (same
// reference list and window), oldest first: its earlier waves.
func EarlierRuns(ctx context.Context, db Store, run *audit.Run, input linkrot.Input) ([]*audit.Run, error) {
	var out []*audit.Run
	for id := int64(1); id < run.ID; id++ {
		r, err := db.Run(ctx, id)
		if errors.Is(err, audit.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if r.Status != audit.RunComplete {
			continue
		}
		_, b, err := db.RunSettings(ctx, id)
		if err != nil {
			continue // a run without settings (linkrot check) is no study
		}
		s, err := linkrot.ParseSettings(b)
		if err != nil || s.Input.Kind != linkrot.References || s.Input.Refs != input.Refs || s.Input.Window != input.Window {
			continue
		}
		stages, err := db.Stages(ctx, id)
		if err != nil {
			return nil, err
		}
		if _, ok := stages[audit.StageReport]; !ok {
			continue
		}
		out = append(out, r)
	}
	return out, nil
}
