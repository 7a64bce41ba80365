package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/linkrot/linkrot/archives/archivetest"
	"github.com/linkrot/linkrot/audit"
)

func TestArchivesCommand_List(t *testing.T) {
	code, out, stderr := run(t, "", "archives")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"ia ", "api", "30/min", "20%", "24/min", "arquivo", "400/min", "320/min",
		"arquivo: raw replay https://arquivo.pt/noFrame/replay/{timestamp}id_/{url}", "wayback#206"} {
		if !strings.Contains(out, want) {
			t.Errorf("archives output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "timetravel") {
		t.Errorf("timetravel listed among the defaults:\n%s", out)
	}
	_, out, _ = run(t, "", "archives", "--presets")
	for _, want := range []string{"memgator", "memgator-local", "archive.today", "perma", "ukwa", "loc", "timetravel: raw replay none", "SHUT DOWN"} {
		if !strings.Contains(out, want) {
			t.Errorf("presets lack %q:\n%s", want, out)
		}
	}
}

// TestArchivesCommand_Ping: one line per archive, a dead one found at once.
func TestArchivesCommand_Ping(t *testing.T) {
	fa := archivetest.New(t, archivetest.Options{})
	at := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	fa.Add(archivetest.Memento{Original: "http://example.com/", Time: at, Body: "<p>x</p>"})
	notMemento := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<html>a plain web server, no Memento</html>")
	}))
	defer notMemento.Close()
	code, out, _ := run(t, "", "archives", "--ping", "--timeout", "5s",
		"--archive", fa.Flag("fx", "600/min"),
		"--archive", "plain="+notMemento.URL+"/tg/,timemap="+notMemento.URL+"/tm/",
		"--archive", "dead="+closedPort(t)+"/tg/")
	if code != exitFindings {
		t.Errorf("exit %d, want %d (archives that do not answer)", code, exitFindings)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("ping output:\n%s", out)
	}
	if !regexp.MustCompile(`^ok +fx +timegate 302 \(302\) Memento-Datetime Fri, 01 Mar 2024 12:00:00 GMT; timemap 200, 1 mementos parsed`).MatchString(lines[0]) {
		t.Errorf("fx line = %q", lines[0])
	}
	if !strings.HasPrefix(lines[1], "FAIL plain") || !strings.Contains(lines[1], "not a Memento TimeGate") || !strings.Contains(lines[1], "unparsable TimeMap") {
		t.Errorf("plain line = %q", lines[1])
	}
	if !strings.HasPrefix(lines[2], "FAIL dead") || !strings.Contains(lines[2], "no answer") {
		t.Errorf("dead line = %q", lines[2])
	}
}

// TestRobustifyCommand_AuditFindsEveryLinkProtected: linkrot robustify
// on a copy of testdata/sites/quirky, then linkrot audit of the result:
// every link robustify protected has a snapshot that checks out.
func TestRobustifyCommand_AuditFindsEveryLinkProtected(t *testing.T) {
	fa := archivetest.New(t, archivetest.Options{})
	at := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, p := range []string{"single", "unquoted?a=1&b=2", "spaced", "selfclosing", "slash/", "café?x=<y>", "multiline", "area", "tab", "bom", "robust", "broken-snap"} {
		fa.Add(archivetest.Memento{Original: "http://ext.example/" + p, Time: at, Body: "<p>x</p>"})
	}
	fa.Add(archivetest.Memento{Original: "https://ext.example/crlf", Time: at, Body: "<p>x</p>"})
	dir := filepath.Join(t.TempDir(), "site")
	src := filepath.Join("..", "..", "testdata", "sites", "quirky")
	filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		b, _ := os.ReadFile(p)
		return os.WriteFile(filepath.Join(dir, rel), bytes.ReplaceAll(b, []byte("{{FX}}"), []byte(fa.URL)), 0o644)
	})
	flag := fa.Flag("fx", "6000/min")
	code, out, stderr := run(t, "", "robustify", dir, "--archive", flag, "--dry-run")
	if code != exitOK || !strings.Contains(out, "+++ b/index.html") || !strings.Contains(stderr, "would change") {
		t.Fatalf("dry run: exit %d\n%s\n%s", code, out, stderr)
	}
	code, _, stderr = run(t, "", "robustify", dir, "--archive", flag)
	if code != exitOK || !strings.Contains(stderr, "11 added") || !strings.Contains(stderr, "1 broken") || !strings.Contains(stderr, "1 skipped") {
		t.Fatalf("robustify: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "never-archived: no memento") && !strings.Contains(stderr, "never-archived") {
		t.Errorf("the unprotected link is not reported:\n%s", stderr)
	}
	code, _, stderr = run(t, "", "robustify", dir, "--archive", flag)
	if code != exitOK || !strings.Contains(stderr, "0 changed") {
		t.Errorf("second run: exit %d\n%s", code, stderr)
	}

	dbPath := filepath.Join(t.TempDir(), "audit.db")
	code, out, stderr = run(t, "", "audit", dir, "--db", dbPath, "--timeout", "2s", "--no-report", "--fail-on", "none",
		"--archive", flag, "--fetch-rate", "6000/min")
	if code != exitOK {
		t.Fatalf("audit: exit %d\n%s\n%s", code, stderr, out)
	}
	db := openDB(t, dbPath)
	r, err := db.LatestRun(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	snaps, err := db.SnapshotChecks(t.Context(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	verdicts := map[int64][]audit.SnapshotVerdict{}
	for _, s := range snaps {
		verdicts[s.LinkID] = append(verdicts[s.LinkID], s.Verdict)
	}
	refs, err := db.LinkRefs(t.Context(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	external := 0
	for _, l := range refs {
		if !strings.Contains(l.Href, "://ext.example/") {
			continue
		}
		external++
		v := verdicts[l.LinkID]
		switch {
		case strings.HasSuffix(l.Href, "never-archived"):
			if len(v) != 0 {
				t.Errorf("%s: %v", l.Href, v)
			}
		case strings.HasSuffix(l.Href, "broken-snap"):
			if len(v) != 1 || v[0] != audit.SnapshotMissing {
				t.Errorf("%s: %v, want the gone snapshot missing", l.Href, v)
			}
		default:
			if len(v) != 1 || v[0] != audit.SnapshotOK {
				t.Errorf("%s on %s: snapshots %v, want one ok", l.Href, l.PageURL, v)
			}
		}
	}
	if external != 14 {
		t.Errorf("the audit found %d external links, want 14 (every page crawled):\n%s", external, out)
	}
}
