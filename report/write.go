package report

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Format names an output format of Write.
type Format string

// Output formats.
const (
	HTML     Format = "html"
	JSON     Format = "json"
	CSV      Format = "csv"
	JUnit    Format = "junit"
	Markdown Format = "markdown"
	SARIF    Format = "sarif"
	// GitHub is GitHub Actions workflow commands (annotations).
	GitHub Format = "github"
)

// Formats lists every format, HTML first.
var Formats = []Format{HTML, JSON, CSV, JUnit, Markdown, SARIF, GitHub}

// ErrUnknownFormat is returned for a format not in Formats.
var ErrUnknownFormat = errors.New("unknown report format")

// ParseFormat returns the Format named s ("md" is Markdown, "xml" JUnit).
func ParseFormat(s string) (Format, error) {
	switch s {
	case "md":
		return Markdown, nil
	case "xml":
		return JUnit, nil
	}
	if slices.Contains(Formats, Format(s)) {
		return Format(s), nil
	}
	return "", fmt.Errorf("%w %q (want html, json, csv, junit, markdown, sarif or github)", ErrUnknownFormat, s)
}

// Write writes ds to w in format f.
func Write(w io.Writer, f Format, ds *Dataset) error {
	switch f {
	case HTML:
		return WriteHTML(w, ds)
	case JSON:
		return WriteJSON(w, ds)
	case CSV:
		return WriteCSV(w, ds)
	case JUnit:
		return WriteJUnit(w, ds)
	case Markdown:
		return WriteMarkdown(w, ds)
	case SARIF:
		return WriteSARIF(w, ds)
	case GitHub:
		return WriteGitHub(w, ds)
	}
	return fmt.Errorf("write report: %w %q", ErrUnknownFormat, f)
}

// IndexFile is the name of the HTML report inside its directory. Report
// file names are fixed, never derived from crawled data.
const IndexFile = "index.html"

// WriteDir writes the HTML report of ds as dir/index.html, creating dir
// when needed, and returns the file's path. The file is written through an
// os.Root opened on dir, so nothing can land outside it, and replaced
// atomically (a temporary file renamed over it). A run with more links than
// the report details also gets its link pages (see HTMLOptions).
func WriteDir(dir string, ds *Dataset) (string, error) {
	return WriteDirOptions(dir, ds, HTMLOptions{})
}

// HTMLOptions tune the HTML report of a large run.
type HTMLOptions struct {
	// DetailLinks bounds the links the report details in its own data
	// (0: 50,000). A run with more gets its links listed in link pages
	// under links/ beside index.html, and the report details those with
	// problems, robustness data or archive results.
	DetailLinks int
	// LinksPerPage is the number of links on one link page (0:
	// DefaultLinksPerPage).
	LinksPerPage int
}

// WriteDirOptions is WriteDir with options.
func WriteDirOptions(dir string, ds *Dataset, o HTMLOptions) (string, error) {
	if o.DetailLinks <= 0 {
		o.DetailLinks = maxDetailLinks
	}
	if o.LinksPerPage <= 0 {
		o.LinksPerPage = DefaultLinksPerPage
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create report directory: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", fmt.Errorf("open report directory: %w", err)
	}
	defer root.Close()
	ix := newIndexDetail(ds, o.DetailLinks)
	if ix.err != nil {
		return "", fmt.Errorf("read the run's links: %w", ix.err)
	}
	pages := 0
	if ix.partial {
		pages = linkPageCount(ix.totalLinks, o.LinksPerPage)
	}
	if err := writeRooted(root, IndexFile, func(w io.Writer) error { return writeHTML(w, ix, pages) }); err != nil {
		return "", err
	}
	if pages > 0 {
		if err := root.MkdirAll(LinksDir, 0o755); err != nil {
			return "", fmt.Errorf("create link pages directory: %w", err)
		}
		sub, err := root.OpenRoot(LinksDir)
		if err != nil {
			return "", fmt.Errorf("open link pages directory: %w", err)
		}
		defer sub.Close()
		err = writeLinkPages(ix, o.LinksPerPage, func(n int) (*rootedFile, error) {
			return createRooted(sub, linkPageName(n))
		})
		if err != nil {
			return "", err
		}
	}
	if err := removeStaleLinkPages(root, pages); err != nil {
		return "", err
	}
	return filepath.Join(dir, IndexFile), nil
}

