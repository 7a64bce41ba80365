package linkrot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/linkrot/linkrot/archives"
	"github.com/linkrot/linkrot/archives/memento"
	"github.com/linkrot/linkrot/archives/warc"
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/check"
	"github.com/linkrot/linkrot/crawler/extract"
	"github.com/linkrot/linkrot/drift"
	"github.com/linkrot/linkrot/httpx"
)

// archiveStore is what the archives stage needs of the run database.
type archiveStore interface {
	archives.Store
	// Path is the database's file: the indexes of local web archives
	// (ArchiveSettings.WARCs) are kept beside it.
	Path() string
}

// DriftThresholds checks the drift thresholds and returns them. Every
// field holds its setting's value (0 included), so they are used exactly.
// Errors name the linkrot flag at fault.
func (a *ArchiveSettings) DriftThresholds() (drift.Thresholds, error) {
	th := a.Thresholds
	th.Exact = true
	if err := th.Validate(); err != nil {
		var re *drift.RangeError
		if errors.As(err, &re) {
			return th, fmt.Errorf("--%s %v: want a value from %v to %v", re.Field.Flag, re.Value, re.Field.Lo, re.Field.Hi)
		}
		return th, err
	}
	return th, nil
}

// Resolve checks the settings and returns the archives to ask, the pwid
// registry and the request budget per minute of other hosts, without any
// network access. Errors name the linkrot flag at fault.
func (a *ArchiveSettings) Resolve() ([]memento.Archive, memento.Registry, float64, error) {
	var list []memento.Archive
	names := map[string]bool{}
	for _, spec := range a.Archives {
		ar, err := memento.ParseArchive(spec)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("--archive: %v", err)
		}
		if names[ar.Name] {
			return nil, nil, 0, fmt.Errorf("--archive: name %q given twice", ar.Name)
		}
		names[ar.Name] = true
		list = append(list, ar)
	}
	if len(list) == 0 && len(a.WARCs) == 0 {
		// With WARCs alone, only the local collections are asked: a
		// researcher measuring drift against their own crawl adds public
		// archives explicitly.
		list = memento.Defaults()
	}
	for _, ar := range list {
		if ar.Shutdown != "" {
			slog.Warn("archive is shut down", "archive", ar.Name, "why", ar.Shutdown)
		}
	}
	reg := memento.DefaultRegistry()
	for _, p := range a.PWIDs {
		id, tmpl, err := memento.ParseRegistryEntry(p)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("--pwid-archive: %v", err)
		}
		reg[id] = tmpl
	}
	rate, err := memento.ParseRate(a.FetchRate)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("--fetch-rate: %v", err)
	}
	if a.MaxDistance <= 0 || a.Workers < 1 || a.Shingle < 1 {
		return nil, nil, 0, errors.New("--max-memento-distance, --archive-workers and --drift-shingle must be positive")
	}
	if _, err := a.DriftThresholds(); err != nil {
		return nil, nil, 0, err
	}
	return list, reg, rate, nil
}

