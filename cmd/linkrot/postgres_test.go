package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/linkrot/linkrot/crawler/crawltest"
	"github.com/linkrot/linkrot/internal/pgtest"
)

// reportVerdicts reduces a JSON report to what must not depend on the
// database: the summary, and for every top-level list of records with a
// verdict (checks, findings, links, ...) the sorted
// "url|page|target|href|verdict"
// lines of its records, site URLs replaced by their role.
func reportVerdicts(t *testing.T, js string, hosts map[string]string) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatalf("report JSON: %v\n%.500s", err, js)
	}
	strip := func(v any) string {
		s, _ := v.(string)
		for u, role := range hosts {
			s = strings.ReplaceAll(s, u, role)
		}
		return s
	}
	out := map[string]any{"summary": doc["summary"]}
	for key, v := range doc {
		list, ok := v.([]any)
		if !ok {
			continue
		}
		var lines []string
		for _, e := range list {
			m, ok := e.(map[string]any)
			if !ok || m["verdict"] == nil {
				continue
			}
			lines = append(lines, strings.Join([]string{strip(m["url"]), strip(m["page_url"]), strip(m["target"]), strip(m["href"]), strip(m["verdict"])}, "|"))
		}
		if lines != nil {
			sort.Strings(lines)
			out[key] = lines
		}
	}
	return out
}

// TestPostgres_AuditReport: the same audit of the rot fixture into SQLite
// and into PostgreSQL, then linkrot report --format json of each: the
// same checks, findings, verdicts and summary.
func TestPostgres_AuditReport(t *testing.T) {
	rot := crawltest.NewRot(t)
	hosts := map[string]string{rot.URL: "SITE", rot.Soft.URL: "SOFT", rot.Slow.URL: "SLOW"}
	dbs := map[string]string{"sqlite": filepath.Join(t.TempDir(), "rot.db"), "postgres": pgtest.DSN(t)}
	got := map[string]map[string]any{}
	for name, db := range dbs {
		code, stdout, stderr := run(t, "", "audit", rot.URL+"/", "--db", db, "--allow-private", "--timeout", "1s",
			"--retries", "0", "--no-archives", "--no-report")
		if code != exitFindings {
			t.Fatalf("%s: audit exit %d, want %d\n%s%s", name, code, exitFindings, stdout, stderr)
		}
		code, out, stderr := run(t, "", "report", "--db", db, "--format", "json")
		if code != 0 {
			t.Fatalf("%s: report exit %d: %s", name, code, stderr)
		}
		got[name] = reportVerdicts(t, out, hosts)
	}
	lite, pg := got["sqlite"], got["postgres"]
	if len(lite) < 3 {
		t.Fatalf("report has too little to compare: %v", lite)
	}
	for key := range lite {
		if !reflect.DeepEqual(lite[key], pg[key]) {
			t.Errorf("%s differs:\nSQLite     %v\nPostgreSQL %v", key, lite[key], pg[key])
		}
	}
	if len(pg) != len(lite) {
		t.Errorf("PostgreSQL report lists %d parts, SQLite %d", len(pg), len(lite))
	}
	for _, want := range []string{"|SITE/|SITE/missing||not-found", "|SITE/|SLOW/slow||timeout", "|soft-404", "|moved"} {
		if !strings.Contains(fmt.Sprint(pg), want) {
			t.Errorf("PostgreSQL report lacks %q: %v", want, pg)
		}
	}
}