// removeStaleLinkPages removes link pages numbered above pages that an
// earlier report left in the directory (file names of link pages only).
func removeStaleLinkPages(root *os.Root, pages int) error {
	d, err := root.Open(LinksDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list link pages: %w", err)
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return fmt.Errorf("list link pages: %w", err)
	}
	for _, name := range names {
		num, ok := strings.CutSuffix(name, ".html")
		n, err := strconv.Atoi(num)
		if !ok || err != nil || linkPageName(n) != name || n <= pages {
			continue
		}
		if err := root.Remove(path.Join(LinksDir, name)); err != nil {
			return fmt.Errorf("remove stale link page: %w", err)
		}
	}
	if pages == 0 {
		root.Remove(LinksDir) // only when empty; anything else stays
	}
	return nil
}

// WriteFile writes ds in format f to the file path (its directory must
// exist), through an os.Root opened on that directory, replacing the file
// atomically.
func WriteFile(path string, f Format, ds *Dataset) error {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if name == "" || name == "." || name == ".." {
		return fmt.Errorf("write report: %q is not a file name", path)
	}
	return writeInRoot(dir, name, f, ds)
}

func writeInRoot(dir, name string, f Format, ds *Dataset) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("open report directory: %w", err)
	}
	defer root.Close()
	return writeRooted(root, name, func(w io.Writer) error { return Write(w, f, ds) })
}

// writeRooted writes the file name inside root with write, replacing it
// atomically.
func writeRooted(root *os.Root, name string, write func(io.Writer) error) error {
	f, err := createRooted(root, name)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.finish(false)
		return err
	}
	return f.finish(true)
}

// rootedFile is a report file being written: a temporary file beside its
// name inside root, renamed over it when finished.
type rootedFile struct {
	*bufio.Writer
	file      *os.File
	root      *os.Root
	tmp, name string
}

// createRooted creates the temporary file of name in root.
func createRooted(root *os.Root, name string) (*rootedFile, error) {
	tmp := "." + name + ".tmp"
	file, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create report file: %w", err)
	}
	return &rootedFile{Writer: bufio.NewWriterSize(file, 1<<16), file: file, root: root, tmp: tmp, name: name}, nil
}

// finish flushes and closes the file and, when ok, renames it over its
// name; when not ok or anything fails, the temporary file is removed.
func (f *rootedFile) finish(ok bool) (err error) {
	defer func() {
		if err != nil || !ok {
			f.file.Close()
			f.root.Remove(f.tmp)
		}
	}()
	if !ok {
		return nil
	}
	if err = f.Flush(); err != nil {
		return fmt.Errorf("write report file: %w", err)
	}
	if err = f.file.Close(); err != nil {
		return fmt.Errorf("write report file: %w", err)
	}
	if err = f.root.Rename(f.tmp, f.name); err != nil {
		return fmt.Errorf("write report file: %w", err)
	}
	return nil
}

// ReplaceDir writes the HTML report of ds like WriteDir, but into a
// fresh hidden directory inside dir first, whose files are then moved
// into dir: a process killed while writing leaves the previous report (or
// none), never part of one, and the next write removes what it left.
// written, when not nil, is called once the report is written and not
// yet moved (tests stop a process there).
func ReplaceDir(dir string, ds *Dataset, written func()) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create report directory: %w", err)
	}
	const partial = ".linkrot-partial-"
	if old, err := filepath.Glob(filepath.Join(dir, partial+"*")); err == nil {
		for _, o := range old {
			os.RemoveAll(o)
		}
	}
	tmp, err := os.MkdirTemp(dir, partial)
	if err != nil {
		return "", fmt.Errorf("create report directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	path, err := WriteDir(tmp, ds)
	if err != nil {
		return "", err
	}
	if written != nil {
		written()
	}
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return "", fmt.Errorf("write report: %w", err)
	}
	for _, en := range entries {
		dst := filepath.Join(dir, en.Name())
		if en.IsDir() {
			if err := os.RemoveAll(dst); err != nil {
				return "", fmt.Errorf("write report: %w", err)
			}
		}
		if err := os.Rename(filepath.Join(tmp, en.Name()), dst); err != nil {
			return "", fmt.Errorf("write report: %w", err)
		}
	}
	rel, err := filepath.Rel(tmp, path)
	if err != nil {
		return "", fmt.Errorf("write report: %w", err)
	}
	return filepath.Join(dir, rel), nil
}
