package linkrot

import (
	"context"
	"log/slog"

	"github.com/linkrot/linkrot/audit"
)

// historyStore applies a run to the targets' histories.
type historyStore interface {
	ApplyHistory(ctx context.Context, runID int64, rule audit.ConfirmRule) (audit.HistoryResult, error)
}

// historyStage folds the run's checks into the targets' histories (once
// per run: a resumed run is not counted twice) and logs what it found.
func historyStage(ctx context.Context, store historyStore, run *audit.Run, rule audit.ConfirmRule, log *slog.Logger) error {
	res, err := store.ApplyHistory(ctx, run.ID, rule)
	if err != nil {
		return err
	}
	log.Info("history updated", "run", run.ID, "runs_applied", len(res.Runs), "targets", res.Targets,
		"newly_confirmed", res.Confirmed, "recovered", res.Recovered)
	return nil
}
