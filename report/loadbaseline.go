package report

import (
	"context"
	"errors"
	"fmt"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/crawler/baseline"
	"github.com/linkrot/linkrot/crawler/extract"
)

// OccurrenceReader reads the link occurrences of the run before a run
// (0: the latest run) and that run's ID.
type OccurrenceReader interface {
	Occurrences(ctx context.Context, before int64) (map[audit.Occurrence]bool, int64, error)
}

// BaselineSource is what a change is compared with (--fail-on
// introduced): the files of a directory input at a git revision, or the
// link occurrences of an earlier run in a database.
type BaselineSource struct {
	// GitRev: the directory Dir, served under Base, at this git revision.
	GitRev    string
	Dir, Base string
	// Occurrences, when GitRev is "": the run before Before (0: the
	// latest run) of this store; DBName names the database in the
	// baseline's reference.
	Occurrences OccurrenceReader
	Before      int64
	DBName      string
}

// LoadBaseline marks the link occurrences of ds that src already had
// (NewBaseline): a link is old when its target was on a line with
// the same text there. An empty database (no earlier run) has none, so
// every occurrence is introduced.
func LoadBaseline(ctx context.Context, ds *Dataset, src BaselineSource) (*Baseline, error) {
	var set baseline.Set
	var ref string
	if src.GitRev != "" {
		var err error
		if set, err = baseline.FromGit(ctx, src.Dir, src.GitRev, src.Base, extract.Options{}); err != nil {
			return nil, err
		}
		ref = "git " + src.GitRev
	} else {
		occ, from, err := src.Occurrences.Occurrences(ctx, src.Before)
		if errors.Is(err, audit.ErrNotFound) {
			occ, err = nil, nil // no earlier run: every occurrence is introduced
		}
		if err != nil {
			return nil, err
		}
		set = baseline.Set{}
		for o := range occ {
			set[baseline.Occurrence{Target: o.Target, LineHash: o.LineHash}] = true
		}
		ref = fmt.Sprintf("database %s, run %d", src.DBName, from)
	}
	return NewBaseline(ds, ref, set.Old)
}
