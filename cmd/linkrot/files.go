package main

import (
	"os"
	"path/filepath"
	"strings"
)

// fileInput turns a document argument (linkrot audit README.md) into the
// directory served as the site and the file's slash path in it: the
// working directory when the file lies inside it, so that relative links
// to ../other.md resolve on disk, else the file's own directory.
func fileInput(arg string) (dir, file string, err error) {
	abs, err := filepath.Abs(arg)
	if err != nil {
		return "", "", usagef("%s: %v", arg, err)
	}
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return ".", filepath.ToSlash(rel), nil
		}
	}
	return filepath.Dir(abs), filepath.Base(abs), nil
}
