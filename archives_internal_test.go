package linkrot

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/linkrot/linkrot/archives/archivetest"
	"github.com/linkrot/linkrot/archives/memento"
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/check"
	"github.com/linkrot/linkrot/drift"
	"github.com/linkrot/linkrot/httpx"
)

func ts(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// TestArchiveTransport: the audited site is public, a configured archive
// is on loopback: only that archive may be reached on a private address;
// a snapshot on another loopback host is refused.
func TestArchiveTransport(t *testing.T) {
	fa := archivetest.New(t, archivetest.Options{})
	fa.Add(archivetest.Memento{Original: "http://example.org/", Time: ts("2024-01-01T00:00:00Z"), Body: "<p>x</p>"})
	other := archivetest.New(t, archivetest.Options{})
	other.Add(archivetest.Memento{Original: "http://example.org/", Time: ts("2024-01-01T00:00:00Z"), Body: "<p>x</p>"})
	f := ArchiveSettings{
		Archives:    []string{fa.Flag("fx", "6000/min")},
		PWIDs:       []string{"fx.archive=" + fa.URL + "/web/{timestamp}{raw}/{item}"},
		MaxDistance: time.Hour, Workers: 1, Shingle: 1, FetchRate: "60/min", Thresholds: drift.DefaultThresholds(),
	}
	archives, _, _, err := f.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	// A public address literal: no DNS query.
	run := &audit.Run{Seeds: []string{"http://93.184.215.14/"}}
	topts, private := archiveTransport(context.Background(), run, &f, archives, check.Options{})
	if topts.AllowPrivate || len(private) != 6 {
		t.Fatalf("AllowPrivate %v, private endpoints %v; want false, the site's two origins and the archive's four (TimeGate, TimeMap, save, pwid)", topts.AllowPrivate, private)
	}
	rt, done := httpx.NewTransportAllowing(topts.HTTP(), private)
	defer done()
	client := memento.NewClient(memento.Options{Archives: archives, Transport: rt, Timeout: 5 * time.Second})
	if _, err := client.Negotiate(context.Background(), archives[0], "http://example.org/", ts("2024-01-01T00:00:00Z")); err != nil {
		t.Errorf("configured archive: %v", err)
	}
	_, err = client.FetchMemento(context.Background(), other.URLOf("http://example.org/", ts("2024-01-01T00:00:00Z"), ""), -1)
	var ae *memento.Error
	if !errors.As(err, &ae) || ae.Class != "policy" {
		t.Errorf("snapshot on another loopback host: %v, want a policy refusal", err)
	}
	// A site on loopback allows its own origin, not the whole private
	// network: the other loopback archive stays refused.
	run.Seeds = []string{other.URL + "/docs/"}
	topts, private = archiveTransport(context.Background(), run, &f, archives, check.Options{})
	if topts.AllowPrivate || !slices.Contains(private, other.URL+"/") {
		t.Errorf("site on loopback: AllowPrivate %v, private %v; want false and the site's origin", topts.AllowPrivate, private)
	}
	rt2, done2 := httpx.NewTransportAllowing(topts.HTTP(), private)
	defer done2()
	client2 := memento.NewClient(memento.Options{Archives: archives, Transport: rt2, Timeout: 5 * time.Second})
	if _, err := client2.FetchMemento(context.Background(), other.URLOf("http://example.org/", ts("2024-01-01T00:00:00Z"), ""), -1); err != nil {
		t.Errorf("the site's own origin: %v", err)
	}
}
