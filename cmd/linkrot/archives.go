package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/audit/archive"
	"github.com/linkrot/linkrot/audit/check"
	"github.com/linkrot/linkrot/audit/drift"
	"github.com/linkrot/linkrot/audit/robust"
	"github.com/linkrot/linkrot/audit/sqlite"
	"github.com/linkrot/linkrot/audit/warc"
	"github.com/linkrot/linkrot/crawler/extract"
)

// spnAuthEnv names the environment variable holding archive.org S3 keys
// ("accesskey:secret") for Save Page Now 2. It is read from the
// environment, never from a flag, so that the keys stay out of the run's
// stored arguments.
const spnAuthEnv = "LINKROT_SPN2_AUTH"

// archiveFlags are the flags of the archives stage (audit and check).
type archiveFlags struct {
	archives    listFlag
	pwids       listFlag
	noArchives  bool
	timemap     bool
	maxDistance time.Duration
	saveMissing bool
	savePoll    time.Duration
	workers     int
	fetchRate   string
	shingle     int
	th          drift.Thresholds
	warcs       listFlag
	maxSnaps    int
	maxAge      time.Duration

	summary *robust.Summary // set by runArchives, printed by printSummary
	offline bool            // --no-archives: the summary has first-seen drift only
}

func (f *archiveFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.archives, "archive", "ask this archive for mementos: `name=timegate-url[,timemap=url][,rate=N/min][,margin=F][,raw=R][,save=url]`, or a preset name (ia, arquivo, memgator, memgator-local, archive.today, perma, ukwa, loc, timetravel) with options; repeatable (default: ia and arquivo; see linkrot archives)")
	fs.Var(&f.warcs, "archive-warc", "also ask this local web archive: a WARC file (.warc, .warc.gz), a directory of them, or a WACZ `path`; indexed on first use (index kept next to the database); repeatable")
	fs.IntVar(&f.maxSnaps, "max-snapshots", robust.DefaultMaxSnapshots, "check at most this many declared snapshots per link, those nearest to its declared datetime (the rest are reported not checked); negative: all")
	fs.DurationVar(&f.maxAge, "archive-max-age", 7*24*time.Hour, "reuse archive answers (memento found, or none) from earlier runs younger than this instead of asking again; failed lookups are always asked again; 0: always ask")
	fs.Var(&f.pwids, "pwid-archive", "resolve pwids of this archive: `archive-id=template` with {timestamp}, {raw} and {item}; repeatable (archive.org and webarchiv.onb.ac.at are built in)")
	fs.BoolVar(&f.noArchives, "no-archives", false, "skip the archives stage (offline runs): no snapshot audit, mementos, memento drift, identifiers or suggestions; first-seen drift, which needs no network, is still measured")
	fs.BoolVar(&f.timemap, "timemap", false, "also fetch each archive's TimeMap: number of mementos, first and last")
	fs.DurationVar(&f.maxDistance, "max-memento-distance", robust.DefaultMaxDistance, "a memento further than this from the wanted date is not representative")
	fs.BoolVar(&f.saveMissing, "save-missing", false, "ask an archive (Save Page Now 2) to capture live targets that have no memento at all; keys from $"+spnAuthEnv)
	fs.DurationVar(&f.savePoll, "save-poll-interval", 5*time.Second, "wait between Save Page Now status requests (at most 6 per capture)")
	fs.IntVar(&f.workers, "archive-workers", 8, "concurrent lookups per archive, archives asked in parallel (each archive pool's budget holds whatever this is)")
	fs.StringVar(&f.fetchRate, "fetch-rate", "60/min", "request budget per host for live pages and identifiers refetched by the archives stage, and for snapshot hosts that are no configured archive")
	fs.IntVar(&f.shingle, "drift-shingle", 1, "shingle size in words for the Jaccard and Sørensen–Dice drift measures")
	f.th = drift.DefaultThresholds()
	for _, d := range f.th.Fields() {
		if d.Int != nil {
			fs.IntVar(d.Int, d.Flag, *d.Int, d.Usage)
		} else {
			fs.Float64Var(d.Float, d.Flag, *d.Float, d.Usage)
		}
	}
}

