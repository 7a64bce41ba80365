package check

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

const (
	bombSize    = 16 << 20 // decoded bytes
	bombMaxBody = 64 << 10
)

var bombs = sync.OnceValues(func() (gz, zl []byte) {
	// "<p>" then "bomb " forever: every 5 bytes one word, so Check.Words
	// tells how many decoded bytes were read.
	chunk := bytes.Repeat([]byte("bomb "), 1<<16)
	var g, z bytes.Buffer
	gw, _ := gzip.NewWriterLevel(&g, gzip.BestCompression)
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	for _, w := range []io.Writer{gw, zw} {
		w.Write([]byte("<p>"))
		for range bombSize / len(chunk) {
			w.Write(chunk)
		}
	}
	gw.Close()
	zw.Close()
	return g.Bytes(), z.Bytes()
})

func TestCheckOne_DecompressionBomb(t *testing.T) {
	gz, zl := bombs()
	tests := []struct {
		name, encoding string
		body           []byte
	}{
		// The Transport asked for gzip and decodes it: the decoded reader
		// is capped.
		{"GzipByTransport", "gzip", gz},
		// Deflate the Transport did not ask for: decoded here, capped.
		{"DeflateByChecker", "deflate", zl},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t)
			s.handle("/t", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				w.Header().Set("Content-Encoding", tt.encoding)
				w.Write(tt.body)
			})
			o := testOptions()
			o.MaxBody = bombMaxBody
			o.DisableSoft404 = true
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			c := New(o).CheckOne(context.Background(), Target{URL: s.URL + "/t"})
			runtime.ReadMemStats(&after)
			if c.Verdict != audit.VerdictOK || !c.Truncated {
				t.Fatalf("verdict %q truncated %v (%s), want ok, truncated", c.Verdict, c.Truncated, c.Reason)
			}
			// Every word is 5 decoded bytes.
			if max := bombMaxBody / 5; c.Words > max || c.Words < max-2 {
				t.Errorf("%d words: read %d decoded bytes, want MaxBody (%d)", c.Words, 5*c.Words, bombMaxBody)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > bombSize/2 {
				t.Errorf("allocated %d bytes checking a %d-byte bomb with MaxBody %d", alloc, bombSize, bombMaxBody)
			}
		})
	}
}

func TestDecoder_Errors(t *testing.T) {
	tests := []struct {
		name, encoding, body string
	}{
		// x-gzip: the Transport decodes only the "gzip" it asked for.
		{"BadGzip", "x-gzip", "not gzip at all"},
		{"BadDeflate", "deflate", "\xff\xff\xff"},
		{"Unsupported", "br", "whatever"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t)
			s.handle("/t", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				w.Header().Set("Content-Encoding", tt.encoding)
				w.Write([]byte(tt.body))
			})
			c := New(testOptions()).CheckOne(context.Background(), Target{URL: s.URL + "/t"})
			if c.Verdict != audit.VerdictOK || !strings.Contains(c.Reason, "body not decoded") || c.SHA256 != "" {
				t.Errorf("verdict %q reason %q sha %q; want ok, body not decoded, no fingerprint", c.Verdict, c.Reason, c.SHA256)
			}
		})
	}
}
