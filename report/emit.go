package report

import (
	"bufio"
	"fmt"
	"io"
)

// Emit writes ds in format f as linkrot report does: HTML into the
// directory out with o, returning the path of its index page; another
// format into the file out, or to w (buffered) when out is "".
func Emit(w io.Writer, ds *Dataset, f Format, out string, o HTMLOptions) (path string, err error) {
	switch {
	case f == HTML:
		return WriteDirOptions(out, ds, o)
	case out != "":
		return out, WriteFile(out, f, ds)
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	if err := Write(bw, f, ds); err != nil {
		return "", err
	}
	if err := bw.Flush(); err != nil {
		return "", fmt.Errorf("write report: %w", err)
	}
	return "", nil
}
