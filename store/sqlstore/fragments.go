package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
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

// fragmentsSeen is the DB's memory of the pairs committed batches wrote
// (committedSet). It holds copies of the fragments (never a slice of a
// page's strings, which it would keep alive), and no fragment longer than
// fragmentSeenMaxLen.
type fragmentsSeen = committedSet[fragKey]

// fragmentSeenMaxLen is the longest fragment fragmentsSeen holds.
const fragmentSeenMaxLen = 256

// held keeps a copy of k's fragment, counting its bytes and about as much
// again for the key and the map's slot (committable).
func (k fragKey) held() (fragKey, int, bool) {
	if len(k.fragment) > fragmentSeenMaxLen {
		return fragKey{}, 0, false
	}
	return fragKey{k.target, strings.Clone(k.fragment)}, len(k.fragment) + 64, true
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
	note(&s.frags, fragKey{id, fragment})
}

// writeFragments adds the batch's pairs the run does not have yet. They
// go in key order: two writers of one run (PostgreSQL workers) then take
// these rows' locks in the same order and cannot deadlock over them
// (retryTx retries a batch that deadlocked over other rows).
func (s *saver) writeFragments(ctx context.Context, tx *sql.Tx) error {
	if len(s.frags) == 0 {
		return nil
	}
	keys := s.db.fragSeen.missing(s.runID, s.frags)
	slices.SortFunc(keys, func(a, b fragKey) int {
		return cmp.Or(cmp.Compare(a.target, b.target), cmp.Compare(a.fragment, b.fragment))
	})
	return s.insertKeys(ctx, tx, &fragmentsSQL, fragmentChunks, 3, len(keys), func(args []any, i int) []any {
		return append(args, s.runID, keys[i].target, keys[i].fragment)
	}, "fragments of the batch")
}

// insertKeys writes n rows of arity parameters each by m's multi-row
// statements (chunks: their row counts, largest first); row appends the
// arguments of row i. what names the rows in an error.
func (s *saver) insertKeys(ctx context.Context, tx *sql.Tx, m *multiRowSQL, chunks []int, arity, n int,
	row func(args []any, i int) []any, what string) error {
	args := make([]any, 0, arity*chunks[0])
	for lo := 0; lo < n; {
		k := rowsNext(chunks, n-lo)
		args = args[:0]
		for i := lo; i < lo+k; i++ {
			args = row(args, i)
		}
		lo += k
		stmt, err := s.db.txStmt(ctx, tx, m.in(s.db.paramStyle(), k))
		if err == nil {
			_, err = stmt.ExecContext(ctx, args...)
			stmt.Close()
		}
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	return nil
}