// TestPostgres_RestartBetweenAudits: PostgreSQL restarted between two
// nightly audits: the second run compares with the first.
func TestPostgres_RestartBetweenAudits(t *testing.T) {
	s := newCronSite(t)
	db := pgtest.DSN(t)
	args := []string{"audit", s.site.URL + "/", "--db", db, "--allow-private", "--timeout", "5s", "--retries", "0",
		"--no-archives", "--no-report", "--fail-on", "new", "--confirm-spacing", "0"}
	if code, stdout, stderr := run(t, "", args...); code != exitOK {
		t.Fatalf("night 1: exit %d\n%s%s", code, stdout, stderr)
	}
	if err := pgtest.Shared(t).Restart(); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "", args...)
	if code != exitFindings || !strings.Contains(stdout, "Since run 1: 0 newly broken, 4 newly confirmed broken") {
		t.Fatalf("night 2 after the restart: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestPostgres_CLIErrors: wrong credentials, an unreachable server and a
// newer schema end the command with one line on stderr, without the
// password; PGPASSWORD and a configuration file's postgres:// URL work.
func TestPostgres_CLIErrors(t *testing.T) {
	ctx := context.Background()
	s := pgtest.Shared(t)
	name := fmt.Sprintf("clipw_%d", os.Getpid())
	if err := s.Exec(ctx, "CREATE DATABASE "+name+" OWNER "+pgtest.PasswordUser); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") })
	t.Setenv("PGPASSWORD", "")
	t.Setenv("PGPASSFILE", filepath.Join(t.TempDir(), "none"))
	oneLine := func(args []string, want string) {
		t.Helper()
		code, stdout, stderr := run(t, "", args...)
		if code == 0 {
			t.Fatalf("%v: exit 0\n%s", args, stdout)
		}
		if strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, want) {
			t.Errorf("%v: stderr %q, want one line mentioning %q", args, stderr, want)
		}
		if strings.Contains(stderr+stdout, "wrong-pw") || strings.Contains(stderr+stdout, pgtest.Password) {
			t.Errorf("%v: output shows the password:\n%s%s", args, stdout, stderr)
		}
	}
	oneLine([]string{"runs", "--db", s.URL(pgtest.PasswordUser, "wrong-pw", name)}, "authentication failed")
	oneLine([]string{"report", "--db", s.URL(pgtest.PasswordUser, "", name), "--format", "json"}, "authentication failed")
	oneLine([]string{"runs", "--db", fmt.Sprintf("postgres://%s:wrong-pw@127.0.0.1:1/x", pgtest.PasswordUser)}, "unreachable")

	// The password from the environment; the URL in a configuration file
	// stays a URL (not a path relative to the file).
	t.Setenv("PGPASSWORD", pgtest.Password)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "linkrot.toml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("db = %q\n", s.URL(pgtest.PasswordUser, "", name))), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := run(t, "", "runs", "--config", cfg); code != 0 {
		t.Fatalf("runs --config with a postgres:// db: exit %d\n%s%s", code, stdout, stderr)
	}

	// A password in the --db URL: never in the output (debug logs
	// included) nor in the run's stored arguments.
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<!doctype html><title>x</title><a href="/missing">m</a>`)
	}))
	defer site.Close()
	withPW := s.URL(pgtest.PasswordUser, pgtest.Password, name)
	code, stdout, stderr := run(t, "", "audit", site.URL+"/", "--db", withPW, "--allow-private", "--no-archives", "--no-report",
		"--retries", "0", "--fail-on", "none", "--log-level", "debug", "--log-format", "json")
	if code != exitOK || strings.Contains(stdout+stderr, pgtest.Password) {
		t.Errorf("audit with a password in --db: exit %d, password in the output: %v\n%.2000s", code,
			strings.Contains(stdout+stderr, pgtest.Password), stderr)
	}
	var args string
	if err := pgQueryRow(ctx, withPW, `SELECT args FROM runs ORDER BY id DESC LIMIT 1`, &args); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(args, pgtest.Password) || !strings.Contains(args, "--db") {
		t.Errorf("stored run arguments: %s", args)
	}

	// A schema newer than this linkrot: refused, nothing written.
	if _, err := pgExec(ctx, s.URL(pgtest.PasswordUser, pgtest.Password, name), `UPDATE schema_version SET version = version + 1`); err != nil {
		t.Fatal(err)
	}
	oneLine([]string{"runs", "--db", s.URL(pgtest.PasswordUser, "", name)}, "newer than this linkrot")
	oneLine([]string{"audit", "http://127.0.0.1:1/", "--db", s.URL(pgtest.PasswordUser, "", name), "--no-report"}, "newer than this linkrot")
}

// pgExec runs one statement on the database of dsn.
func pgExec(ctx context.Context, dsn, sql string) (int64, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	tag, err := conn.Exec(ctx, sql)
	return tag.RowsAffected(), err
}

// TestPostgres_Commands: the commands that read and write a database work
// on PostgreSQL as they do on SQLite: crawl then check, then every report
// format, fixes, suggest, runs, diff, prune with vacuum.
func TestPostgres_Commands(t *testing.T) {
	rot := crawltest.NewRot(t)
	db := pgtest.DSN(t)
	dir := t.TempDir()
	steps := []struct {
		args []string
		want string // in stdout
	}{
		{[]string{"crawl", rot.URL + "/", "--db", db}, ""},
		{[]string{"check", "--db", db, "--allow-private", "--timeout", "1s", "--retries", "0", "--no-archives"}, "not-found"},
		{[]string{"audit", rot.URL + "/", "--db", db, "--allow-private", "--timeout", "1s", "--retries", "0", "--no-archives",
			"--report", filepath.Join(dir, "html")}, "Since run"},
		{[]string{"report", "--db", db, "--format", "markdown"}, "not-found"},
		{[]string{"report", "--db", db, "--format", "csv"}, "not-found"},
		{[]string{"report", "--db", db, "--format", "sarif"}, "not-found"},
		{[]string{"report", "--db", db, "--format", "junit"}, "not-found"},
		{[]string{"report", "--db", db, "--out", filepath.Join(dir, "html2")}, ""},
		{[]string{"fixes", "--db", db, "--format", "json"}, "new-url.html"},
		{[]string{"suggest", "--db", db, "--format", "json"}, ""},
		{[]string{"runs", "--db", db}, "complete"},
		{[]string{"diff", "--db", db}, "compared with run 1"},
		{[]string{"prune", "--db", db, "--keep", "1", "--vacuum"}, "Vacuumed"},
		{[]string{"runs", "--db", db, "--format", "json"}, `"ID": 2`},
	}
	for _, s := range steps {
		code, stdout, stderr := run(t, "", s.args...)
		if (code != exitOK && code != exitFindings) || !strings.Contains(stdout, s.want) {
			t.Fatalf("%v: exit %d, want %q in stdout\n%.3000s\n%s", s.args[0:3], code, s.want, stdout, stderr)
		}
	}
	for _, f := range []string{"html/index.html", "html2/index.html"} {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err != nil || !strings.Contains(string(b), "not-found") {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// pgQueryRow scans one row of a query on the database of dsn.
func pgQueryRow(ctx context.Context, dsn, sql string, dest ...any) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return conn.QueryRow(ctx, sql).Scan(dest...)
}
