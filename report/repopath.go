package report

import (
	"os"
	"path/filepath"
)

// repoPaths turns the source file of a page, as the audit recorded it
// (the audited directory as it was named, joined with the file's path in
// it), into the path code hosts place annotations and code-scanning
// results on: a path relative to the repository root. GitHub's workflow
// commands (file=) and SARIF (%SRCROOT%) both want that path; an absolute
// one lands on no line of a pull request.
//
// A relative path is kept: it is relative to the working directory the
// audit ran in, the repository root in CI. An absolute path inside a git
// repository (a directory holding a .git directory or file, as a
// worktree or submodule has) is made relative to that repository's root;
// outside any repository, relative to the working directory when it is
// under it, else kept absolute.
//
// A repoPaths caches what it learns of the file system; it is not safe
// for concurrent use.
type repoPaths struct {
	cwd   string
	roots map[string]string // directory -> its repository root, "" for none
}

func newRepoPaths() *repoPaths {
	cwd, err := os.Getwd()
	if err != nil {
		cwd = ""
	}
	return &repoPaths{cwd: cwd, roots: map[string]string{}}
}

// path returns file (slash-separated, as Page.File holds it) as a path
// relative to its repository, slash-separated, or file itself when it
// cannot be (see repoPaths).
func (r *repoPaths) path(file string) string {
	native := filepath.FromSlash(file)
	if !filepath.IsAbs(native) {
		return file
	}
	native = filepath.Clean(native)
	for _, base := range []string{r.root(filepath.Dir(native)), r.cwd} {
		if base == "" {
			continue
		}
		if rel, err := filepath.Rel(base, native); err == nil && filepath.IsLocal(rel) {
			return filepath.ToSlash(rel)
		}
	}
	return file
}

// root returns the root of the git repository holding dir (an absolute,
// clean directory), or "".
func (r *repoPaths) root(dir string) string {
	var walked []string
	root := ""
	for {
		if known, ok := r.roots[dir]; ok {
			root = known
			break
		}
		walked = append(walked, dir)
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			root = dir
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	for _, d := range walked {
		r.roots[d] = root
	}
	return root
}
