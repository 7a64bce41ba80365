package archives

import (
	"context"
	"testing"
	"time"

	"github.com/linkrot/linkrot/archives/archivetest"
)

// BenchmarkArchiveStage_TwoBudgets: two archives of different budgets
// (600 and 1200 requests a minute published, 540 and 1080 sent after the
// 10% margin) and 200 links, each looked up in both: the archives are
// asked in parallel, so the stage takes about as long as the slower
// archive's floor (its lookups ÷ its budget), not the sum of both. The
// target: within 1.15× that floor plus 5 s.
//
//	go test -run XXX -bench ArchiveStage -benchtime 1x ./archives/
func BenchmarkArchiveStage_TwoBudgets(b *testing.B) {
	const n = 200
	for range b.N {
		b.StopTimer()
		slow := archivetest.New(b, archivetest.Options{})
		fast := archivetest.New(b, archivetest.Options{})
		at := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
		in := stageInput{RunID: 1, Links: datedLinks(n, at, slow, fast)}
		cs, cf := slow.Config("slow", 600), fast.Config("fast", 1200)
		client := stageClient(b, cs, cf)
		var c collector
		b.StartTimer()
		start := time.Now()
		sum, err := runStage(context.Background(), Options{Client: client, SiteHosts: siteHosts}, in, c.sink())
		elapsed := time.Since(start)
		b.StopTimer()
		if err != nil || sum.LinksWithMemento != n || sum.LookupErrors != 0 {
			b.Fatalf("run: %v, %d with memento, %d failed", err, sum.LinksWithMemento, sum.LookupErrors)
		}
		// Floor: the first request goes at once, each further one waits a
		// token at the archive's rate.
		floor := time.Duration(float64(len(slow.Requests())-1) / cs.PerMinute() * float64(time.Minute))
		fastFloor := time.Duration(float64(len(fast.Requests())-1) / cf.PerMinute() * float64(time.Minute))
		b.ReportMetric(elapsed.Seconds(), "s-stage")
		b.ReportMetric(floor.Seconds(), "s-slowest-floor")
		b.ReportMetric((floor + fastFloor).Seconds(), "s-sum-of-floors")
		b.ReportMetric(elapsed.Seconds()/floor.Seconds(), "x-floor")
		if limit := time.Duration(1.15*float64(floor)) + 5*time.Second; elapsed > limit {
			b.Errorf("archive stage took %v, more than 1.15 × the slowest floor %v + 5s = %v", elapsed, floor, limit)
		}
	}
}
