package crawler

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/linkrot/linkrot/urls"
)

// Sitemap bounds from the sitemaps.org protocol: 50,000 URLs and 50 MB
// (uncompressed) per file. Index files may nest; linkrot follows at most
// maxSitemapDepth levels and maxSitemapFiles files in all.
const (
	maxSitemapBytes = 50 << 20
	maxSitemapURLs  = 50_000
	maxSitemapDepth = 3
	maxSitemapFiles = 1000
)

// errSitemapTooBig reports a sitemap whose decoded size exceeds the cap.
var errSitemapTooBig = errors.New("sitemap exceeds 50 MB uncompressed")

type sitemapReader struct {
	client *http.Client
	ua     string
	log    *slog.Logger
	files  int
}

// Read returns the page URLs of a sitemap, a sitemap index (recursively) or a
// plain-text sitemap, gzipped or not. Child sitemaps of an index must be on
// the index's host. Errors of child sitemaps are logged and skipped.
func (s *sitemapReader) Read(ctx context.Context, sitemapURL string) ([]string, error) {
	return s.read(ctx, sitemapURL, 0)
}

func (s *sitemapReader) read(ctx context.Context, sitemapURL string, depth int) ([]string, error) {
	s.files++
	if s.files > maxSitemapFiles {
		return nil, fmt.Errorf("sitemap %s: more than %d sitemap files", sitemapURL, maxSitemapFiles)
	}
	body, err := s.fetch(ctx, sitemapURL)
	if err != nil {
		return nil, err
	}
	pages, children, err := parseSitemap(body)
	if err != nil {
		return pages, fmt.Errorf("sitemap %s: %w", sitemapURL, err)
	}
	pages = s.locs(sitemapURL, pages)
	base, berr := urls.ParseURL(sitemapURL)
	for _, c := range s.locs(sitemapURL, children) {
		cu, err := urls.ParseURL(c)
		if err != nil || berr != nil || hostPort(cu.NetURL()) != hostPort(base.NetURL()) {
			s.log.Warn("sitemap index child on another host skipped", "index", urls.RedactText(sitemapURL), "child", c)
			continue
		}
		if depth+1 > maxSitemapDepth {
			s.log.Warn("sitemap index nesting too deep", "index", urls.RedactText(sitemapURL), "child", c)
			continue
		}
		more, err := s.read(ctx, c, depth+1)
		if err != nil {
			s.log.Warn("child sitemap", "url", c, "err", urls.RedactText(err.Error()))
		}
		pages = append(pages, more...)
	}
	return pages, nil
}

// locs parses <loc> values by the URL parser of every other URL (WHATWG,
// urls.ParseURL; the protocol requires absolute http(s) URLs) and returns
// them serialised, passwords redacted. Invalid ones are logged and
// skipped.
func (s *sitemapReader) locs(sitemapURL string, raw []string) []string {
	out := raw[:0]
	for _, r := range raw {
		u, err := urls.ParseURL(r)
		if err != nil || (u.Scheme() != "http" && u.Scheme() != "https") {
			reason := "not an absolute http(s) URL"
			if err != nil {
				reason = err.Error()
			}
			s.log.Warn("sitemap <loc> skipped", "sitemap", urls.RedactText(sitemapURL), "loc", urls.RedactURLString(truncateLoc(r)), "reason", reason)
			continue
		}
		out = append(out, urls.RedactText(u.String()))
	}
	return out
}

func truncateLoc(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

func (s *sitemapReader) fetch(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("sitemap request: %w", err)
	}
	req.Header.Set("User-Agent", s.ua)
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch sitemap: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.Header.Get("Location") != "" {
		// The client follows redirects on the sitemap's host only.
		return nil, errOffHostRedirect(u, resp)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch sitemap %s: HTTP %d", u, resp.StatusCode)
	}
	return readMaybeGzip(resp.Body, maxSitemapBytes)
}

// readMaybeGzip reads r, decompressing it when it starts with the gzip magic
// bytes (a .xml.gz served without Content-Encoding), and caps the *decoded*
// size at limit: a gzip bomb ends with errSitemapTooBig, not with the
// process out of memory.
func readMaybeGzip(r io.Reader, limit int64) ([]byte, error) {
	br := bufio.NewReader(io.LimitReader(r, limit+1))
	var src io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gunzip sitemap: %w", err)
		}
		defer zr.Close()
		src = zr
	}
	body, err := io.ReadAll(io.LimitReader(src, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read sitemap: %w", err)
	}
	if int64(len(body)) > limit {
		return nil, errSitemapTooBig
	}
	return body, nil
}

// parseSitemap reads a <urlset> (page URLs), a <sitemapindex> (child
// sitemaps) or a plain-text sitemap (one URL per line).
func parseSitemap(body []byte) (pages, children []string, err error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] != '<' {
		sc := bufio.NewScanner(bytes.NewReader(trimmed))
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() && len(pages) < maxSitemapURLs {
			line := strings.TrimSpace(sc.Text())
			if strings.HasPrefix(line, "http://") || strings.HasPrefix(line, "https://") {
				pages = append(pages, line)
			}
		}
		return pages, nil, sc.Err()
	}
	dec := xml.NewDecoder(bytes.NewReader(body))
	dec.Strict = false
	var inLoc bool
	var parent string
	var loc strings.Builder
	for {
		tok, terr := dec.Token()
		if terr == io.EOF {
			break
		}
		if terr != nil {
			return pages, children, fmt.Errorf("parse sitemap xml: %w", terr)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "url", "sitemap":
				parent = t.Name.Local
			case "loc":
				inLoc = true
				loc.Reset()
			}
		case xml.CharData:
			if inLoc && loc.Len() < 8192 {
				loc.Write(t)
			}
		case xml.EndElement:
			if t.Name.Local == "loc" && inLoc {
				inLoc = false
				v := strings.TrimSpace(loc.String())
				if v == "" {
					continue
				}
				if parent == "sitemap" {
					children = append(children, v)
				} else if len(pages) < maxSitemapURLs {
					pages = append(pages, v)
				}
			}
		}
	}
	return pages, children, nil
}
