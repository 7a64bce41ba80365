package sqlstore

import (
	"context"
	"database/sql"
	"slices"
)

// run_targets (migration 0020) holds the targets a run's links point to,
// once each: what the summary counts, the history, the archives and the
// resume ask of a run ("which targets does it link to") without reading
// its links (a documentation tree's 176,000 link rows name 5,000
// targets). The writer adds a batch's targets with the batch, in its
// transaction, as it does run_fragments (committed.go), so that a
// committed page's targets are always there.

// runTarget is a target of a run (committable).
type runTarget int64

// held keeps t, counting its bytes and about as much again for the map's
// slot (committable).
func (t runTarget) held() (runTarget, int, bool) { return t, 16, true }

// runTargetChunks are the row counts of the multi-row INSERTs of
// run_targets that Open prepares (2 columns each), largest first.
var runTargetChunks = []int{64, 16, 4, 1}

// runTargetsSQL caches the text of those INSERTs (multiRowSQL).
var runTargetsSQL = multiRowSQL{build: func(n int, p *paramList) string {
	return `INSERT INTO run_targets (run_id, target_id) VALUES ` + p.rows(2, n) + ` ON CONFLICT DO NOTHING`
}}

// noteTarget records that a link of the batch has target (nil: the link
// has none).
func (s *saver) noteTarget(target any) {
	if id, ok := target.(int64); ok && s.db.runTargets {
		note(&s.targets, runTarget(id))
	}
}

// writeRunTargets adds the batch's targets the run does not have yet, in
// ID order (see writeFragments).
func (s *saver) writeRunTargets(ctx context.Context, tx *sql.Tx) error {
	if len(s.targets) == 0 {
		return nil
	}
	ids := s.db.targetSeen.missing(s.runID, s.targets)
	slices.Sort(ids)
	return s.insertKeys(ctx, tx, &runTargetsSQL, runTargetChunks, 2, len(ids), func(args []any, i int) []any {
		return append(args, s.runID, int64(ids[i]))
	}, "targets of the batch")
}
