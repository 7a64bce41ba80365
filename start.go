package linkrot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store"
)

// SettingsError is an error of the caller's settings or request (a flag,
// the configuration file, a run that cannot be resumed as asked): the
// linkrot command exits with its usage code on it.
type SettingsError struct{ Err error }

func (e *SettingsError) Error() string { return e.Err.Error() }
func (e *SettingsError) Unwrap() error { return e.Err }

// settingsErrorf returns a *SettingsError.
func settingsErrorf(format string, args ...any) error {
	return &SettingsError{Err: fmt.Errorf(format, args...)}
}

// StartOptions are how Start creates or resumes a run, besides its
// settings.
type StartOptions struct {
	// Command is the command the run belongs to (audit.CommandAudit or
	// audit.CommandCrawl): --resume only continues a run of the same one.
	Command string
	// Resume continues the latest unfinished run of the same command and
	// settings instead of starting a new one (a new one when there is
	// none): for audit also a complete run whose report was not written.
	Resume bool
	// ResumeMaxAge abandons, rather than resumes, a run started longer ago
	// (0: no limit).
	ResumeMaxAge time.Duration
	// Args and Version are stored with a new run, for provenance.
	Args    []string
	Version string
	// Abandoned, when not nil, is told of each stale run Resume gives up
	// (a newer run of the same settings completed since, or it is older
	// than ResumeMaxAge), with why.
	Abandoned func(run *audit.Run, why string)
	// Open is how the run is built once started.
	Open OpenOptions
}

// Start creates a run of s, or resumes one (StartOptions.Resume), and
// builds it (Open): the one way a run starts, whoever asks. The settings
// are checked before anything is written; a new run stores them, so that
// resuming it uses the same ones. Errors of the settings are
// *SettingsError.
func Start(ctx context.Context, st startStore, s Settings, o StartOptions) (*Job, error) {
	s.Hosts = withHeaderHashes(s.Hosts)
	b, err := s.build(o.Open)
	if err != nil {
		return nil, err
	}
	log := orDiscard(o.Open.Logger)
	run, resumed, err := startRun(ctx, st, s, o, log)
	if err != nil {
		return nil, err
	}
	j, err := open(ctx, st, run, s, b, o.Open)
	if err != nil {
		return nil, err
	}
	j.Resumed = resumed
	return j, nil
}

// startStore is what Start needs of the run database.
type startStore interface {
	openStore
	UnfinishedRun(ctx context.Context, q store.ResumeQuery) (*audit.Run, error)
	NewerCompleteRun(ctx context.Context, runID int64) (*audit.Run, error)
	AbandonRun(ctx context.Context, runID int64) error
	ReopenRun(ctx context.Context, runID int64) error
	MarkStage(ctx context.Context, runID int64, stage string) error
	CreateRun(ctx context.Context, r *audit.Run) error
	SaveRunSettings(ctx context.Context, runID int64, command, fingerprint string, settings []byte) error
}

// startRun returns the run to work on. With Resume, that is the run
// resumableRun finds, marked running again (a complete run whose report
// is missing stays complete); otherwise (or when there is none) a new
// run, with its settings stored.
func startRun(ctx context.Context, st startStore, s Settings, o StartOptions, log *slog.Logger) (*audit.Run, bool, error) {
	fp, b := s.Stored()
	if o.Resume {
		run, err := resumableRun(ctx, st, o, fp, log)
		switch {
		case err == nil:
			if run.Status == audit.RunComplete {
				log.Info("writing the missing report of a complete run", "run", run.ID)
				return run, true, nil
			}
			if err := st.ReopenRun(ctx, run.ID); err != nil {
				return nil, false, err
			}
			run.Status, run.FinishedAt, run.Error = audit.RunRunning, time.Time{}, ""
			log.Info("resuming run", "run", run.ID, "started", run.StartedAt)
			return run, true, nil
		case !errors.Is(err, audit.ErrNotFound):
			return nil, false, err
		}
		log.Info("no interrupted run with these settings: starting a new one")
	}
	seeds := s.Input.runSeeds()
	run := &audit.Run{StartedAt: time.Now().UTC(), Mode: string(s.Input.Kind), Seeds: seeds, Args: o.Args, Version: o.Version}
	// Written even when ctx is already cancelled, so the run is visible.
	wctx := context.WithoutCancel(ctx)
	if err := st.CreateRun(wctx, run); err != nil {
		return nil, false, fmt.Errorf("create run: %w", err)
	}
	if err := st.SaveRunSettings(wctx, run.ID, o.Command, fp, b); err != nil {
		return nil, false, err
	}
	log.Info("run started", "run", run.ID, "mode", run.Mode, "seeds", strings.Join(seeds, " "))
	return run, false, nil
}

