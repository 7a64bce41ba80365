package crawler

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"

	gitignore "github.com/sabhiram/go-gitignore"

	"github.com/linkrot/linkrot/crawler/markdown"
)

// Tree is the set of files of a local directory that an audit sees, the
// way a repository is walked: the .git directory, other hidden files and
// directories (names starting with '.') and what .gitignore excludes are
// left out unless NoIgnore was asked (.git itself is always left out: it
// is never documentation).
type Tree struct {
	// Files are the visible files, slash-separated paths relative to the
	// directory, sorted.
	Files []string
	// Pages are the Files that are HTML (.html, .htm) or Markdown (.md,
	// .markdown) documents: where links are extracted.
	Pages []string
	files map[string]bool
	dirs  map[string]bool
	// entries are the names in each directory ("" is the root), sorted,
	// folders with a trailing slash.
	entries map[string][]string
}

// Has reports whether the slash-separated relative path p is a visible
// file of the tree.
func (t *Tree) Has(p string) bool { return t.files[p] }

// HasDir reports whether p ("" is the root) is a visible directory of the
// tree: neither hidden nor ignored itself, empty ones included. Inside a
// git work tree it is one git shows a file in (a hidden .gitkeep counts)
// or an empty one: a directory whose every file git ignores is not.
func (t *Tree) HasDir(p string) bool { return p == "" || t.dirs[p] }

// indexNames are the index files of a folder, in the order a web server
// looks for them (nginx's and Apache's usual index directive).
var indexNames = []string{"index.html", "index.htm"}

// Index returns the index file of the directory dir ("" is the root) as a
// slash path relative to the tree (dir/index.html, else dir/index.htm),
// or "" when it has none: what a static web server answers a request for
// the folder with.
func (t *Tree) Index(dir string) string {
	for _, n := range indexNames {
		if p := path.Join(dir, n); t.files[p] {
			return p
		}
	}
	return ""
}

// Entries returns the names of the visible files and directories in the
// directory dir ("" is the root), sorted, directories with a trailing
// slash: what a listing of the folder shows. The slice must not be
// modified.
func (t *Tree) Entries(dir string) []string { return t.entries[dir] }

// IsPage reports whether the file name p is an HTML or Markdown document
// (PageTypes names the extensions).
func IsPage(p string) bool {
	switch strings.ToLower(path.Ext(p)) {
	case ".html", ".htm":
		return true
	}
	return markdown.IsPath(p)
}

// PageTypes names the documents IsPage accepts, for messages: the
// extensions are those IsPage and markdown.IsPath match (any case).
const PageTypes = "HTML (.html, .htm) or Markdown (.md, .markdown)"

// WalkTree lists the files of dir. Inside a git work tree with the git
// binary available, the ignore rules are git's own (git ls-files
// --exclude-standard: nested .gitignore files, .git/info/exclude and the
// user's global excludes, exactly as git applies them); elsewhere the
// .gitignore files found in the tree are applied with
// github.com/sabhiram/go-gitignore, each to the directory holding it.
func WalkTree(ctx context.Context, dir string, noIgnore bool) (*Tree, error) {
	var listed map[string]bool // by git; nil when git did not answer
	if !noIgnore {
		listed = gitListed(ctx, dir)
	}
	t := &Tree{files: map[string]bool{}, dirs: map[string]bool{}, entries: map[string][]string{}}
	// walked are the directories entered, in walk order; hasEntry those
	// with anything in them on disk (hidden and ignored entries too).
	var walked []string
	hasEntry := map[string]bool{}
	type rules struct {
		dir string
		m   *gitignore.GitIgnore
	}
	var ignores []rules
	ignored := func(rel string, isDir bool) bool {
		for _, r := range ignores {
			if r.dir != "" && !strings.HasPrefix(rel, r.dir+"/") {
				continue
			}
			sub := strings.TrimPrefix(rel, r.dir+"/")
			if r.dir == "" {
				sub = rel
			}
			if isDir {
				sub += "/"
			}
			if r.m.MatchesPath(sub) {
				return true
			}
		}
		return false
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil // unreadable entries are not part of the tree
		}
		rel, rerr := filepath.Rel(dir, p)
		if rerr != nil {
			return rerr
		}
		rel = filepath.ToSlash(rel)
		if rel == "." {
			rel = ""
		}
		if rel != "" {
			hasEntry[parentDir(rel)] = true
		}
		name := d.Name()
		if rel != "" && name == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if rel != "" && !noIgnore && strings.HasPrefix(name, ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if rel != "" && listed == nil && !noIgnore && ignored(rel, true) {
				return filepath.SkipDir
			}
			if !noIgnore && listed == nil {
				if m, err := gitignore.CompileIgnoreFile(filepath.Join(p, ".gitignore")); err == nil {
					ignores = append(ignores, rules{dir: rel, m: m})
				}
			}
			if rel != "" {
				walked = append(walked, rel)
			}
			return nil
		}
		if !d.Type().IsRegular() && d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		switch {
		case noIgnore:
		case listed != nil:
			if !listed[rel] {
				return nil
			}
		case ignored(rel, false):
			return nil
		}
		t.files[rel] = true
		t.Files = append(t.Files, rel)
		for d := path.Dir(rel); d != "." && !t.dirs[d]; d = path.Dir(d) {
			t.dirs[d] = true
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walk %s: %w", dir, err)
	}
	// Directories: inside a git work tree, those git shows a file in
	// (a .gitkeep makes a folder) and empty ones; elsewhere every one
	// walked (hidden and ignored ones were skipped).
	var listedDirs map[string]bool
	if listed != nil {
		listedDirs = map[string]bool{}
		for f := range listed {
			for d := path.Dir(f); d != "." && !listedDirs[d]; d = path.Dir(d) {
				listedDirs[d] = true
			}
		}
	}
	for _, d := range walked {
		if listed != nil && !listedDirs[d] && hasEntry[d] {
			continue
		}
		for ; d != "." && !t.dirs[d]; d = path.Dir(d) {
			t.dirs[d] = true
		}
	}
	sort.Strings(t.Files)
	for _, f := range t.Files {
		if IsPage(f) {
			t.Pages = append(t.Pages, f)
		}
		parent := parentDir(f)
		t.entries[parent] = append(t.entries[parent], path.Base(f))
	}
	for d := range t.dirs {
		parent := parentDir(d)
		t.entries[parent] = append(t.entries[parent], path.Base(d)+"/")
	}
	for _, names := range t.entries {
		sort.Strings(names)
	}
	return t, nil
}

// parentDir is the directory holding the slash path p ("" for the root).
func parentDir(p string) string {
	if d := path.Dir(p); d != "." {
		return d
	}
	return ""
}

// gitListed returns the files git shows in dir (tracked, and untracked
// but not ignored), relative to dir, or nil when dir is not in a git work
// tree or git is not installed.
func gitListed(ctx context.Context, dir string) map[string]bool {
	git, err := exec.LookPath("git")
	if err != nil {
		return nil
	}
	cmd := exec.CommandContext(ctx, git, "-C", dir, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", ".")
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return nil // not a repository (git exits 128), or git failed
	}
	m := map[string]bool{}
	for _, f := range bytes.Split(out.Bytes(), []byte{0}) {
		if len(f) > 0 {
			m[string(f)] = true
		}
	}
	return m
}
