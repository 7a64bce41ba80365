package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/crawler"
	"github.com/linkrot/linkrot/crawler/extract"
	"github.com/linkrot/linkrot/crawler/markdown"
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
	src := pos[0]
	var (
		body      []byte
		header    = http.Header{}
		pageURL   *url.URL
		requested string
	)
	if *headers != "" {
		h, err := readHead(*headers)
		if err != nil {
			return usagef("--headers: %v", err)
		}
		header = h
	}
	switch {
	case strings.HasPrefix(src, "http://") || strings.HasPrefix(src, "https://"):
		requested = src
		body, header, pageURL, err = fetchPage(ctx, src, int64(maxBody), *timeout)
		if err != nil {
			return err
		}
	case src == "-":
		body, err = io.ReadAll(io.LimitReader(e.stdin, int64(maxBody)))
		if err != nil {
			return fmt.Errorf("read stdin: %w", err)
		}
		pageURL = &url.URL{Scheme: "file", Path: "/dev/stdin"}
	default:
		f, err := os.Open(src)
		if err != nil {
			return usagef("%v", err)
		}
		body, err = io.ReadAll(io.LimitReader(f, int64(maxBody)))
		f.Close()
		if err != nil {
			return fmt.Errorf("read %s: %w", src, err)
		}
		abs, _ := filepath.Abs(src)
		pageURL = &url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	}
	if *base != "" {
		u, err := url.Parse(*base)
		if err != nil || !u.IsAbs() {
			return usagef("--base %q must be an absolute URL", *base)
		}
		pageURL = u
	}
	var ex audit.Extraction
	if markdown.IsPath(src) || strings.HasPrefix(header.Get("Content-Type"), "text/markdown") {
		ex = markdown.Parse(body, pageURL, extract.Options{}).Extraction
	} else if ex, _, err = extract.Parse(body, header.Get("Content-Type"), pageURL, header, extract.Options{}); err != nil {
		return err
	}
	if requested != "" && *base == "" {
		// "url" is the request URL; links resolve against the final URL
		// after redirects, which "base" shows.
		ex.URL = requested
	}
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(ex)
}

// readHead reads an HTTP response head: an optional status line
// ("HTTP/1.1 200 OK") followed by header fields.
func readHead(name string) (http.Header, error) {
	raw, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	raw = bytes.TrimLeft(raw, "\r\n\t ")
	if bytes.HasPrefix(raw, []byte("HTTP/")) {
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			raw = raw[i+1:]
		} else {
			raw = nil
		}
	}
	// Normalise line endings and make sure the head ends with a blank line.
	text := strings.ReplaceAll(string(raw), "\r\n", "\n")
	text = strings.TrimRight(text, "\n") + "\n\n"
	r := textproto.NewReader(bufio.NewReader(strings.NewReader(text)))
	h, err := r.ReadMIMEHeader()
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("parse %s: %w", name, err)
	}
	return http.Header(h), nil
}

func fetchPage(ctx context.Context, u string, maxBody int64, timeout time.Duration) ([]byte, http.Header, *url.URL, error) {
	// The SSRF guard: the page's own host may be private, its redirects
	// may not lead to another private or link-local address.
	rt, closeRT := crawler.SiteTransport([]string{u})
	defer closeRT()
	client := &http.Client{Transport: rt, Timeout: timeout}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, nil, nil, usagef("%v", err)
	}
	req.Header.Set("User-Agent", crawler.DefaultUserAgent)
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("fetch %s: %w", u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read %s: %w", u, err)
	}
	return body, resp.Header, resp.Request.URL, nil
}
