package main

import (
	"context"
	"flag"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/scaleout"
)

// natsFlags are the scale-out flags of linkrot audit and linkrot worker.
type natsFlags struct {
	addr       string
	partitions int
	ackWait    time.Duration
}

func (f *natsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.addr, "nats", "", "scale out: the NATS JetStream server `URL` (nats://host:4222) that carries the run's work to linkrot worker processes; credentials from LINKROT_NATS_USER/LINKROT_NATS_PASSWORD, LINKROT_NATS_TOKEN or LINKROT_NATS_CREDS")
	fs.DurationVar(&f.ackWait, "ack-wait", scaleout.DefaultAckWait, "scale out: a unit held this `long` by a worker that stopped answering (killed, cut off) goes to another worker (set by linkrot audit)")
	fs.IntVar(&f.partitions, "partitions", scaleout.DefaultPartitions, "scale out: work partitions (hosts are spread over them; the same `number` for every process of a deployment)")
}

// check validates the flags without connecting: credentials never on the
// command line (they would be stored with the run's arguments).
func (f *natsFlags) check() error {
	if f.addr == "" {
		return nil
	}
	if err := scaleout.CheckURL(f.addr); err != nil {
		return usagef("%v", err)
	}
	if f.ackWait < time.Second {
		return usagef("--ack-wait must be at least 1s")
	}
	if f.partitions <= 0 {
		return usagef("--partitions must be at least 1")
	}
	return nil
}

// open connects to NATS and opens the work queue: an unreachable server
// or one without JetStream is one error, before anything is written.
func (f *natsFlags) open(ctx context.Context, name string) (*nats.Conn, *scaleout.Queue, error) {
	return scaleout.Dial(ctx, f.addr, name, scaleout.Options{Partitions: f.partitions, AckWait: f.ackWait})
}

// scaleOutAudit checks what linkrot audit --nats supports and connects:
// a recursive crawl of URLs (the workers fetch them), no page budget
// (--max-pages needs one counter for the run; not in the scale-out mode).
func scaleOutAudit(ctx context.Context, nf *natsFlags, in linkrot.Input, maxPages int) (*nats.Conn, *scaleout.Queue, error) {
	if err := nf.check(); err != nil {
		return nil, nil, err
	}
	if in.Kind != linkrot.Site {
		return nil, nil, usagef("--nats: only a crawl from URLs is scaled out (not --urls, --sitemap or a directory)")
	}
	if maxPages > 0 {
		return nil, nil, usagef("--nats: --max-pages is not supported in the scale-out mode")
	}
	return nf.open(ctx, "linkrot audit")
}

// coordinate is linkrot.Config.Work of linkrot audit --nats: the seeds to
// the queue, the workers' progress to the display, back when the run's
// work is drained.
func coordinate(q *scaleout.Queue, store interface {
	PageResponse(ctx context.Context, runID int64, targetURL string) (*audit.Page, error)
}, run *audit.Run, seeds []string, perHost int, prog *auditProgress, log *slog.Logger) func(ctx context.Context) (map[string][]string, error) {
	return func(ctx context.Context) (map[string][]string, error) {
		return scaleout.Coordinate(ctx, scaleout.CoordinateConfig{
			Queue: q, Run: run, Seeds: seeds, PerHost: perHost, Logger: log,
			Follow: scaleout.Follow{
				Page:    func(links int) { prog.pages.addN(int64(links)) },
				Checked: func() { prog.checks.add() },
			},
			Stored: func(ctx context.Context, runID int64, u string) bool {
				_, err := store.PageResponse(ctx, runID, u)
				return err == nil
			},
		})
	}
}
