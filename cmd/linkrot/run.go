package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/linkrot/linkrot"
	"golang.org/x/term"
)

// Version is the linkrot version, stamped into every run.
var Version = "0.1.0-dev"

// Exit codes, documented in README.md ("Exit codes").
const (
	exitOK          = 0   // nothing at or above --fail-on
	exitFindings    = 1   // findings at or above --fail-on
	exitUsage       = 2   // bad flags, arguments or configuration
	exitFailure     = 3   // the tool itself could not continue
	exitLocked      = 4   // another linkrot writes to the database (see --wait)
	exitInterrupted = 130 // stopped by SIGINT/SIGTERM; work so far is saved
)

// errUsage marks errors that are the caller's: they exit with exitUsage.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// env is what a command runs with: injected streams, so tests run commands
// in-process.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	args           []string
	// onFlags, when set, receives the flag set of the command instead of
	// running it (parseCommand): linkrot config example lists flags so.
	onFlags func(*flag.FlagSet)
}

// isTerminal reports whether w is a terminal (progress bars only then).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

var commands = []struct {
	name, summary string
	run           func(ctx context.Context, e *env, args []string) error
}{
	{"audit", "crawl a site and check every link (the main job)", runAudit},
	{"study", "reference rot of a reference list (CSV, JSON Lines, BibTeX, CSL-JSON): link rot, drift, representative mementos, by citation year (docs/study.md)", runStudy},
	{"crawl", "crawl a site, sitemap, URL list or build directory into the database", runCrawl},
	{"check", "check the targets of a crawled run", runCheck},
	{"worker", "work on the runs linkrot audit --nats enqueues (scale-out, see docs/scale-out.md)", runWorker},
	{"fixes", "list the links to moved resources and their replacements", runFixes},
	{"diff", "what changed between two runs: new broken, confirmed, recovered, drifted, moved", runDiff},
	{"runs", "list the runs in the database with their counts", runRuns},
	{"prune", "remove old runs (targets keep their history)", runPrune},
	{"config", "print an example configuration file (config example) or check one", runConfig},
	{"suggest", "list Robust Link suggestions (html, json or csv)", runSuggest},
	{"archives", "list the archives a run asks, their budgets and raw form; --ping asks each once", runArchivesCmd},
	{"robustify", "add Robust Links attributes to the outbound links of a build directory, in place", runRobustify},
	{"report", "write the HTML report of a run (or JSON, CSV, JUnit, Markdown, SARIF)", runReport},
	{"demo", "audit a built-in site and archive on loopback and write its report", runDemo},
	{"extract", "print the links and robustness data of one page as JSON", runExtract},
	{"serve", "serve the dashboard and the link-maintenance endpoint (LINK/UNLINK/UNLINKR/LINKMOD, Webmention)", runServe},
	{"notify", "tell the sources of backlinks that our pages moved (UNLINKR) or changed (LINKMOD)", runNotify},
	{"version", "print the version", func(_ context.Context, e *env, _ []string) error {
		fmt.Fprintln(e.stdout, "linkrot", Version)
		return nil
	}},
}

// Run executes linkrot with args (without the program name) and returns the
// process exit code.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, args: args}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	for _, c := range commands {
		if c.name == args[0] {
			err := c.run(ctx, e, args[1:])
			return exitCode(e, err)
		}
	}
	fmt.Fprintf(stderr, "linkrot: unknown command %q (run 'linkrot help')\n", args[0])
	return exitUsage
}

func exitCode(e *env, err error) int {
	var ue *usageError
	var se *linkrot.SettingsError
	var fe *findingsError
	var le *lockedError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, &ue), errors.As(err, &se):
		fmt.Fprintf(e.stderr, "linkrot: %v\n", err)
		return exitUsage
	case errors.As(err, &fe):
		return exitFindings
	case errors.As(err, &le):
		fmt.Fprintf(e.stderr, "linkrot: %v\n", err)
		return exitLocked
	case errors.Is(err, context.Canceled):
		fmt.Fprintf(e.stderr, "linkrot: interrupted: %v (what was done so far is saved)\n", err)
		return exitInterrupted
	default:
		fmt.Fprintf(e.stderr, "linkrot: %v\n", err)
		return exitFailure
	}
}

// findingsError makes a command exit with exitFindings without a message.
type findingsError struct{ n int }

func (e *findingsError) Error() string { return fmt.Sprintf("%d findings", e.n) }

func usage(w io.Writer) {
	fmt.Fprintln(w, "linkrot audits link rot and content drift.")
	fmt.Fprintln(w, "\nUsage: linkrot <command> [flags] [arguments]\n\nCommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'linkrot <command> -h' for the flags of a command.")
}

// parseInterleaved parses flags that may appear before, between or after
// positional arguments ("linkrot crawl URL --max-depth 2").
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func newFlagSet(e *env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "Usage: linkrot %s %s\n\nFlags:\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// listFlag is a repeatable string flag.
type listFlag = linkrot.StringList

// sizeFlag is a byte count accepting KiB/MiB/GiB (and KB/MB/GB) suffixes.
type sizeFlag int64

func (s *sizeFlag) String() string { return strconv.FormatInt(int64(*s), 10) }

func (s *sizeFlag) Set(v string) error {
	n, err := linkrot.ParseSize(v)
	if err != nil {
		return err
	}
	*s = sizeFlag(n)
	return nil
}

// newLogger returns the run logger: text or JSON on stderr. It is quiet by
// default, on a terminal (the progress bar tells the rest) and off one
// (cron mails whatever a job prints: a run that goes well prints no log
// line): only warnings and errors. --verbose logs everything down to debug
// detail; --log-level (linkrot.NewLogger) chooses any level, info giving a
// progress line every 10 seconds and the stage summaries.
func newLogger(w io.Writer, format string, verbose, quiet bool) (*slog.Logger, error) {
	level := slog.LevelWarn
	if verbose && !quiet {
		level = slog.LevelDebug
	}
	return linkrot.NewLogger(w, format, level)
}

func roundDur(d time.Duration) time.Duration {
	if d > time.Minute {
		return d.Round(time.Second)
	}
	return d.Round(time.Millisecond)
}
