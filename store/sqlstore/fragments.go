package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// A run's #fragments are stored once per target and fragment in
// run_fragments (migration 0019), beside the link rows that carry them:
// the findings stage decides once per pair whether the target has the
// anchor and reads whole only the links of the pairs that give a finding.
// The writer gathers a batch's distinct pairs while it writes the links
// and adds them with the batch, in the same transaction, so a committed
// page always has its pairs.

// fragKey is a (target, fragment) pair of a run.
type fragKey struct {
	target   int64
	fragment string
}

// fragmentsSeen is the DB's memory of the pairs committed batches wrote,
// so that a batch skips the pairs earlier ones wrote (a documentation
// tree repeats its #anchors on page after page) without asking the
// database. It holds the pairs of one run, copies of their fragments
// (never a slice of a page's strings, which it would keep alive), at most
// fragmentsSeenBytes of them, and forgets them all when full; a fragment
// longer than fragmentSeenMaxLen is not remembered. A pair it does not
// hold costs one conflicting row. Pairs enter it only once their
// transaction has committed (saver.publish), so a rolled-back pair is
// never skipped.
type fragmentsSeen struct {
	mu    sync.Mutex
	runID int64
	pairs map[fragKey]struct{}
	bytes int // what pairs holds, counted as fragmentSeenCost
}

const (
	// fragmentsSeenBytes bounds fragmentsSeen's memory.
	fragmentsSeenBytes = 4 << 20
	// fragmentSeenMaxLen is the longest fragment fragmentsSeen holds.
	fragmentSeenMaxLen = 256
)

// fragmentSeenCost is what a pair costs fragmentsSeen: its fragment's
// bytes and about as much again for the key and the map's slot.
func fragmentSeenCost(k fragKey) int { return len(k.fragment) + 64 }

// has reports whether a committed batch of run wrote k.
func (f *fragmentsSeen) has(run int64, k fragKey) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.pairs[k]
	return ok && f.runID == run
}

// add records the pairs of a committed batch of run.
func (f *fragmentsSeen) add(run int64, pairs map[fragKey]struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pairs == nil || f.runID != run {
		f.runID, f.pairs, f.bytes = run, make(map[fragKey]struct{}, len(pairs)), 0
	}
	for k := range pairs {
		if len(k.fragment) > fragmentSeenMaxLen {
			continue
		}
		if _, ok := f.pairs[k]; ok {
			continue
		}
		if f.bytes+fragmentSeenCost(k) > fragmentsSeenBytes {
			clear(f.pairs)
			f.bytes = 0
		}
		f.pairs[fragKey{k.target, strings.Clone(k.fragment)}] = struct{}{}
		f.bytes += fragmentSeenCost(k)
	}
}

// forget drops what f holds of run.
func (f *fragmentsSeen) forget(run int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.runID == run {
		f.pairs = nil
	}
}

// fragmentChunk is the row count of the multi-row INSERT of
// run_fragments: 3 parameters per row, far below both engines' limits.
const fragmentChunk = 128

// noteFragment records that a link of the batch has target and fragment
// (target nil: the link has none, and no check to hold the fragment
// against).
func (s *saver) noteFragment(target any, fragment string) {
	id, ok := target.(int64)
	if !ok || fragment == "" || !s.db.fragments {
		return
	}
	k := fragKey{id, fragment}
	if _, ok := s.frags[k]; ok || s.db.fragSeen.has(s.runID, k) {
		return
	}
	if s.frags == nil {
		s.frags = make(map[fragKey]struct{})
	}
	s.frags[k] = struct{}{}
}

// writeFragments adds the batch's pairs the run does not have yet. They
// go in key order: two writers of one run (PostgreSQL workers) then take
// these rows' locks in the same order and cannot deadlock over them
// (retryTx retries a batch that deadlocked over other rows).
func (s *saver) writeFragments(ctx context.Context, tx *sql.Tx) error {
	if len(s.frags) == 0 {
		return nil
	}
	keys := make([]fragKey, 0, len(s.frags))
	for k := range s.frags {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b fragKey) int {
		return cmp.Or(cmp.Compare(a.target, b.target), cmp.Compare(a.fragment, b.fragment))
	})
	args := make([]any, 0, 3*fragmentChunk)
	var full *sql.Stmt // the statement of fragmentChunk rows, prepared once
	defer func() {
		if full != nil {
			full.Close()
		}
	}()
	for lo := 0; lo < len(keys); lo += fragmentChunk {
		chunk := keys[lo:min(lo+fragmentChunk, len(keys))]
		args = args[:0]
		for _, k := range chunk {
			args = append(args, s.runID, k.target, k.fragment)
		}
		var err error
		if len(chunk) == fragmentChunk {
			if full == nil {
				if full, err = tx.PrepareContext(ctx, s.db.insertFragmentsSQL(fragmentChunk)); err != nil {
					return fmt.Errorf("fragments of the batch: %w", err)
				}
			}
			_, err = full.ExecContext(ctx, args...)
		} else {
			_, err = tx.ExecContext(ctx, s.db.insertFragmentsSQL(len(chunk)), args...)
		}
		if err != nil {
			return fmt.Errorf("fragments of the batch: %w", err)
		}
	}
	return nil
}

// insertFragmentsSQL adds n rows to run_fragments, leaving out those the
// run has.
func (db *DB) insertFragmentsSQL(n int) string {
	p := paramList{style: db.paramStyle()}
	return `INSERT INTO run_fragments (run_id, target_id, fragment) VALUES ` + p.rows(3, n) +
		` ON CONFLICT DO NOTHING`
}