// thresholds checks the drift threshold flags and returns them. Every
// field holds its flag's value (the default unless set, 0 when set to 0),
// so they are used exactly.
func (f *archiveFlags) thresholds() (drift.Thresholds, error) {
	th := f.th
	th.Exact = true
	if err := th.Validate(); err != nil {
		var re *drift.RangeError
		if errors.As(err, &re) {
			return th, usagef("--%s %v: want a value from %v to %v", re.Field.Flag, re.Value, re.Field.Lo, re.Field.Hi)
		}
		return th, err
	}
	return th, nil
}

// config checks the flags and builds the stage's configuration, without
// any network access.
func (f *archiveFlags) config() ([]archive.Archive, archive.Registry, float64, error) {
	var archives []archive.Archive
	names := map[string]bool{}
	for _, spec := range f.archives {
		a, err := archive.ParseArchive(spec)
		if err != nil {
			return nil, nil, 0, usagef("--archive: %v", err)
		}
		if names[a.Name] {
			return nil, nil, 0, usagef("--archive: name %q given twice", a.Name)
		}
		names[a.Name] = true
		archives = append(archives, a)
	}
	if len(archives) == 0 && len(f.warcs) == 0 {
		// With --archive-warc alone, only the local collections are asked:
		// a researcher measuring drift against their own crawl adds
		// public archives with --archive ia, --archive arquivo.
		archives = archive.Defaults()
	}
	for _, a := range archives {
		if a.Shutdown != "" {
			slog.Warn("archive is shut down", "archive", a.Name, "why", a.Shutdown)
		}
	}
	reg := archive.DefaultRegistry()
	for _, p := range f.pwids {
		id, tmpl, err := archive.ParseRegistryEntry(p)
		if err != nil {
			return nil, nil, 0, usagef("--pwid-archive: %v", err)
		}
		reg[id] = tmpl
	}
	rate, err := archive.ParseRate(f.fetchRate)
	if err != nil {
		return nil, nil, 0, usagef("--fetch-rate: %v", err)
	}
	if f.maxDistance <= 0 || f.workers < 1 || f.shingle < 1 {
		return nil, nil, 0, usagef("--max-memento-distance, --archive-workers and --drift-shingle must be positive")
	}
	if _, err := f.thresholds(); err != nil {
		return nil, nil, 0, err
	}
	return archives, reg, rate, nil
}