// resumableRun returns the run with fingerprint fp that Resume continues:
// the latest unfinished one of the command (for audit, also a complete
// one whose report was not written), unless it is stale: a newer run of
// the same settings completed since, or it started longer ago than
// ResumeMaxAge. A stale run is abandoned (the store's AbandonRun: linkrot
// runs shows it so, its data stays) and the next candidate considered.
// It returns an error wrapping audit.ErrNotFound when there is nothing to
// resume.
func resumableRun(ctx context.Context, st startStore, o StartOptions, fp string, log *slog.Logger) (*audit.Run, error) {
	for {
		run, err := st.UnfinishedRun(ctx, resumeQuery(o.Command, fp))
		if err != nil {
			return nil, err
		}
		var why string
		newer, err := st.NewerCompleteRun(ctx, run.ID)
		switch {
		case err == nil:
			why = fmt.Sprintf("run %d of the same settings completed since", newer.ID)
		case !errors.Is(err, audit.ErrNotFound):
			return nil, err
		case o.ResumeMaxAge > 0 && time.Since(run.StartedAt) > o.ResumeMaxAge:
			why = fmt.Sprintf("it started more than %s ago (--resume-max-age)", roundAge(o.ResumeMaxAge))
		default:
			return run, nil
		}
		if run.Status == audit.RunComplete {
			// Only its report was left to write: nothing to abandon, the
			// newer run's report supersedes it.
			if err := st.MarkStage(ctx, run.ID, audit.StageReport); err != nil {
				return nil, err
			}
			continue
		}
		if err := st.AbandonRun(context.WithoutCancel(ctx), run.ID); err != nil {
			return nil, err
		}
		if o.Abandoned != nil {
			o.Abandoned(run, why)
		}
		log.Info("interrupted run abandoned", "run", run.ID, "reason", why)
	}
}

// roundAge rounds an age for a message: milliseconds, whole seconds
// above a minute.
func roundAge(d time.Duration) time.Duration {
	if d > time.Minute {
		return d.Round(time.Second)
	}
	return d.Round(time.Millisecond)
}

// unfinishedStore reads the latest unfinished run of a command and its
// settings.
type unfinishedStore interface {
	settingsReader
	UnfinishedRun(ctx context.Context, q store.ResumeQuery) (*audit.Run, error)
	Path() string
}

// LatestUnfinished returns the latest unfinished run of command and its
// stored settings, for resuming a run without naming its input (linkrot
// audit --resume without a URL). The settings' host rules have no header
// values (see RestoreHosts). Nothing to resume, or a run whose settings
// this linkrot cannot read, is a *SettingsError.
func LatestUnfinished(ctx context.Context, st unfinishedStore, command string) (*audit.Run, Settings, error) {
	run, err := st.UnfinishedRun(ctx, resumeQuery(command, ""))
	if errors.Is(err, audit.ErrNotFound) {
		return nil, Settings{}, settingsErrorf("--resume without a URL: no interrupted run to resume in %s", st.Path())
	}
	if err != nil {
		return nil, Settings{}, err
	}
	s, err := storedSettings(ctx, st, run.ID)
	if errors.Is(err, ErrOldSettings) {
		return nil, Settings{}, settingsErrorf("run %d was started by an older linkrot, whose settings this one cannot read: start a new run", run.ID)
	}
	if err != nil {
		return nil, Settings{}, err
	}
	return run, s, nil
}

