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

// fragmentChunks are the row counts of the multi-row INSERTs of
// run_fragments that Open prepares (3 columns each), largest first.
var fragmentChunks = []int{64, 16, 4, 1}

// fragmentsSQL caches the text of those INSERTs (multiRowSQL).
var fragmentsSQL = multiRowSQL{build: buildInsertFragmentsSQL}

// buildInsertFragmentsSQL adds n rows to run_fragments, leaving out those
// the run has.
func buildInsertFragmentsSQL(n int, p *paramList) string {
	return `INSERT INTO run_fragments (run_id, target_id, fragment) VALUES ` + p.rows(3, n) +
		` ON CONFLICT DO NOTHING`
}

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
	args := make([]any, 0, 3*fragmentChunks[0])
	for len(keys) > 0 {
		n := rowsNext(fragmentChunks, len(keys))
		args = args[:0]
		for _, k := range keys[:n] {
			args = append(args, s.runID, k.target, k.fragment)
		}
		keys = keys[n:]
		stmt, err := s.db.txStmt(ctx, tx, fragmentsSQL.in(s.db.paramStyle(), n))
		if err == nil {
			_, err = stmt.ExecContext(ctx, args...)
			stmt.Close()
		}
		if err != nil {
			return fmt.Errorf("fragments of the batch: %w", err)
		}
	}
	return nil
}
