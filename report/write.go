package report

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
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
// atomically (a temporary file renamed over it).
func WriteDir(dir string, ds *Dataset) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create report directory: %w", err)
	}
	if err := writeInRoot(dir, IndexFile, HTML, ds); err != nil {
		return "", err
	}
	return filepath.Join(dir, IndexFile), nil
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

func writeInRoot(dir, name string, f Format, ds *Dataset) (err error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("open report directory: %w", err)
	}
	defer root.Close()
	tmp := "." + name + ".tmp"
	file, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("create report file: %w", err)
	}
	defer func() {
		if err != nil {
			file.Close()
			root.Remove(tmp)
		}
	}()
	bw := bufio.NewWriterSize(file, 1<<16)
	if err = Write(bw, f, ds); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return fmt.Errorf("write report file: %w", err)
	}
	if err = file.Close(); err != nil {
		return fmt.Errorf("write report file: %w", err)
	}
	if err = root.Rename(tmp, name); err != nil {
		return fmt.Errorf("write report file: %w", err)
	}
	return nil
}
