package robustify

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/linkrot/linkrot/archives/memento"
)

// LookupOptions configure ArchiveLookupWith.
type LookupOptions struct {
	// TimeMaps also reads each archive's TimeMap, so that the memento
	// nearest to the date is found even when a TimeGate does not
	// negotiate (answers its latest memento whatever the date): one more
	// request per link and archive.
	TimeMaps bool
}

// ArchiveLookup is ArchiveLookupWith without TimeMaps.
func ArchiveLookup(client *memento.Client, archives []memento.Archive) Lookup {
	return ArchiveLookupWith(client, archives, LookupOptions{})
}

// ArchiveLookupWith asks every archive's TimeGate (in parallel, each
// within its budget through client) for the memento of uriR nearest to at
// (Accept-Datetime: at) and returns the nearest of all the mementos the
// answers name: the one the TimeGate selected, those its Link header
// lists with datetimes (first, last, prev, next), and with TimeMaps every
// memento of the archive's TimeMap. Local collections are never used:
// their replay URLs name this machine, not a place a reader can visit.
func ArchiveLookupWith(client *memento.Client, archives []memento.Archive, o LookupOptions) Lookup {
	return func(ctx context.Context, uriR string, at time.Time) (Memento, error) {
		type res struct {
			cands []memento.Candidate
			err   error
		}
		out := make([]res, len(archives))
		var wg sync.WaitGroup
		for i, a := range archives {
			if a.Local {
				out[i].err = memento.ErrNoMemento
				continue
			}
			wg.Go(func() {
				n, err := client.Negotiate(ctx, a, uriR, at)
				if err == nil {
					out[i].cands = append(append(out[i].cands, n.Memento), n.Candidates...)
				} else {
					out[i].err = fmt.Errorf("%s: %w", a.Name, err)
				}
				if !o.TimeMaps || a.TimeMap == "" || (err != nil && !errors.Is(err, memento.ErrNoMemento)) {
					return
				}
				tm, terr := client.TimeMap(ctx, a, uriR)
				switch {
				case terr == nil:
					out[i].cands = append(out[i].cands, tm.Mementos...)
				case !errors.Is(terr, memento.ErrNoMemento) && err == nil:
					// The TimeGate's answer stands; the TimeMap only
					// refines it.
				case !errors.Is(terr, memento.ErrNoMemento):
					out[i].err = fmt.Errorf("%s: timemap: %w", a.Name, terr)
				}
			})
		}
		wg.Wait()
		var cands []memento.Candidate
		var fails []string
		for _, r := range out {
			cands = append(cands, r.cands...)
			if r.err != nil && len(r.cands) == 0 && !errors.Is(r.err, memento.ErrNoMemento) {
				fails = append(fails, r.err.Error())
			}
		}
		if best, ok := memento.Nearest(cands, at); ok {
			return Memento{URL: best.URL, Datetime: best.Datetime}, nil
		}
		if len(fails) > 0 {
			return Memento{}, fmt.Errorf("lookup failed (tried again next run): %s", strings.Join(fails, "; "))
		}
		return Memento{}, ErrNoMemento
	}
}

// ArchiveVerify checks a declared snapshot: it must answer 2xx with a
// Memento-Datetime.
func ArchiveVerify(client *memento.Client) Verify {
	return func(ctx context.Context, versionURL string) error {
		m, err := client.FetchMemento(ctx, versionURL, -1)
		switch {
		case err != nil:
			return err
		case m.Status < 200 || m.Status > 299:
			return fmt.Errorf("answered %d", m.Status)
		case m.Datetime.IsZero():
			return errors.New("answered without Memento-Datetime: not a memento")
		}
		return nil
	}
}

// ArchiveSave captures uriR with the first archive that takes capture
// requests (Save Page Now 2), within its save budget.
func ArchiveSave(client *memento.Client, archives []memento.Archive, o memento.SaveOptions) Capture {
	return func(ctx context.Context, uriR string) (Memento, error) {
		for _, a := range archives {
			if a.Save == "" {
				continue
			}
			r := client.Save(ctx, a, uriR, o)
			if r.Status != "success" || r.Memento == "" {
				return Memento{}, fmt.Errorf("%s: %s %s", a.Name, r.Status, r.Reason)
			}
			m, err := client.FetchMemento(ctx, r.Memento, -1)
			if err != nil {
				return Memento{}, err
			}
			if m.Status != http.StatusOK || m.Datetime.IsZero() {
				return Memento{}, fmt.Errorf("new capture %s answered %d without Memento-Datetime", r.Memento, m.Status)
			}
			return Memento{URL: m.FinalURL, Datetime: m.Datetime}, nil
		}
		return Memento{}, errors.New("no archive takes capture requests")
	}
}
