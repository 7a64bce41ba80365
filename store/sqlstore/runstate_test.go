package sqlstore

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store"
)

// TestMigrate_ResumeStages: a database of schema version 4 holding a
// complete run, a run interrupted after its history stage and a run whose
// settings carry a secret header migrates to one where the complete run
// has no report left to write, the interrupted one has its archives stage
// done, and the secret is nowhere in the file.
//
// SQLite-only: it builds a schema-4 SQLite file by hand.
func TestMigrate_ResumeStages(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/v4.db"
	raw := rawDB(t, path, "_pragma=journal_mode(WAL)")
	for _, m := range migrations()[:4] {
		if err := applyMigration(ctx, raw, m); err != nil {
			t.Fatal(err)
		}
	}
	const secret = "Bearer s3cr3t-token-0123456789"
	big := strings.Repeat("x", 5000) // an overflow page, freed by the update
	for _, q := range []string{
		`INSERT INTO runs (id, started_at, finished_at, status, mode, version) VALUES
			(1, '2025-01-01T00:00:00.000000000Z', '2025-01-01T01:00:00.000000000Z', 'complete', 'site', 'old'),
			(2, '2025-01-02T00:00:00.000000000Z', NULL, 'running', 'site', 'old')`,
		`INSERT INTO run_stages (run_id, stage, done_at) VALUES
			(1, 'crawl', '2025-01-01T00:10:00.000000000Z'), (1, 'history', '2025-01-01T00:50:00.000000000Z'), (2, 'crawl', '2025-01-02T00:10:00.000000000Z'), (2, 'history', '2025-01-02T00:30:00.000000000Z')`,
		`INSERT INTO run_settings (run_id, fingerprint, settings) VALUES
			(1, 'fp1', '{"mode":"site","flags":{},"pad":"` + big + `"}'),
			(2, 'fp2', '{"mode":"site","flags":{},"pad":"` + big + `","hosts":[{"match":"staging.example.org",` +
			`"headers":{"Authorization":"` + secret + `","Cookie":"c"},"exclude":["^/x"]},{"match":"b.example"}]}')`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()

	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	st1, err := db.Stages(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	st2, err := db.Stages(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := st1[audit.StageReport]; !ok {
		t.Errorf("complete run: stages %v lack %s", st1, audit.StageReport)
	}
	if _, ok := st2[audit.StageArchives]; !ok {
		t.Errorf("run past its history stage: stages %v lack %s", st2, audit.StageArchives)
	}
	if _, ok := st2[audit.StageReport]; ok {
		t.Errorf("unfinished run: report stage recorded")
	}
	if r, err := db.UnfinishedRun(ctx, store.ResumeQuery{Command: audit.CommandAudit, Fingerprint: "fp2", WithReport: true}); err != nil || r.ID != 2 {
		t.Errorf("UnfinishedRun = %+v, %v", r, err)
	}
	if _, err := db.UnfinishedRun(ctx, store.ResumeQuery{Command: audit.CommandAudit, Fingerprint: "fp1", WithReport: true}); !errors.Is(err, audit.ErrNotFound) {
		t.Errorf("a complete run of an older linkrot has a report to write: %v", err)
	}
	_, s, err := db.RunSettings(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(s), "s3cr3t") || !strings.Contains(string(s), `"header_names":["Authorization","Cookie"]`) ||
		!strings.Contains(string(s), `"exclude":["^/x"]`) || !strings.Contains(string(s), `{"match":"b.example"}`) {
		t.Errorf("migrated settings = %s", s)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	assertNotInFiles(t, path, "s3cr3t")
}

// assertNotInFiles fails when s occurs in the database file at path or its
// WAL and shared-memory files.
func assertNotInFiles(t *testing.T, path, s string) {
	t.Helper()
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		b, err := readFileIfExists(p)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), s) {
			t.Errorf("%s holds %q", p, s)
		}
	}
}

func readFileIfExists(p string) ([]byte, error) {
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}
