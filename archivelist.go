package linkrot

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/linkrot/linkrot/archives/memento"
	"github.com/linkrot/linkrot/archives/warc"
	"github.com/linkrot/linkrot/httpx"
)

// ArchiveList is the archives linkrot archives lists and pings: Memento
// archives, then the local web archives (WARC collections) among them.
type ArchiveList struct {
	Archives    []memento.Archive
	Collections []*warc.Collection
	// configured: the archives were given as specs, so their endpoints
	// may be private addresses (Ping allows them).
	configured bool
}

// ListArchives resolves the archives to list: every preset with presets,
// else the archives specs name (--archive values, memento.ParseArchive),
// else the default archives unless warcs are given. Each of warcs (an
// --archive-warc path) is opened as a collection, its index beside the
// database dbPath (OpenCollections), and listed after the others.
func ListArchives(specs, warcs []string, presets bool, dbPath string) (*ArchiveList, error) {
	l := &ArchiveList{configured: len(specs) > 0}
	switch {
	case presets:
		l.Archives = memento.Presets()
	case len(specs) > 0:
		for _, s := range specs {
			a, err := memento.ParseArchive(s)
			if err != nil {
				return nil, fmt.Errorf("--archive: %w", err)
			}
			l.Archives = append(l.Archives, a)
		}
	default:
		if len(warcs) == 0 {
			l.Archives = memento.Defaults()
		}
	}
	if len(warcs) > 0 {
		cols, err := OpenCollections(warcs, dbPath, slog.New(slog.DiscardHandler))
		if err != nil {
			return nil, err
		}
		l.Collections = cols
		for _, c := range cols {
			l.Archives = append(l.Archives, c.Archive())
		}
	}
	return l, nil
}

// Write writes the archives as a table of their request pools (published
// rate, safety margin, the rate linkrot sends at most, endpoints), then
// each archive's raw-replay form, save endpoint, source and shutdown
// note, and each collection's indexes and unreadable records.
func (l *ArchiveList) Write(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ARCHIVE\tPOOL\tPUBLISHED\tMARGIN\tSENT AT MOST\tENDPOINTS")
	for _, a := range l.Archives {
		for i, p := range a.AllPools() {
			name := ""
			if i == 0 {
				name = a.Name
			}
			pub, margin, sent := fmt.Sprintf("%g/min", rateOr(p.Rate)), fmt.Sprintf("%g%%", marginOf(p.Margin)*100), fmt.Sprintf("%.4g/min", p.PerMinute())
			if a.Local {
				pub, margin, sent = "-", "-", "unlimited (local)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", name, p.Name, pub, margin, sent, strings.Join(p.Prefixes, " "))
		}
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, a := range l.Archives {
		fmt.Fprintf(w, "%s: raw replay %s\n", a.Name, a.Raw.Describe())
		if a.Save != "" {
			fmt.Fprintf(w, "  save: %s at %g/min\n", a.Save, rateOr(a.SaveRate))
		}
		if a.Source != "" {
			fmt.Fprintf(w, "  source: %s\n", a.Source)
		}
		if a.Shutdown != "" {
			fmt.Fprintf(w, "  SHUT DOWN: %s\n", a.Shutdown)
		}
	}
	for _, c := range l.Collections {
		for _, ix := range c.Indexes() {
			fmt.Fprintf(w, "%s: index %s\n", c.Name, ix)
		}
		for _, d := range c.Diagnostics() {
			fmt.Fprintf(w, "%s: unreadable record: %s\n", c.Name, d)
		}
	}
}

// Ping asks every archive at once whether it answers Memento for url
// (TimeGate, then TimeMap), each within timeout, and returns the results
// in list order. Archives on loopback or private addresses are refused
// unless allowPrivate, or the archive was configured by spec.
func (l *ArchiveList) Ping(ctx context.Context, url string, timeout time.Duration, allowPrivate bool) []memento.PingResult {
	var private []string
	if l.configured {
		for _, a := range l.Archives {
			private = append(private, a.TimeGate, a.TimeMap)
		}
	}
	rt, closeRT := httpx.NewTransportAllowing(httpx.Options{AllowPrivate: allowPrivate}, private)
	defer closeRT()
	client := memento.NewClient(memento.Options{Archives: l.Archives, Transport: warc.Transport(rt, l.Collections...), Timeout: timeout, Retries: -1})
	results := make([]memento.PingResult, len(l.Archives))
	var wg sync.WaitGroup
	for i, a := range l.Archives {
		wg.Go(func() {
			pctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			results[i] = client.Ping(pctx, a, url)
		})
	}
	wg.Wait()
	return results
}

func rateOr(r float64) float64 {
	if r <= 0 {
		return memento.DefaultRate
	}
	return r
}

func marginOf(m float64) float64 {
	switch {
	case m == 0:
		return memento.DefaultMargin
	case m < 0:
		return 0
	}
	return m
}