// runArchives is the archives stage of a run (see package robust): it
// reads the run's links and checks, asks the archives, and stores what it
// finds through batched writers, replacing what an earlier pass stored for
// the run. Network failures are results; an error means the stage itself
// could not go on (store failure, cancellation).
func runArchives(ctx context.Context, e *env, store *sqlite.DB, run *audit.Run, f *archiveFlags, kopts check.Options, log *slog.Logger) error {
	if f.noArchives {
		log.Info("archives stage skipped (--no-archives): first-seen drift only")
		return firstSeenDriftOnly(ctx, store, run, f, log)
	}
	archives, reg, fetchRate, err := f.config()
	if err != nil {
		return err
	}
	th, err := f.thresholds()
	if err != nil {
		return err
	}
	in, err := archiveInput(ctx, store, run)
	if err != nil {
		return err
	}
	topts, privateOK := archiveTransport(ctx, run, f, archives, kopts)
	guarded, closeRT := check.NewTransportAllowing(topts, privateOK)
	defer closeRT()
	var rt http.RoundTripper = guarded
	if len(f.warcs) > 0 {
		cols, err := openCollections(f.warcs, store.Path(), log)
		if err != nil {
			return err
		}
		for _, c := range cols {
			archives = append(archives, c.Archive())
		}
		rt = warc.Transport(guarded, cols...)
	}
	var known []audit.Memento
	if f.maxAge > 0 {
		if known, err = store.KnownLookups(ctx, run.ID, time.Now().Add(-f.maxAge)); err != nil {
			return err
		}
	}
	client := archive.NewClient(archive.Options{
		Archives:      archives,
		Transport:     rt,
		Timeout:       kopts.Timeout,
		MaxRetryWait:  kopts.MaxRetryWait,
		UserAgent:     kopts.UserAgent,
		OtherHostRate: fetchRate,
		Logger:        log,
	})
	// Save Page Now requests an interrupted pass of the stage sent are
	// kept (ClearArchives leaves them) and never sent again.
	prior, err := store.SaveRequests(ctx, run.ID)
	if err != nil {
		return err
	}
	sent := make(map[string]bool, len(prior))
	for _, r := range prior {
		sent[r.URL] = true
	}
	if err := store.ClearArchives(ctx, run.ID); err != nil {
		return err
	}

	wctx := context.WithoutCancel(ctx)
	wo := audit.WriterOptions{BatchSize: 500}
	snaps := audit.NewBatcher(wctx, store.SaveSnapshotChecks, wo)
	mems := audit.NewBatcher(wctx, store.SaveMementos, wo)
	drifts := audit.NewBatcher(wctx, store.SaveDrifts, wo)
	driftFails := audit.NewBatcher(wctx, store.SaveDriftFailures, wo)
	idents := audit.NewBatcher(wctx, store.SaveIdentifierChecks, wo)
	suggs := audit.NewBatcher(wctx, store.SaveSuggestions, wo)
	saves := audit.NewBatcher(wctx, store.SaveSaveRequests, wo)
	skips := audit.NewBatcher(wctx, store.SaveSnapshotSkips, wo)
	sink := robust.Sink{
		SnapshotCheck: snaps.Add,
		Memento:       mems.Add,
		Drift:         drifts.Add,
		DriftFailure:  driftFails.Add,
		Identifier:    idents.Add,
		Suggestion:    suggs.Add,
		Save:          saves.Add,
		SnapshotSkip:  skips.Add,
	}
	opts := robust.Options{
		Client:       client,
		Archives:     archives,
		Registry:     reg,
		MaxDistance:  f.maxDistance,
		TimeMaps:     f.timemap,
		Shingle:      f.shingle,
		Thresholds:   th,
		SaveMissing:  f.saveMissing,
		Save:         archive.SaveOptions{Auth: os.Getenv(spnAuthEnv), PollInterval: f.savePoll},
		Saved:        func(u string) bool { return sent[u] },
		Workers:      f.workers,
		MaxSnapshots: f.maxSnaps,
		Known:        known,
		MaxBody:      kopts.MaxBody,
		SiteHosts:    linkrot.SiteHosts(run),
		Identifiers:  pageIdentifiers,
		Logger:       log,
	}
	names := make([]string, len(archives))
	for i, a := range archives {
		names[i] = a.Name
	}
	log.Info("archives stage", "run", run.ID, "links", len(in.Links), "archives", strings.Join(names, ","))
	sum, runErr := robust.Run(ctx, opts, in, sink)
	var errs []error
	for _, b := range []interface{ Close() error }{snaps, mems, drifts, driftFails, idents, suggs, saves, skips} {
		errs = append(errs, b.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("save archive results: %w", err)
	}
	if sum != nil {
		for _, r := range prior {
			sum.Saves[r.Status]++
		}
	}
	f.summary = sum
	return runErr
}

// archiveTransport returns the options of the stage's guarded transport
// and the endpoints allowed to be private. Loopback and private addresses
// are allowed everywhere with --allow-private; else only for the audited
// site's own origins and the archives the user configured (--archive,
// --pwid-archive) that are there: a snapshot URL, identifier or redirect
// naming another private host stays refused, even when the site itself
// lives on loopback.
func archiveTransport(ctx context.Context, run *audit.Run, f *archiveFlags, archives []archive.Archive, kopts check.Options) (check.Options, []string) {
	topts := kopts
	topts.Robots = nil // archives are not the site
	if topts.AllowPrivate {
		return topts, nil
	}
	var endpoints []string
	if len(f.archives) > 0 {
		for _, a := range archives {
			endpoints = append(endpoints, a.TimeGate, a.TimeMap, a.Save)
		}
	}
	for _, p := range f.pwids {
		if _, tmpl, err := archive.ParseRegistryEntry(p); err == nil {
			endpoints = append(endpoints, strings.NewReplacer("{timestamp}", "", "{raw}", "", "{item}", "").Replace(tmpl))
		}
	}
	// The audited site's own origins, exactly (an archive stage fetch
	// of the site's pages), never the rest of its network.
	private := seedOrigins(run.Seeds, true)
	for _, u := range endpoints {
		if h := linkrot.HostOf(u); h != "" && linkrot.HostsArePrivate(ctx, map[string]bool{h: true}) {
			private = append(private, u)
		}
	}
	return topts, private
}

// firstSeenDriftOnly is the archives stage under --no-archives: first-seen
// drift (each fingerprinted target against its first fingerprint), which
// needs no network, replacing what an earlier pass measured for the run.
func firstSeenDriftOnly(ctx context.Context, store *sqlite.DB, run *audit.Run, f *archiveFlags, log *slog.Logger) error {
	th, err := f.thresholds()
	if err != nil {
		return err
	}
	// Only targets fingerprinted by an earlier run have a first-seen
	// drift: only their checks are held (a run's checks all at once were
	// the peak of its memory).
	in := robust.Input{RunID: run.ID, Checks: map[int64]*audit.Check{}}
	if in.Reference, err = store.EarlierFingerprints(ctx, run.ID); err != nil {
		return err
	}
	if len(in.Reference) > 0 {
		err = store.EachCheck(ctx, run.ID, func(c *audit.Check) error {
			if in.Reference[c.TargetID] != nil {
				in.Checks[c.TargetID] = c
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("load checks: %w", err)
		}
	}
	if err := store.ClearFirstSeenDrift(ctx, run.ID); err != nil {
		return err
	}
	drifts := audit.NewBatcher(context.WithoutCancel(ctx), store.SaveDrifts, audit.WriterOptions{BatchSize: 500})
	sum, runErr := robust.Run(ctx, robust.Options{Offline: true, Thresholds: th, Logger: log}, in, robust.Sink{Drift: drifts.Add})
	if err := drifts.Close(); err != nil {
		return fmt.Errorf("save drift: %w", err)
	}
	f.summary, f.offline = sum, true
	return runErr
}

// pageIdentifiers reads rel="identifier" and rel="cite-as" links from a
// live page with the crawler's extractor. body is UTF-8 already.
func pageIdentifiers(body []byte, _ string, pageURL *url.URL, header http.Header) []audit.Identifier {
	ex, _, err := extract.Parse(body, "text/html; charset=utf-8", pageURL, header, extract.Options{})
	if err != nil {
		return nil
	}
	return ex.Identifiers
}

// archiveInput loads what the stage needs of a run.
func archiveInput(ctx context.Context, store *sqlite.DB, run *audit.Run) (robust.Input, error) {
	in := robust.Input{RunID: run.ID, Checks: map[int64]*audit.Check{}}
	pages, err := store.Pages(ctx, run.ID)
	if err != nil {
		return in, fmt.Errorf("load pages: %w", err)
	}
	refs, err := store.LinkRefs(ctx, run.ID)
	if err != nil {
		return in, fmt.Errorf("load links: %w", err)
	}
	targets, err := store.Targets(ctx, run.ID)
	if err != nil {
		return in, fmt.Errorf("load targets: %w", err)
	}
	targetURL := make(map[int64]string, len(targets))
	for _, t := range targets {
		targetURL[t.ID] = t.URL
	}
	checks, err := store.Checks(ctx, run.ID)
	if err != nil {
		return in, fmt.Errorf("load checks: %w", err)
	}
	for i := range checks {
		in.Checks[checks[i].TargetID] = &checks[i]
	}
	if in.FirstSeen, err = store.TargetsFirstSeen(ctx, run.ID); err != nil {
		return in, err
	}
	if in.LinkFirstSeen, err = store.LinksFirstSeen(ctx, run.ID); err != nil {
		return in, err
	}
	if in.Reference, err = store.FirstFingerprints(ctx, run.ID); err != nil {
		return in, err
	}
	// Pages and LinkRefs both list links by page, then document order.
	k := 0
	for _, p := range pages {
		if len(p.Identifiers) > 0 {
			in.Pages = append(in.Pages, robust.OwnPage{URL: p.URL, Identifiers: p.Identifiers})
		}
		first := len(in.Links)
		for _, l := range p.Links {
			if k >= len(refs) || refs[k].Href != l.Href || refs[k].PageURL != p.URL {
				return in, fmt.Errorf("load links: pages and link rows disagree at link %d", k)
			}
			r := refs[k]
			k++
			in.Links = append(in.Links, robust.Link{ID: r.LinkID, PageURL: p.URL, Link: l, TargetID: r.TargetID, TargetURL: targetURL[r.TargetID]})
		}
		for _, w := range p.PWIDs {
			if w.Link >= 0 && first+w.Link < len(in.Links) {
				in.Links[first+w.Link].PWIDs = append(in.Links[first+w.Link].PWIDs, w)
			}
		}
	}
	if k != len(refs) {
		return in, fmt.Errorf("load links: %d link rows, %d links in pages", len(refs), k)
	}
	return in, nil
}

// printSummary writes the archives stage's summary lines (nothing when the
// stage did not run).
func (f *archiveFlags) printSummary(w io.Writer) {
	s := f.summary
	if s == nil {
		return
	}
	bands := func(m map[string]int) string {
		var b []string
		for _, band := range []string{audit.BandUnchanged, audit.BandMinor, audit.BandMajor, audit.BandOffTopic} {
			b = append(b, fmt.Sprintf("%d %s", m[band], band))
		}
		return strings.Join(b, ", ")
	}
	if f.offline {
		fmt.Fprintf(w, "Drift since first seen: %s (archives not asked: --no-archives).\n", bands(s.FirstSeenBands))
		return
	}
	var parts []string
	for _, v := range []audit.SnapshotVerdict{audit.SnapshotOK, audit.SnapshotMissing, audit.SnapshotError, audit.NotAMemento} {
		parts = append(parts, fmt.Sprintf("%d %s", s.Snapshots[v], strings.TrimPrefix(string(v), "snapshot-")))
	}
	fmt.Fprintf(w, "Snapshots: %s (%d datetime mismatches, %d of another original).\n",
		strings.Join(parts, ", "), s.DatetimeMismatches, s.OriginalMismatches)
	fmt.Fprintf(w, "Mementos: %d links looked up, %d with a memento, %d with a representative memento; %d lookups failed%s; %d answers reused from earlier runs.\n",
		s.LinksLookedUp, s.LinksWithMemento, s.LinksRepresentative, s.LookupErrors, perArchive(s.LookupFailed), s.LookupsReused)
	if s.SnapshotsNotChecked > 0 {
		fmt.Fprintf(w, "Snapshots not checked (over --max-snapshots): %d.\n", s.SnapshotsNotChecked)
	}
	failed := ""
	if s.DriftErrors > 0 {
		failed = fmt.Sprintf("; %d could not be measured", s.DriftErrors)
	}
	if s.DriftNotRaw > 0 {
		failed += fmt.Sprintf("; %d measured on replayed pages (archive without raw form)", s.DriftNotRaw)
	}
	fmt.Fprintf(w, "Drift against mementos: %s%s. Since first seen: %s.\n", bands(s.Bands), failed, bands(s.FirstSeenBands))
	fmt.Fprintf(w, "Identifiers: %d checked, %d do not resolve, %d do not lead back. Suggestions: %d (linkrot suggest).",
		s.Identifiers, s.IdentifiersBroken, s.IdentifiersNoReturn,
		s.Suggestions[robust.ReasonNoRobustData]+s.Suggestions[robust.ReasonBrokenMemento]+s.Suggestions[robust.ReasonUseIdentifier])
	if len(s.Saves) > 0 {
		var sv []string
		keys := make([]string, 0, len(s.Saves))
		for k := range s.Saves {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			sv = append(sv, fmt.Sprintf("%d %s", s.Saves[k], k))
		}
		fmt.Fprintf(w, " Save requests: %s.", strings.Join(sv, ", "))
	}
	fmt.Fprintln(w)
}

// perArchive writes " (ia 3, arquivo 1)" for nonzero counts by archive.
func perArchive(m map[string]int) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		if m[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// openCollections opens the --archive-warc collections, their indexes
// kept in "<database>.warc-index" beside the database. Each path is its
// own collection, named warc (one path) or warc1, warc2, ...
func openCollections(paths []string, dbPath string, log *slog.Logger) ([]*warc.Collection, error) {
	var cols []*warc.Collection
	for i, p := range paths {
		name := "warc"
		if len(paths) > 1 {
			name = fmt.Sprintf("warc%d", i+1)
		}
		c, err := warc.Open(name, []string{p}, warc.Options{IndexDir: dbPath + ".warc-index"})
		if err != nil {
			return nil, usagef("--archive-warc: %v", err)
		}
		for _, d := range c.Diagnostics() {
			log.Warn("WARC record not read", "collection", name, "record", d.String())
		}
		log.Info("local web archive", "archive", name, "path", p, "captures", c.Len(), "unreadable", len(c.Diagnostics()))
		cols = append(cols, c)
	}
	return cols, nil
}

// runSuggest lists the Robust Link suggestions of a run.
func runSuggest(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "suggest", "[--run N] [--format html|json|csv]")
	db := fs.String("db", "linkrot.db", "SQLite database `path`")
	runID := fs.Int64("run", 0, "run (default: the latest)")
	format := fs.String("format", "html", "html (paste-ready links, grouped by page), json or csv")
	reason := fs.String("reason", "", "only this reason: no-robustness-data, broken-with-memento or use-identifier")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%v", err)
	}
	if len(pos) != 0 {
		return usagef("suggest takes no arguments")
	}
	if *format != "html" && *format != "json" && *format != "csv" {
		return usagef("--format must be html, json or csv")
	}
	switch *reason {
	case "", robust.ReasonNoRobustData, robust.ReasonBrokenMemento, robust.ReasonUseIdentifier:
	default:
		return usagef("--reason must be no-robustness-data, broken-with-memento or use-identifier")
	}
	store, err := sqlite.Open(ctx, *db)
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer store.Close()
	run, err := pickRun(ctx, store, *runID)
	if err != nil {
		return err
	}
	all, err := store.Suggestions(ctx, run.ID)
	if err != nil {
		return err
	}
	sgs := []audit.Suggestion{}
	for _, s := range all {
		if *reason == "" || s.Reason == *reason {
			sgs = append(sgs, s)
		}
	}
	switch *format {
	case "json":
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(sgs)
	case "csv":
		w := csv.NewWriter(e.stdout)
		w.Write([]string{"page_url", "link_id", "reason", "href", "text", "originalurl", "versiondate", "versionurl", "html"})
		for _, s := range sgs {
			vd := ""
			if !s.VersionDate.IsZero() {
				vd = s.VersionDate.UTC().Format(time.RFC3339)
			}
			w.Write([]string{csvSafe(s.PageURL), fmt.Sprint(s.LinkID), s.Reason, csvSafe(s.Href), csvSafe(s.Text),
				csvSafe(s.OriginalURL), vd, csvSafe(s.VersionURL), csvSafe(s.HTML)})
		}
		w.Flush()
		return w.Error()
	}
	fmt.Fprintf(e.stdout, "<!-- linkrot run %d: %d suggestions -->\n", run.ID, len(sgs))
	last := ""
	for _, s := range sgs {
		if s.PageURL != last {
			fmt.Fprintf(e.stdout, "\n<!-- on %s -->\n", commentSafe(s.PageURL))
			last = s.PageURL
		}
		fmt.Fprintf(e.stdout, "<!-- %s -->\n%s\n", s.Reason, s.HTML)
	}
	return nil
}

// csvSafe keeps a crawled value from being read as a formula by
// spreadsheet programs (CSV injection): a leading =, +, - or @ gets a
// quote mark in front.
func csvSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// commentSafe keeps a URL from closing the HTML comment it is written in.
func commentSafe(s string) string { return strings.ReplaceAll(s, "--", "%2D%2D") }
