package crawler_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/check"
	"github.com/linkrot/linkrot/crawler"
)

// writeTree writes files (slash paths → content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

var repoFiles = map[string]string{
	"README.md":              "# Read me\n\n[guide](docs/guide.md#install) [gone](docs/missing.md) ![logo](img/logo.png)\n",
	"docs/guide.md":          "# Guide\n\n## Install\n\n[back](../README.md#read-me) [bad anchor](#nope)\n",
	"docs/page.html":         "<a href=guide.md>g</a>",
	"img/logo.png":           "\x89PNG",
	".gitignore":             "build/\n*.tmp.md\n",
	"docs/.gitignore":        "private.md\n",
	"docs/private.md":        "[x](https://secret.example/)",
	"build/out.html":         "<a href=/x>x</a>",
	"notes.tmp.md":           "[x](/x)",
	".github/workflow.md":    "hidden",
	".git/HEAD":              "ref: refs/heads/main\n",
	".git/hooks/pre-push.md": "[x](/x)",
}

func TestWalkTree(t *testing.T) {
	want := []string{"README.md", "docs/guide.md", "docs/page.html"}
	t.Run("GitignoreFiles", func(t *testing.T) {
		dir := t.TempDir()
		writeTree(t, dir, repoFiles)
		tree, err := crawler.WalkTree(context.Background(), dir, false)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(tree.Pages, want) {
			t.Errorf("pages %q, want %q", tree.Pages, want)
		}
		if !tree.Has("img/logo.png") || tree.Has(".gitignore") || !tree.HasDir("docs") || tree.HasDir("build") {
			t.Errorf("files %q", tree.Files)
		}
	})
	t.Run("GitRepository", func(t *testing.T) {
		git, err := exec.LookPath("git")
		if err != nil {
			t.Skip("git not installed")
		}
		dir := t.TempDir()
		if out, err := exec.Command(git, "init", "-q", dir).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v %s", err, out)
		}
		files := map[string]string{}
		for k, v := range repoFiles {
			if !strings.HasPrefix(k, ".git/") {
				files[k] = v
			}
		}
		writeTree(t, dir, files)
		tree, err := crawler.WalkTree(context.Background(), dir, false)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(tree.Pages, want) {
			t.Errorf("pages %q, want %q", tree.Pages, want)
		}
	})
	t.Run("NoIgnore", func(t *testing.T) {
		dir := t.TempDir()
		writeTree(t, dir, repoFiles)
		tree, err := crawler.WalkTree(context.Background(), dir, true)
		if err != nil {
			t.Fatal(err)
		}
		all := []string{".github/workflow.md", "README.md", "build/out.html", "docs/guide.md", "docs/page.html", "docs/private.md", "notes.tmp.md"}
		if !reflect.DeepEqual(tree.Pages, all) {
			t.Errorf("pages %q, want %q", tree.Pages, all)
		}
	})
}

func TestCrawl_DirMarkdown(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, repoFiles)
	sink := &memSink{}
	if _, err := crawler.New(crawler.Options{Observe: check.Observer(0)}, sink).CrawlDir(context.Background(), dir, "http://localhost/"); err != nil {
		t.Fatal(err)
	}
	pages := sink.byPath(t)
	readme := pages["/README.md"]
	if readme == nil || readme.File != filepath.ToSlash(filepath.Join(dir, "README.md")) || len(readme.Links) != 3 {
		t.Fatalf("README.md = %+v (pages %v)", readme, paths(pages))
	}
	if l := readme.Links[0]; l.Href != "http://localhost/docs/guide.md#install" || l.Line != 3 || l.Column != 1 {
		t.Errorf("first link %+v", l)
	}
	guide := pages["/docs/guide.md"]
	if guide == nil || guide.Evidence == nil || !reflect.DeepEqual(guide.Evidence.Anchors, []string{"guide", "install"}) {
		t.Errorf("guide evidence anchors: %+v", guide)
	}
	if p := pages["/docs/missing.md"]; p == nil || p.Status != 404 {
		t.Errorf("missing file: %+v", p)
	}
	if p := pages["/img/logo.png"]; p == nil || p.Status != 200 || p.Parsed {
		t.Errorf("image: %+v", p)
	}
	for _, hidden := range []string{"/.git/hooks/pre-push.md", "/build/out.html", "/docs/private.md", "/notes.tmp.md", "/.github/workflow.md"} {
		if _, ok := pages[hidden]; ok {
			t.Errorf("%s crawled", hidden)
		}
	}
}

func TestCrawl_Files(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, repoFiles)
	sink := &memSink{}
	if _, err := crawler.New(crawler.Options{Observe: check.Observer(0)}, sink).CrawlFiles(context.Background(), dir, "http://localhost/", []string{"README.md"}); err != nil {
		t.Fatal(err)
	}
	pages := sink.byPath(t)
	if len(pages["/README.md"].Links) != 3 {
		t.Errorf("README links: %+v", pages["/README.md"])
	}
	if g := pages["/docs/guide.md"]; g == nil || len(g.Links) != 0 || g.Evidence == nil || len(g.Evidence.Anchors) != 2 {
		t.Errorf("linked guide: fetched for its anchors, its links not extracted: %+v", g)
	}
	if _, ok := pages["/docs/page.html"]; ok {
		t.Errorf("page not linked from README crawled")
	}
}
