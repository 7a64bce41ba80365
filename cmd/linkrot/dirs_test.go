package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

// writeTreeDirs writes files (slash paths → content) under dir, and the
// empty directories named with a trailing slash.
func writeTreeDirs(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// jsonTargets reads the verdicts of a JSON report's targets by URL.
func jsonTargets(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Targets []struct {
			URL     string `json:"url"`
			Verdict string `json:"verdict"`
		} `json:"targets"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("report %s: %v", path, err)
	}
	out := map[string]string{}
	for _, tg := range doc.Targets {
		out[tg.URL] = tg.Verdict
	}
	return out
}

// TestAudit_FolderLinks: linkrot audit of a local directory judges links
// to folders as the directory would be served. An HTML build directory
// is served as a static web server without listings serves it: a folder
// with an index.html is ok, one with only an index.php or nothing in it
// is a 404. --dir-listing (flag or configuration file) serves listings
// instead: all three are ok, and the listing's entries are crawled and
// checked. In a Markdown repository (a forge shows folders) the three
// are ok. The verdicts are read from the database and from the JSON
// report.
func TestAudit_FolderLinks(t *testing.T) {
	folders := map[string]string{
		"a/index.html": "<!doctype html><title>A</title><p>A</p>",
		"b/index.php":  "<?php echo 'b'; ?>",
		"c/":           "",
	}
	const (
		htmlDoc = `<!doctype html><title>Home</title><a href="a/">a</a> <a href="b/">b</a> <a href="c/">c</a>`
		mdDoc   = "# Home\n\n[a](a/) [b](b/) [c](c/)\n"
	)
	ok, nf := string(audit.VerdictOK), string(audit.VerdictNotFound)
	for _, tc := range []struct {
		name   string
		doc    string // the document linking to the folders
		body   string
		file   bool // audit the document alone
		extra  []string
		config string // a configuration file's content
		want   map[string]string
	}{
		{name: "HTMLBuild", doc: "index.html", body: htmlDoc,
			want: map[string]string{"a/": ok, "b/": nf, "c/": nf}},
		{name: "HTMLFile", doc: "index.html", body: htmlDoc, file: true,
			want: map[string]string{"a/": ok, "b/": nf, "c/": nf}},
		{name: "HTMLBuildDirListing", doc: "index.html", body: htmlDoc, extra: []string{"--dir-listing"},
			want: map[string]string{"a/": ok, "b/": ok, "c/": ok, "b/index.php": ok}},
		{name: "HTMLBuildDirListingConfig", doc: "index.html", body: htmlDoc, config: "dir-listing = true\n",
			want: map[string]string{"a/": ok, "b/": ok, "c/": ok, "b/index.php": ok}},
		{name: "MarkdownRepository", doc: "README.md", body: mdDoc,
			want: map[string]string{"a/": ok, "b/": ok, "c/": ok}},
		{name: "MarkdownFile", doc: "README.md", body: mdDoc, file: true,
			want: map[string]string{"a/": ok, "b/": ok, "c/": ok}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			site := filepath.Join(tmp, "site")
			files := map[string]string{tc.doc: tc.body}
			for k, v := range folders {
				files[k] = v
			}
			writeTreeDirs(t, site, files)
			dbPath := filepath.Join(tmp, "linkrot.db")
			out := filepath.Join(tmp, "report.json")
			arg := site
			if tc.file {
				arg = filepath.Join(site, tc.doc)
			}
			args := []string{"audit", arg, "--db", dbPath, "--no-archives", "--no-report", "--output", out, "--fail-on", "none"}
			if tc.config != "" {
				cfg := filepath.Join(tmp, "linkrot.toml")
				if err := os.WriteFile(cfg, []byte(tc.config), 0o644); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--config", cfg)
			}
			code, stdout, stderr := run(t, "", append(args, tc.extra...)...)
			if code != exitOK {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			db := openDB(t, dbPath)
			r, err := db.LatestRun(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			checks, err := db.Checks(context.Background(), r.ID)
			if err != nil {
				t.Fatal(err)
			}
			const base = "http://localhost/"
			got := map[string]string{}
			for _, c := range checks {
				got[strings.TrimPrefix(c.URL, base)] = string(c.Verdict)
			}
			for path, v := range tc.want {
				if got[path] != v {
					t.Errorf("database: %s is %q, want %q (all: %v)", path, got[path], v, got)
				}
			}
			if len(got) != len(tc.want) {
				t.Errorf("database: checks %v, want %v", got, tc.want)
			}
			inReport := map[string]string{}
			for u, v := range jsonTargets(t, out) {
				inReport[strings.TrimPrefix(u, base)] = v
			}
			if !reflect.DeepEqual(inReport, got) {
				t.Errorf("report: %v, database: %v", inReport, got)
			}
		})
	}
}

// TestAudit_ArgumentMessages: a positional argument linkrot cannot audit,
// and contradictory report flags, are usage errors (exit 2) whose message
// says what is wrong in plain words.
func TestAudit_ArgumentMessages(t *testing.T) {
	tmp := t.TempDir()
	writeTreeDirs(t, tmp, map[string]string{"notes.txt": "hello", "page.html": "<p>x</p>"})
	db := filepath.Join(tmp, "linkrot.db")
	missing := filepath.Join(tmp, "missing.html")
	for _, tc := range []struct {
		name string
		args []string
		want []string // in stderr
		all  string   // the whole of stderr, when given
	}{
		{name: "MissingFile", args: []string{missing}, all: "linkrot: " + missing + ": no such file\n"},
		{name: "MissingPath", args: []string{filepath.Join(tmp, "nodir")},
			want: []string{"nodir: no such file or directory", "http(s) URL", "a directory", ".html, .htm", ".md, .markdown"}},
		{name: "UnsupportedType", args: []string{filepath.Join(tmp, "notes.txt")},
			want: []string{"notes.txt: unsupported file type", "HTML (.html, .htm) or Markdown (.md, .markdown) file"}},
		{name: "ReportAndNoReport", args: []string{filepath.Join(tmp, "page.html"), "--report", filepath.Join(tmp, "r"), "--no-report"},
			want: []string{"--report", "--no-report", "contradict"}},
		{name: "BadOutput", args: []string{filepath.Join(tmp, "page.html"), "--output", "report.pdf"},
			want: []string{`--output "report.pdf"`, "json, csv, junit, markdown, sarif", ".json, .csv, .xml, .md, .sarif"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(t, "", append([]string{"audit", "--db", db}, tc.args...)...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d\n%s\n%s", code, exitUsage, stdout, stderr)
			}
			if tc.all != "" && stderr != tc.all {
				t.Errorf("stderr %q, want %q", stderr, tc.all)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
			if strings.Contains(stderr, "neither") {
				t.Errorf("stderr %q", stderr)
			}
		})
	}
	if _, err := os.Stat(db); err == nil {
		t.Errorf("a usage error created the database")
	}
	if _, err := os.Stat(filepath.Join(tmp, "r")); err == nil {
		t.Errorf("a usage error created the report directory")
	}
}

// TestAudit_OutputWithoutReport: --output with --no-report writes what it
// names and says where: a file name is written there, a format into the
// report directory; the HTML report is not written.
func TestAudit_OutputWithoutReport(t *testing.T) {
	tmp := t.TempDir()
	writeTreeDirs(t, tmp, map[string]string{"site/page.html": `<a href="other.html">o</a>`, "site/other.html": "<p>o</p>"})
	page := filepath.Join(tmp, "site", "page.html")

	t.Run("File", func(t *testing.T) {
		dir := t.TempDir()
		db := filepath.Join(dir, "linkrot.db")
		out := filepath.Join(dir, "out", "links.json")
		code, stdout, stderr := run(t, "", "audit", page, "--db", db, "--no-archives", "--no-report", "--output", out)
		if code != exitOK {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		if !strings.Contains(stdout, "Report (json): "+out+"\n") || strings.Contains(stdout, "Report: ") {
			t.Errorf("stdout:\n%s", stdout)
		}
		if v := jsonTargets(t, out)["http://localhost/other.html"]; v != string(audit.VerdictOK) {
			t.Errorf("report.json: other.html %q", v)
		}
		if _, err := os.Stat(filepath.Join(dir, "linkrot-report")); err == nil {
			t.Errorf("the report directory was created")
		}
	})
	t.Run("Format", func(t *testing.T) {
		dir := t.TempDir()
		db := filepath.Join(dir, "linkrot.db")
		code, stdout, stderr := run(t, "", "audit", page, "--db", db, "--no-archives", "--no-report", "--output", "csv")
		if code != exitOK {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		csv := filepath.Join(dir, "linkrot-report", "report.csv")
		if !strings.Contains(stdout, "Report (csv): "+csv+"\n") {
			t.Errorf("stdout:\n%s", stdout)
		}
		b, err := os.ReadFile(csv)
		if err != nil || !strings.Contains(string(b), "http://localhost/other.html") {
			t.Errorf("report.csv: %v\n%s", err, b)
		}
		if _, err := os.Stat(filepath.Join(dir, "linkrot-report", "index.html")); err == nil {
			t.Errorf("--no-report wrote the HTML report")
		}
	})
}

// TestAudit_NothingToCheck: a run without a target to check says why in
// plain words, never "Checked 0 unique targets", and exits 0.
func TestAudit_NothingToCheck(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.NotFound(w, r)
	}))
	defer site.Close()
	tmp := t.TempDir()
	writeTreeDirs(t, tmp, map[string]string{
		"one/page.html": "<!doctype html><title>No links</title><p>Nothing here.</p>",
		"two/a.html":    "<p>a</p>",
		"two/b.md":      "# b\n\nno links\n",
		"empty/":        "",
		"empty/x.txt":   "not a document",
	})
	for _, tc := range []struct {
		name  string
		args  []string
		crawl string // the crawl line
		want  string
	}{
		{"Page", []string{filepath.Join(tmp, "one", "page.html")},
			"Crawled 1 page (0 failed) with 0 links to 0 unique targets.", "Nothing to check: the page has no links.\n"},
		{"Pages", []string{filepath.Join(tmp, "two")},
			"Crawled 2 pages (0 failed) with 0 links to 0 unique targets.", "Nothing to check: the 2 pages have no links.\n"},
		{"NoDocuments", []string{filepath.Join(tmp, "empty")},
			"Crawled 0 pages (0 failed)", "Nothing to check: the directory has no HTML (.html, .htm) or Markdown (.md, .markdown) documents.\n"},
		{"SiteDown", []string{site.URL + "/"},
			"Crawled 1 page (1 failed) with 0 links", "Nothing to check: the page could not be read.\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "linkrot.db")
			args := append([]string{"audit", "--db", db, "--no-archives", "--no-report"}, tc.args...)
			code, stdout, stderr := run(t, "", args...)
			if code != exitOK {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			if !strings.Contains(stdout, tc.crawl) || !strings.Contains(stdout, tc.want) || strings.Contains(stdout, "Checked") {
				t.Errorf("stdout:\n%s\nwant %q and %q", stdout, tc.crawl, tc.want)
			}
		})
	}
	t.Run("CheckCommand", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "linkrot.db")
		if code, stdout, stderr := run(t, "", "crawl", filepath.Join(tmp, "one", "page.html"), "--db", db); code != exitOK ||
			!strings.Contains(stdout, "Crawled 1 page (0 failed) with 0 links") {
			t.Fatalf("crawl: exit %d\n%s\n%s", code, stdout, stderr)
		}
		code, stdout, stderr := run(t, "", "check", "--db", db, "--no-archives")
		if code != exitOK || !strings.Contains(stdout, "Nothing to check: the page has no links.\n") || strings.Contains(stdout, "Checked") {
			t.Errorf("check: exit %d\n%s\n%s", code, stdout, stderr)
		}
	})
}

// TestAudit_SingleFilePageCount: a single audited file is one page of the
// site, whatever the files it links to that the crawl reads for their
// status; a directory's pages are its documents.
func TestAudit_SingleFilePageCount(t *testing.T) {
	tmp := t.TempDir()
	writeTreeDirs(t, tmp, map[string]string{
		"site/page.html":  `<a href="other.html#top">o</a> <a href="missing.html">m</a> <img src="logo.png"> <a href="sub/">s</a>`,
		"site/other.html": `<h1 id="top">Other</h1><a href="page.html">back</a>`,
		"site/logo.png":   "\x89PNG",
		"site/sub/x.txt":  "x",
	})
	for _, tc := range []struct {
		name, arg, crawl string
	}{
		{"File", filepath.Join(tmp, "site", "page.html"), "Crawled 1 page (0 failed) with 4 links to 4 unique targets."},
		{"Directory", filepath.Join(tmp, "site"), "Crawled 2 pages (0 failed) with 5 links to 5 unique targets."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "linkrot.db")
			code, stdout, stderr := run(t, "", "audit", tc.arg, "--db", db, "--no-archives", "--no-report", "--fail-on", "none")
			if code != exitOK {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			if !strings.Contains(stdout, tc.crawl) {
				t.Errorf("stdout:\n%s\nwant %q", stdout, tc.crawl)
			}
			if !strings.Contains(stdout, "2 not-found") {
				t.Errorf("the missing file and the folder without index are not the check line's: \n%s", stdout)
			}
		})
	}
}
