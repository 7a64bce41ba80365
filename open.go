package linkrot

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/linkrot/linkrot/archives"
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/check"
	"github.com/linkrot/linkrot/crawler"
	"github.com/linkrot/linkrot/politeness"
	"github.com/linkrot/linkrot/urls"
)

// OpenOptions are how Open builds a run, besides its settings.
type OpenOptions struct {
	// Logger receives the run's events (nil: discarded).
	Logger *slog.Logger
	// CrawlOnly builds the crawl alone (linkrot crawl): no checker, no
	// archives stage; the check settings are not read.
	CrawlOnly bool
	// CheckOnly builds the checks of a crawled run (linkrot check --run):
	// no crawler; the crawl settings are not read.
	CheckOnly bool
	// Worker builds a scale-out worker's crawler and checker (package
	// scaleout): no archives stage, and no robots.txt read up front (a
	// worker reads a host's robots.txt inside a unit of that host).
	Worker bool
	// SaveAuth is the Save Page Now 2 key ("accesskey:secret") of the
	// archives stage; it is never part of the settings.
	SaveAuth string
	// CheckTransport, when not nil, replaces the checker's transport
	// (check.Options.Transport): tests answer external hosts from it.
	CheckTransport http.RoundTripper
}

// Job is a run built once with everything it needs: the crawler's and the
// checker's options sharing one politeness scheduler, the robots.txt gate
// with its Crawl-delay rules, the SSRF scope, and the archives stage.
// Config is ready for Audit; a caller adds what only it decides (Confirm,
// MaxTime, Report, Work, StageHook). Close releases what Open started.
type Job struct {
	Run *audit.Run
	// Resumed is true when Start resumed an unfinished run.
	Resumed  bool
	Settings Settings
	Config   Config
	// Scheduler paces every request of the run, whatever stage asks: one
	// budget per host.
	Scheduler *politeness.Scheduler
	// Robots is the site's robots.txt gate (nil when robots.txt does not
	// bind the run: --ignore-robots, a directory).
	Robots *crawler.RobotsGate
	// Archives is the archives stage (nil: none built).
	Archives *archives.Stage

	closers []func()
}

// Audit runs the job (Audit with j.Config).
func (j *Job) Audit(ctx context.Context, store Store, progress Progress) (*Summary, error) {
	return Audit(ctx, j.Config, store, progress)
}

// Close releases the job's connections (robots.txt gate, archives
// transport). It is safe to call more than once.
func (j *Job) Close() {
	for i := len(j.closers) - 1; i >= 0; i-- {
		j.closers[i]()
	}
	j.closers = nil
}

// openStore is what Open needs of the run database.
type openStore interface {
	settingsReader
	archiveStore
}

// Open builds run, already in store, from the settings s: the one place
// a run's scheduler, robots.txt gate, Crawl-delay rules, SSRF scope and
// archives stage are made, for a run Start began, a crawled run checked
// again (linkrot check --run) or a scale-out worker's units. The run's
// scope (its origins, --allow-domain hosts, whether robots.txt binds it)
// comes from its seeds and stored settings. Errors of the settings are
// *SettingsError.
func Open(ctx context.Context, store openStore, run *audit.Run, s Settings, o OpenOptions) (*Job, error) {
	s.Hosts = withHeaderHashes(s.Hosts)
	b, err := s.build(o)
	if err != nil {
		return nil, err
	}
	return open(ctx, store, run, s, b, o)
}

// OpenStored builds run from its stored settings, the header values of
// its host rules from given (RestoreHosts): a scale-out worker's view of
// a run another process started.
func OpenStored(ctx context.Context, store openStore, run *audit.Run, given []HostSettings, o OpenOptions) (*Job, error) {
	s, err := storedSettings(ctx, store, run.ID)
	if err != nil {
		return nil, err
	}
	if s.Hosts, err = RestoreHosts(run.ID, s.Hosts, given); err != nil {
		return nil, err
	}
	return Open(ctx, store, run, s, o)
}