// storedSettings reads and parses the settings a run stored.
func storedSettings(ctx context.Context, st settingsReader, runID int64) (Settings, error) {
	_, b, err := st.RunSettings(ctx, runID)
	if err != nil {
		return Settings{}, err
	}
	s, err := ParseSettings(b)
	if err != nil {
		return Settings{}, fmt.Errorf("run %d: %w", runID, err)
	}
	return s, nil
}

// RestoreHosts returns the host rules of a run's stored settings with
// their header values taken from given (the configuration file of this
// invocation): the database never holds them. A rule that sent headers
// needs a given rule for the same hosts with the same header names, and,
// when the settings hold a hash of the values, the same values. Anything
// else is a *SettingsError naming what is missing.
func RestoreHosts(runID int64, stored, given []HostSettings) ([]HostSettings, error) {
	out := make([]HostSettings, 0, len(stored))
	for _, sh := range stored {
		h := sh
		h.Headers = nil
		if len(sh.HeaderNames) > 0 {
			var found *HostSettings
			for i := range given {
				g := &given[i]
				if strings.EqualFold(strings.TrimSpace(g.Match), strings.TrimSpace(h.Match)) &&
					slices.Equal(slices.Sorted(maps.Keys(g.Headers)), sh.HeaderNames) {
					found = g
					break
				}
			}
			if found == nil {
				return nil, settingsErrorf("run %d sent the headers %s to host %s; their values are not stored in the database: "+
					"resume it with the configuration file that has them (--config FILE)", runID, strings.Join(sh.HeaderNames, ", "), h.Match)
			}
			if sh.HeaderHash != "" && headerHash(found.Headers) != sh.HeaderHash {
				return nil, settingsErrorf("run %d sent other values of the headers %s to host %s than the configuration file has: "+
					"resume it with the file it was started with, or start a new run", runID, strings.Join(sh.HeaderNames, ", "), h.Match)
			}
			h.Headers = maps.Clone(found.Headers)
		}
		out = append(out, h)
	}
	return withHeaderHashes(out), nil
}

// withHeaderHashes returns host rules with the names and a hash of their
// header values set from the values (rules without values keep theirs):
// what a run stores of the headers, so that other values make other
// settings.
func withHeaderHashes(hosts []HostSettings) []HostSettings {
	if len(hosts) == 0 {
		return hosts
	}
	out := make([]HostSettings, len(hosts))
	for i, h := range hosts {
		if len(h.Headers) > 0 {
			h.HeaderNames = slices.Sorted(maps.Keys(h.Headers))
			h.HeaderHash = headerHash(h.Headers)
		}
		out[i] = h
	}
	return out
}

// headerHash is a hash of a host rule's header names and values.
func headerHash(h map[string]string) string {
	names := slices.Sorted(maps.Keys(h))
	sum := sha256.New()
	io.WriteString(sum, "linkrot host headers\x00")
	for _, n := range names {
		fmt.Fprintf(sum, "%d:%s%d:%s", len(n), n, len(h[n]), h[n])
	}
	return hex.EncodeToString(sum.Sum(nil))
}

// orDiscard returns log, or a logger that discards when it is nil.
func orDiscard(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return log
}

// resumeQuery selects the runs of command that --resume may continue:
// unfinished ones, and for linkrot audit and linkrot study also complete
// ones whose report (the study's files) was not written; with settings
// fingerprint fp ("": any).
func resumeQuery(command, fp string) store.ResumeQuery {
	return store.ResumeQuery{Command: command, Fingerprint: fp,
		WithReport: command == audit.CommandAudit || command == audit.CommandStudy}
}
