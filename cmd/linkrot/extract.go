package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"time"

	"github.com/linkrot/linkrot"
)

func runExtract(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "extract", "[--base URL] [--headers FILE] FILE|URL|-")
	base := fs.String("base", "", "document `URL` of the page (default: the URL fetched, or file://PATH)")
	headers := fs.String("headers", "", "`FILE` with the page's HTTP response head (status line and header fields), for local files")
	maxBody := sizeFlag(5 << 20)
	fs.Var(&maxBody, "max-body", "read at most this many `bytes`")
	timeout := fs.Duration("timeout", 30*time.Second, "timeout when fetching a URL")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%v", err)
	}
	if len(pos) != 1 {
		fs.Usage()
		return usagef("extract takes exactly one FILE, URL or -")
	}
	ex, err := linkrot.ExtractPage(ctx, pos[0], linkrot.ExtractOptions{
		Base: *base, HeadersFile: *headers, MaxBody: int64(maxBody), Timeout: *timeout, Stdin: e.stdin})
	if err != nil {
		return err
	}
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(ex)
}
