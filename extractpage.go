package linkrot

import (
	"bufio"
	"bytes"
	"context"
	"errors"
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

// ExtractOptions are how ExtractPage reads its page.
type ExtractOptions struct {
	// Base is the document URL links resolve against (default: the URL
	// fetched, after redirects, or file://PATH).
	Base string
	// HeadersFile holds the page's HTTP response head (an optional status
	// line, then header fields), for a local file.
	HeadersFile string
	// MaxBody is how many bytes of the page are read.
	MaxBody int64
	// Timeout bounds fetching a URL.
	Timeout time.Duration
	// Stdin is read for the source "-".
	Stdin io.Reader
}

// ExtractPage reads one page, src being an http(s) URL (fetched with the
// crawler's user agent; its redirects may not lead to a private address),
// "-" (o.Stdin) or a file, and returns what the crawl extracts from it
// (Markdown by file extension or Content-Type, else HTML). For a fetched
// URL without o.Base, the extraction's URL is the URL requested. Errors
// in the request itself (an unreadable head or file, a relative Base, a
// malformed URL) are *SettingsError.
func ExtractPage(ctx context.Context, src string, o ExtractOptions) (audit.Extraction, error) {
	var (
		body      []byte
		header    = http.Header{}
		pageURL   *url.URL
		requested string
		err       error
	)
	if o.HeadersFile != "" {
		h, err := readHead(o.HeadersFile)
		if err != nil {
			return audit.Extraction{}, settingsErrorf("--headers: %v", err)
		}
		header = h
	}
	switch {
	case strings.HasPrefix(src, "http://") || strings.HasPrefix(src, "https://"):
		requested = src
		body, header, pageURL, err = fetchPage(ctx, src, o.MaxBody, o.Timeout)
		if err != nil {
			return audit.Extraction{}, err
		}
	case src == "-":
		body, err = io.ReadAll(io.LimitReader(o.Stdin, o.MaxBody))
		if err != nil {
			return audit.Extraction{}, fmt.Errorf("read stdin: %w", err)
		}
		pageURL = &url.URL{Scheme: "file", Path: "/dev/stdin"}
	default:
		f, err := os.Open(src)
		if err != nil {
			return audit.Extraction{}, settingsErrorf("%v", err)
		}
		body, err = io.ReadAll(io.LimitReader(f, o.MaxBody))
		f.Close()
		if err != nil {
			return audit.Extraction{}, fmt.Errorf("read %s: %w", src, err)
		}
		abs, _ := filepath.Abs(src)
		pageURL = &url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	}
	if o.Base != "" {
		u, err := url.Parse(o.Base)
		if err != nil || !u.IsAbs() {
			return audit.Extraction{}, settingsErrorf("--base %q must be an absolute URL", o.Base)
		}
		pageURL = u
	}
	var ex audit.Extraction
	if markdown.IsPath(src) || strings.HasPrefix(header.Get("Content-Type"), "text/markdown") {
		ex = markdown.Parse(body, pageURL, extract.Options{}).Extraction
	} else if ex, _, err = extract.Parse(body, header.Get("Content-Type"), pageURL, header, extract.Options{}); err != nil {
		return audit.Extraction{}, err
	}
	if requested != "" && o.Base == "" {
		// "url" is the request URL; links resolve against the final URL
		// after redirects, which "base" shows.
		ex.URL = requested
	}
	return ex, nil
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
		return nil, nil, nil, settingsErrorf("%v", err)
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