// stage configures the archives stage of run (archives.Stage, a Config's
// Archives): offline with Off (first-seen drift only), else asking the
// archives through a guarded transport built from kopts (the checker's
// options: timeouts, user agent, the SSRF policy, and the run's
// politeness scheduler, so that a host has one budget whoever asks it).
// saveAuth is the Save Page Now 2 key ("accesskey:secret"; never part of
// the settings). The returned function releases the stage's transport.
func (a *ArchiveSettings) stage(ctx context.Context, store archiveStore, run *audit.Run, kopts check.Options, saveAuth string, log *slog.Logger) (*archives.Stage, func(), error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	th, err := a.DriftThresholds()
	if err != nil {
		return nil, nil, err
	}
	if a.Off {
		return &archives.Stage{Store: store, Options: archives.Options{Offline: true, Thresholds: th, Logger: log}}, func() {}, nil
	}
	list, reg, fetchRate, err := a.Resolve()
	if err != nil {
		return nil, nil, err
	}
	topts, privateOK := archiveTransport(ctx, run, a, list, kopts)
	guarded, closeRT := httpx.NewTransportAllowing(topts.HTTP(), privateOK)
	var rt http.RoundTripper = guarded
	if len(a.WARCs) > 0 {
		cols, err := OpenCollections(a.WARCs, store.Path(), log)
		if err != nil {
			closeRT()
			return nil, nil, err
		}
		for _, c := range cols {
			list = append(list, c.Archive())
		}
		rt = warc.Transport(guarded, cols...)
	}
	client := memento.NewClient(memento.Options{
		Archives:      list,
		Transport:     rt,
		Timeout:       kopts.Timeout,
		MaxRetryWait:  kopts.MaxRetryWait,
		UserAgent:     kopts.UserAgent,
		OtherHostRate: fetchRate,
		Logger:        log,
		// The run's scheduler: lookups run beside the live checks, and
		// a host has one budget whoever asks it.
		Scheduler: kopts.Scheduler,
	})
	return &archives.Stage{
		Store:  store,
		MaxAge: a.MaxAge,
		Options: archives.Options{
			Client:       client,
			Archives:     list,
			Registry:     reg,
			MaxDistance:  a.MaxDistance,
			TimeMaps:     a.TimeMap,
			Shingle:      a.Shingle,
			Thresholds:   th,
			SaveMissing:  a.SaveMissing,
			Save:         memento.SaveOptions{Auth: saveAuth, PollInterval: a.SavePoll},
			Workers:      a.Workers,
			MaxSnapshots: a.MaxSnapshots,
			MaxBody:      kopts.MaxBody,
			SiteHosts:    SiteHosts(run),
			Identifiers:  pageIdentifiers,
			Logger:       log,
		},
	}, closeRT, nil
}

// archiveTransport returns the options of the stage's guarded transport
// and the endpoints allowed to be private. Loopback and private addresses
// are allowed everywhere with --allow-private; else only for the audited
// site's own origins and the archives the user configured (--archive,
// --pwid-archive) that are there: a snapshot URL, identifier or redirect
// naming another private host stays refused, even when the site itself
// lives on loopback.
func archiveTransport(ctx context.Context, run *audit.Run, a *ArchiveSettings, archives []memento.Archive, kopts check.Options) (check.Options, []string) {
	topts := kopts
	topts.Robots = nil // archives are not the site
	if topts.AllowPrivate {
		return topts, nil
	}
	var endpoints []string
	if len(a.Archives) > 0 {
		for _, ar := range archives {
			endpoints = append(endpoints, ar.TimeGate, ar.TimeMap, ar.Save)
		}
	}
	for _, p := range a.PWIDs {
		if _, tmpl, err := memento.ParseRegistryEntry(p); err == nil {
			endpoints = append(endpoints, strings.NewReplacer("{timestamp}", "", "{raw}", "", "{item}", "").Replace(tmpl))
		}
	}
	// The audited site's own origins, exactly (an archive stage fetch
	// of the site's pages), never the rest of its network.
	private := seedOrigins(run.Seeds, true)
	for _, u := range endpoints {
		if h := HostOf(u); h != "" && hostsArePrivate(ctx, map[string]bool{h: true}) {
			private = append(private, u)
		}
	}
	return topts, private
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

// OpenCollections opens the --archive-warc collections, their indexes
// kept in "<database>.warc-index" beside the database. Each path is its
// own collection, named warc (one path) or warc1, warc2, ...
func OpenCollections(paths []string, dbPath string, log *slog.Logger) ([]*warc.Collection, error) {
	var cols []*warc.Collection
	for i, p := range paths {
		name := "warc"
		if len(paths) > 1 {
			name = fmt.Sprintf("warc%d", i+1)
		}
		indexDir := dbPath + ".warc-index"
		if strings.Contains(dbPath, "://") {
			// A database server (postgres://): no file to put the index
			// beside, so it goes in the current directory.
			indexDir = "linkrot.warc-index"
		}
		c, err := warc.Open(name, []string{p}, warc.Options{IndexDir: indexDir})
		if err != nil {
			return nil, fmt.Errorf("--archive-warc: %w", err)
		}
		for _, d := range c.Diagnostics() {
			log.Warn("WARC record not read", "collection", name, "record", d.String())
		}
		log.Info("local web archive", "archive", name, "path", p, "captures", c.Len(), "unreadable", len(c.Diagnostics()))
		cols = append(cols, c)
	}
	return cols, nil
}
