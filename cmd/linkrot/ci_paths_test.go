package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestAudit_GitHubPathsRepoRelative: linkrot audit of a directory named
// by its absolute path, inside a git repository, annotates its files
// relative to the repository root (where GitHub places them on a pull
// request's diff); a directory outside any repository, relative to the
// working directory. The terminal keeps the path as the directory was
// named.
func TestAudit_GitHubPathsRepoRelative(t *testing.T) {
	site := newLinkSite(t)
	repo := newGitRepo(t)
	repo.write(map[string]string{
		"README.md":      "# Project\n",
		"docs/page.html": "<!doctype html><title>P</title>\n<p>See <a href=\"" + site.URL + "/gone-page\">this</a>.\n",
	})
	repo.commit("docs")
	docs := filepath.Join(repo.dir, "docs")
	if !filepath.IsAbs(docs) {
		t.Fatalf("%s is not absolute", docs)
	}
	args := func(dir string) []string {
		return []string{"audit", dir, "--db", filepath.Join(t.TempDir(), "ci.db"), "--no-report", "--no-archives",
			"--allow-private", "--retries", "0", "--format", "github"}
	}
	code, out, errOut := run(t, "", args(docs)...)
	if code != exitFindings {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	want := "::error file=docs/page.html,line=2,col=17,title=linkrot%3A not-found::Link to " + site.URL + "/gone-page is broken"
	if !strings.Contains(out, want) {
		t.Errorf("annotations: want\n%s\ngot:\n%s", want, out)
	}
	if !strings.Contains(out, filepath.ToSlash(filepath.Join(docs, "page.html"))+":2:17: not-found") {
		t.Errorf("terminal lacks the path as named:\n%s", out)
	}

	// Outside any repository: relative to the working directory.
	parent := t.TempDir()
	writeFiles(t, parent, map[string]string{"site/a.html": "<a href=\"" + site.URL + "/gone-a\">a</a>"})
	t.Chdir(parent)
	code, out, errOut = run(t, "", args(filepath.Join(parent, "site"))...)
	if code != exitFindings {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if want := "::error file=site/a.html,line=1,col=10,"; !strings.Contains(out, want) {
		t.Errorf("annotations outside a repository: want %s in\n%s", want, out)
	}
}
