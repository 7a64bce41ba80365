package archives

import (
	"context"
	"testing"
	"time"

	"github.com/linkrot/linkrot/archives/archivetest"
	"github.com/linkrot/linkrot/audit"
)

// TestPrefetch_Take: a question asked ahead is asked once; runStage's nearest
// takes its answer (with its own wanted-from), a question never asked is
// runStage's to ask, and nothing is asked after close.
func TestPrefetch_Take(t *testing.T) {
	fa := archivetest.New(t, archivetest.Options{})
	const orig = "http://example.org/gone"
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	fa.Add(archivetest.Memento{Original: orig, Time: at, Body: page("it was there")})
	a := fa.Config("fx", 60000)
	s := newStage(Options{Client: stageClient(t, a), Workers: 1}, stageInput{}, stageSink{})
	ctx := context.Background()
	p := newPrefetch(ctx, s, 4)
	defer p.stop()

	w := want{uriR: orig, at: at, from: "first-seen"}
	p.ask(w)
	p.ask(w) // asked once
	deadline := time.Now().Add(10 * time.Second)
	for p.started() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	res, ok := p.take(ctx, a, want{uriR: orig, at: at, from: "versiondate"})
	if !ok || !res.found || res.memento.Status != audit.LookupFound || res.memento.WantedFrom != "versiondate" {
		t.Fatalf("take = %+v, %v; want the memento found ahead, wanted from versiondate", res, ok)
	}
	if n := fa.Count("/web/" + orig); n != 1 {
		t.Errorf("%d TimeGate requests, want 1", n)
	}
	if _, ok := p.take(ctx, a, want{uriR: orig, at: at.Add(time.Hour)}); ok {
		t.Errorf("a question never asked ahead was taken")
	}
	p.close()
	p.ask(want{uriR: orig, at: at.Add(2 * time.Hour)})
	if n := fa.Count("/web/" + orig); n != 1 {
		t.Errorf("%d TimeGate requests after close, want 1", n)
	}
}