// built are the options of a run's crawler and checker, from its
// settings alone.
type built struct {
	crawl crawler.Options
	check check.Options
}

// Validate checks the settings as Open reads them, without building
// anything: a front end reports a bad setting before it opens a database.
func (s *Settings) Validate(o OpenOptions) error {
	_, err := s.build(o)
	return err
}

// build returns the options of the stages o builds, the host rules
// included.
func (s *Settings) build(o OpenOptions) (built, error) {
	log := orDiscard(o.Logger)
	var b built
	var err error
	if !o.CheckOnly {
		if b.crawl, err = s.CrawlOptions(log); err != nil {
			return built{}, &SettingsError{Err: err}
		}
	}
	if !o.CrawlOnly {
		if b.check, err = s.CheckOptions(log); err != nil {
			return built{}, &SettingsError{Err: err}
		}
	}
	return b, nil
}

// open builds the run from options b (see Open).
func open(ctx context.Context, store openStore, run *audit.Run, s Settings, b built, o OpenOptions) (_ *Job, err error) {
	log := orDiscard(o.Logger)
	j := &Job{Run: run, Settings: s}
	defer func() {
		if err != nil {
			j.Close()
		}
	}()
	copts, kopts := b.crawl, b.check
	rules, _, err := s.hostRules()
	if err != nil {
		return nil, &SettingsError{Err: err}
	}
	// The crawl records each page's evidence as the checker would read
	// it, so that the check judges the site's pages without fetching them
	// again (check.Known).
	copts.Observe = check.Observer(kopts.MaxBody)
	// One politeness scheduler for every stage: one host, one budget
	// (Crawl-delay, pauses after 429s, the learned rate, giving a host
	// up), whoever asks it.
	j.Scheduler = politeness.New(politeness.Options{
		PerHost:      max(s.PerHost, 1),
		Delay:        max(copts.Delay, kopts.HostDelay),
		Rules:        rules,
		MaxRetryWait: kopts.MaxRetryWait,
		ResourceID:   urls.NormalizeURL,
	})
	copts.Scheduler, kopts.Scheduler = j.Scheduler, j.Scheduler
	// One robots.txt gate for the crawl and the checks: read once, its
	// Crawl-delay handed to the scheduler.
	scope := runScope(ctx, store, run)
	if gate, closeGate := scope.robotsGate(s.UserAgent, j.Scheduler); gate != nil {
		j.closers = append(j.closers, closeGate)
		j.Robots = gate
		copts.Robots, kopts.Robots = gate, gate
		if !o.CrawlOnly && !o.Worker {
			// A worker reads no robots.txt here: it runs inside a unit
			// of any host, and a request to a seed's host would not
			// count against that host's partition.
			kopts.Hosts = crawlDelayRules(ctx, gate, scope.seeds, kopts.Hosts)
		}
	}
	// Exact SSRF scope: the audited origins and --allow-domain hosts may
	// be private, nothing else (--allow-private opens the rest).
	kopts.AllowPrivateHosts = append(kopts.AllowPrivateHosts, scope.privateHosts()...)
	if o.CheckTransport != nil {
		kopts.Transport = o.CheckTransport
	}
	j.Config = Config{
		Run:               run,
		Input:             s.Input,
		CheckOnly:         o.CheckOnly,
		CrawlOnly:         o.CrawlOnly,
		Crawl:             copts,
		Check:             kopts,
		MaxAge:            s.Check.MaxAge,
		ExternalFragments: s.Check.ExternalFragments,
		Logger:            log,
	}
	if !o.CrawlOnly && !o.Worker {
		if s.Archives.Off {
			log.Info("archives stage skipped (--no-archives): first-seen drift only")
		}
		stg, closeStage, err := s.Archives.stage(ctx, store, run, kopts, o.SaveAuth, log)
		if err != nil {
			return nil, &SettingsError{Err: err}
		}
		j.closers = append(j.closers, closeStage)
		j.Archives, j.Config.Archives = stg, stg
	}
	return j, nil
}
