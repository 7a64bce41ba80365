package scaleout

import (
	"context"
	"net/url"
	"time"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/check"
	"github.com/linkrot/linkrot/crawler"
	"github.com/linkrot/linkrot/httpx"
)

// JobEnv returns a worker's env of job (built by linkrot.OpenStored with
// OpenOptions.Worker: the run's own settings, scheduler, robots.txt gate
// and SSRF scope), every request of its crawler and checker behind pacer:
// the spacing of a host (the run's delay, the robots.txt Crawl-delay of
// the audited hosts) and its pauses are shared with the other workers.
// The env's Close closes the job.
func JobEnv(job *linkrot.Job, pacer *Pacer) *RunEnv {
	copts, kopts := job.Config.Crawl, job.Config.Check
	base, closeBase := httpx.NewTransportAllowing(kopts.HTTP(), kopts.AllowPrivateHosts)
	delay := max(copts.Delay, kopts.HostDelay)
	gate := job.Robots
	pacer.MaxPause = kopts.MaxRetryWait
	pacer.Delay = func(ctx context.Context, u *url.URL) time.Duration {
		d := delay
		if gate != nil { // 0 for hosts outside the audited sites
			d = max(d, gate.CrawlDelay(ctx, u))
		}
		return d
	}
	paced := pacer.Transport(base)
	copts.Transport, kopts.Transport = paced, paced
	return &RunEnv{
		Seeds:             job.Run.Seeds,
		Crawler:           crawler.New(copts, nil),
		Checker:           check.New(kopts),
		ExternalFragments: job.Settings.Check.ExternalFragments,
		Close: func() {
			job.Close()
			closeBase()
		},
	}
}
