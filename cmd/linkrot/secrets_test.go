package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSecrets_NeverPrinted: a site whose pages carry a URL password (in
// hrefs, anchor text, Robust Links attributes, a redirect's Location, the
// seed given on the command line) is audited; the password appears nowhere
// in the database files, the report directory, any report format, the
// terminal output or the logs, and is never sent.
func TestSecrets_NeverPrinted(t *testing.T) {
	const secret = "s3cr3t"
	var srv *httptest.Server
	authSeen := make(chan string, 64)
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a := r.Header.Get("Authorization"); a != "" {
			select {
			case authSeen <- r.URL.Path + " " + a:
			default:
			}
		}
		host := r.Host
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, `<!doctype html><title>Secrets</title>
<p><a href="https://user:%[2]s@%[1]s/private">https://user:%[2]s@%[1]s/private</a></p>
<p><a href="http://user:%[2]s@%[1]s/missing">missing</a></p>
<p><a href="/redirect">redirect</a></p>
<p><a href="https://user:%[2]s@exa mple.com/">invalid</a></p>
<p><a href="https://example.org/" data-originalurl="https://o:%[2]s@example.org/" data-versiondate="2024-01-01"
  data-versionurl="https://v:%[2]s@archive.example/x 2024-01-01">robust</a></p>`, host, secret)
		case "/redirect":
			w.Header().Set("Location", "http://user:"+secret+"@"+host+"/final")
			w.WriteHeader(http.StatusFound)
		case "/final":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, `<!doctype html><title>Final</title><p>ok</p>`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "run.db")
	reportDir := filepath.Join(dir, "report")
	seed := strings.Replace(srv.URL, "http://", "http://seed:"+secret+"@", 1) + "/"
	code, stdout, stderr := run(t, "", "audit", seed, "--db", dbPath, "--report", reportDir,
		"--timeout", "2s", "--retries", "0", "--no-archives", "--verbose", "--log-format", "json")
	if code != exitFindings && code != 0 {
		t.Fatalf("audit exit %d\nstderr:\n%s", code, stderr)
	}
	outputs := map[string]string{"audit stdout": stdout, "audit stderr": stderr}
	for _, f := range []string{"json", "csv", "junit", "markdown", "sarif"} {
		code, out, errs := run(t, "", "report", "--db", dbPath, "--format", f)
		if code != 0 {
			t.Fatalf("report --format %s: exit %d: %s", f, code, errs)
		}
		if len(out) < 100 {
			t.Errorf("report --format %s printed %d bytes", f, len(out))
		}
		outputs["report "+f] = out + errs
	}
	if code, out, errs := run(t, "", "report", "--db", dbPath, "--out", filepath.Join(dir, "report2")); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errs)
	} else {
		outputs["report html"] = out + errs
	}
	code, out, errs := run(t, "", "extract", srv.URL+"/")
	if code != 0 {
		t.Fatalf("extract: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "user:***@") {
		t.Errorf("extract output shows no redacted URL:\n%s", out)
	}
	outputs["extract"] = out + errs
	for name, s := range outputs {
		if strings.Contains(s, secret) {
			i := strings.Index(s, secret)
			t.Errorf("%s prints the password: …%s…", name, s[max(0, i-120):min(len(s), i+40)])
		}
	}
	// The database (and its WAL), the report directory: every byte.
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if i := strings.Index(string(b), secret); i >= 0 {
			t.Errorf("%s holds the password at byte %d: %q", path, i, b[max(0, i-200):min(len(b), i+40)])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(reportDir, "index.html")); err != nil {
		t.Errorf("no HTML report: %v", err)
	}
	close(authSeen)
	for a := range authSeen {
		if strings.HasPrefix(a, "/private") || strings.HasPrefix(a, "/missing") || strings.HasPrefix(a, "/final") {
			t.Errorf("credentials of a link sent: %s", a)
		}
	}
}
