package linkrot

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/linkrot/linkrot/crawler"
)

// InputArgs are what a command line says to crawl.
type InputArgs struct {
	Args     []string  // the positional arguments
	URLsFile string    // --urls: a file of URLs, one a line ("-": Stdin)
	Stdin    io.Reader // read for URLsFile "-"
	Sitemaps []string  // --sitemap URLs
	Base     string    // --base: the URL a directory is served as (default http://localhost/)
}

// ParseInput decides what a run crawls from its command line: the URLs of
// URLsFile (no positional argument allowed), sitemaps with the arguments
// as extra seeds, several http(s) URLs crawled as one run, or one
// argument: a directory (served under Base), an HTML or Markdown file
// (its directory, see below, with that file alone) or an http(s) URL.
// Every error about the arguments is a *SettingsError.
//
// A file inside the working directory is crawled as the working
// directory with the file's relative path, so that its relative links to
// ../other.md resolve on disk; any other file as its own directory.
func ParseInput(a InputArgs) (Input, error) {
	pos := a.Args
	switch {
	case a.URLsFile != "":
		if len(pos) > 0 {
			return Input{}, settingsErrorf("--urls takes no positional argument")
		}
		urls, err := readURLList(a.URLsFile, a.Stdin)
		if err != nil {
			return Input{}, err
		}
		if len(urls) == 0 {
			return Input{}, settingsErrorf("--urls %s: no URLs", a.URLsFile)
		}
		return URLListInput(urls), nil
	case len(a.Sitemaps) > 0:
		return SitemapInput(a.Sitemaps, pos...), nil
	case len(pos) > 1:
		// Several sites crawled as one run (their hosts are its scope).
		for _, p := range pos {
			if !strings.HasPrefix(p, "http://") && !strings.HasPrefix(p, "https://") {
				return Input{}, settingsErrorf("several arguments must all be http(s) URLs: %q is not", p)
			}
		}
		return SiteInput(pos...), nil
	case len(pos) != 1:
		return Input{}, settingsErrorf("expected one URL or directory (or --sitemap / --urls)")
	}
	arg := pos[0]
	base := a.Base
	if base == "" {
		base = "http://localhost/"
	}
	st, err := os.Stat(arg)
	switch {
	case err == nil && st.IsDir():
		return DirectoryInput(arg, base), nil
	case err == nil && st.Mode().IsRegular() && crawler.IsPage(arg):
		dir, file, err := fileInput(arg)
		if err != nil {
			return Input{}, err
		}
		return DirectoryInput(dir, base, file), nil
	case strings.HasPrefix(arg, "http://") || strings.HasPrefix(arg, "https://"):
		return SiteInput(arg), nil
	}
	return Input{}, argError(arg, st, err)
}

// argError is the error of a positional argument that is neither a
// directory, an HTML or Markdown file, nor an http(s) URL: st and err are
// what os.Stat said of it.
func argError(arg string, st os.FileInfo, err error) error {
	const accepted = "linkrot audits an http(s) URL, a directory, or an " + crawler.PageTypes + " file"
	switch {
	case err == nil && st.Mode().IsRegular():
		return settingsErrorf("%s: unsupported file type: %s", arg, accepted)
	case err == nil:
		return settingsErrorf("%s: not a regular file or a directory: %s", arg, accepted)
	case errors.Is(err, fs.ErrNotExist) && crawler.IsPage(arg):
		return settingsErrorf("%s: no such file", arg)
	case errors.Is(err, fs.ErrNotExist):
		return settingsErrorf("%s: no such file or directory (%s)", arg, accepted)
	default:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is already named
		}
		return settingsErrorf("%s: %v", arg, err)
	}
}

func readURLList(name string, stdin io.Reader) ([]string, error) {
	var r io.Reader
	if name == "-" {
		r = stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, settingsErrorf("--urls: %v", err)
		}
		defer f.Close()
		r = f
	}
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !strings.HasPrefix(line, "http://") && !strings.HasPrefix(line, "https://") {
			return nil, settingsErrorf("--urls: %q is not an http(s) URL", line)
		}
		out = append(out, line)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read url list: %w", err)
	}
	return out, nil
}

// fileInput turns a document argument (linkrot audit README.md) into the
// directory served as the site and the file's slash path in it (see
// ParseInput).
func fileInput(arg string) (dir, file string, err error) {
	abs, err := filepath.Abs(arg)
	if err != nil {
		return "", "", settingsErrorf("%s: %v", arg, err)
	}
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return ".", filepath.ToSlash(rel), nil
		}
	}
	return filepath.Dir(abs), filepath.Base(abs), nil
}
