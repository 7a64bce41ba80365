package main

import (
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/schollz/progressbar/v3"
)

// progress shows a progress bar on stderr when it is a terminal, or logs a
// line every 10 seconds otherwise (cron). Core packages only call back; the
// display lives here.
type progress struct {
	desc   string
	total  int
	bar    *progressbar.ProgressBar
	log    *slog.Logger
	n      atomic.Int64
	links  atomic.Int64
	stop   chan struct{}
	exited chan struct{}
}

// newProgressN starts a progress display for total items (-1: unknown).
func newProgressN(stderr io.Writer, log *slog.Logger, desc string, total int) *progress {
	p := &progress{desc: desc, total: total, log: log, stop: make(chan struct{}), exited: make(chan struct{})}
	if isTerminal(stderr) {
		p.bar = progressbar.NewOptions64(int64(total),
			progressbar.OptionSetWriter(stderr),
			progressbar.OptionSetDescription(desc),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSpinnerType(14),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
		close(p.exited)
		return p
	}
	go func() {
		defer close(p.exited)
		t := time.NewTicker(10 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				args := []any{"stage", p.desc, "done", p.n.Load()}
				if p.total >= 0 {
					args = append(args, "of", p.total)
				}
				if l := p.links.Load(); l > 0 {
					args = append(args, "links", l)
				}
				log.Info("progress", args...)
			}
		}
	}()
	return p
}

// add counts one item done.
func (p *progress) add() { p.addN(0) }

// addN counts one item done that carried links links.
func (p *progress) addN(links int64) {
	p.n.Add(1)
	p.links.Add(links)
	if p.bar != nil {
		_ = p.bar.Add(1)
	}
}

// done stops the display.
func (p *progress) done() {
	if p.bar != nil {
		_ = p.bar.Finish()
		return
	}
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	<-p.exited
}

// auditProgress is linkrot.Progress for the terminal: one display counting
// pages crawled (with their links) and targets checked.
type auditProgress struct {
	pages, checks *progress
}

func newAuditProgress(stderr io.Writer, log *slog.Logger) *auditProgress {
	return &auditProgress{pages: newProgressN(stderr, log, "crawling", -1), checks: newProgressN(io.Discard, log, "checking", -1)}
}

func (a *auditProgress) Page(p *audit.Page)     { a.pages.addN(int64(len(p.Links))) }
func (a *auditProgress) Checked(c *audit.Check) { a.checks.add() }
func (a *auditProgress) Stage(string)           {}
func (a *auditProgress) done()                  { a.pages.done(); a.checks.done() }
