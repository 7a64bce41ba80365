package httpx

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"golang.org/x/net/html/charset"
)

// DefaultMaxBody is the decoded bytes of an HTML body read by default: the
// live checker's cap, which the crawler's page evidence matches.
const DefaultMaxBody = 2 << 20

// ReadBody reads at most max decoded bytes of resp's body: gzip and deflate
// bodies the Transport did not decode itself are decoded here, and the cap
// applies after decoding (a small compressed body cannot inflate past it).
// truncated reports that the body went on past max. An unsupported
// Content-Encoding is an error. ReadBody does not close the body.
func ReadBody(resp *http.Response, max int64) (body []byte, truncated bool, err error) {
	dec, err := Decoder(resp, resp.Body)
	if err != nil {
		return nil, false, err
	}
	return ReadCapped(dec, max, resp.ContentLength)
}

// ReadCapped reads r up to max bytes; truncated reports there was more.
// sizeHint (the Content-Length, or <= 0) sizes the buffer.
func ReadCapped(r io.Reader, max, sizeHint int64) (body []byte, truncated bool, err error) {
	var buf bytes.Buffer
	if sizeHint > 0 {
		buf.Grow(int(min(sizeHint, max) + 1))
	}
	_, err = buf.ReadFrom(io.LimitReader(r, max+1))
	b := buf.Bytes()
	if int64(len(b)) > max {
		return b[:max], true, nil
	}
	return b, false, err
}

// Decoder returns resp's body read from raw, decoded. The Transport
// decodes gzip when it asked for it (resp.Uncompressed); a gzip or deflate
// body it did not ask for is decoded here (deflate zlib-wrapped, as RFC
// 9110 says, or raw, as some servers send it). Either way the caller caps
// the decoded bytes. A stream that is not what its Content-Encoding
// claims fails on the first read; an unsupported Content-Encoding is an
// error at once.
func Decoder(resp *http.Response, raw io.Reader) (io.Reader, error) {
	if resp.Uncompressed {
		return raw, nil
	}
	switch ce := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))); ce {
	case "", "identity":
		return raw, nil
	case "gzip", "x-gzip":
		return &lazyReader{open: func() (io.Reader, error) { return gzip.NewReader(raw) }}, nil
	case "deflate":
		br := bufio.NewReader(raw)
		return &lazyReader{open: func() (io.Reader, error) {
			h, err := br.Peek(2)
			if err != nil {
				return nil, err
			}
			if h[0]&0x0f == 8 && (uint16(h[0])<<8|uint16(h[1]))%31 == 0 {
				return zlib.NewReader(br)
			}
			return flate.NewReader(br), nil
		}}, nil
	default:
		return nil, errors.New("unsupported content-encoding " + shorten(ce, 40))
	}
}

// lazyReader opens a decoder on first read, so that a stream that is not
// what it claims fails as a read, with the reader's error recorded.
type lazyReader struct {
	open func() (io.Reader, error)
	r    io.Reader
	err  error
}

func (l *lazyReader) Read(p []byte) (int, error) {
	if l.r == nil && l.err == nil {
		l.r, l.err = l.open()
	}
	if l.err != nil {
		return 0, l.err
	}
	return l.r.Read(p)
}

// MediaType returns the lower-cased media type of a Content-Type value
// ("" for none); a value mime cannot parse gives what precedes its
// parameters.
func MediaType(contentType string) string {
	if contentType == "" {
		return ""
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt, _, _ = strings.Cut(contentType, ";")
		mt = strings.ToLower(strings.TrimSpace(mt))
	}
	return mt
}

// IsHTMLType reports whether a media type (MediaType) is HTML or XHTML.
func IsHTMLType(mediaType string) bool {
	return mediaType == "text/html" || mediaType == "application/xhtml+xml"
}

// IsHTML reports whether a body is HTML: by its Content-Type, or sniffed
// with net/http's algorithm when there is none. Every stage decides with
// it, so the crawler, the checker and the archives stage agree on what is
// a page.
func IsHTML(contentType string, body []byte) bool {
	if contentType == "" {
		contentType = http.DetectContentType(body)
	}
	return IsHTMLType(MediaType(contentType))
}

// DecodeHTML returns an HTML body as UTF-8, its encoding found from the
// BOM, then the Content-Type charset, then <meta>, then a UTF-8 validity
// sniff (x/net/html/charset). A body that does not decode is returned as
// is.
func DecodeHTML(body []byte, contentType string) []byte {
	enc, name, _ := charset.DetermineEncoding(body, contentType)
	if name == "utf-8" {
		return body
	}
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		return body
	}
	return out
}

// shorten cuts s to n bytes on a rune boundary, marking the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
