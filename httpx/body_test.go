package httpx

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"io"
	"net/http"
	"strings"
	"testing"
)

func compressed(t testing.TB, enc string, plain []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	var w io.WriteCloser
	switch enc {
	case "gzip":
		w, _ = gzip.NewWriterLevel(&b, gzip.BestCompression)
	case "zlib":
		w, _ = zlib.NewWriterLevel(&b, zlib.BestCompression)
	case "flate":
		w, _ = flate.NewWriter(&b, flate.BestCompression)
	}
	if _, err := w.Write(plain); err != nil {
		t.Fatal(err)
	}
	w.Close()
	return b.Bytes()
}

func response(encoding string, body []byte) *http.Response {
	h := http.Header{}
	if encoding != "" {
		h.Set("Content-Encoding", encoding)
	}
	return &http.Response{Header: h, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body))}
}

// TestReadBody_CapAfterDecoding: the cap applies to decoded bytes, so a
// small compressed body (a gzip bomb) cannot inflate past it; gzip, zlib-
// wrapped and raw deflate are all decoded.
func TestReadBody_CapAfterDecoding(t *testing.T) {
	plain := bytes.Repeat([]byte("bomb "), 1<<20) // 5 MiB decoded
	for _, tt := range []struct{ name, header, enc string }{
		{"gzip", "gzip", "gzip"},
		{"x-gzip", "x-gzip", "gzip"},
		{"deflate zlib", "deflate", "zlib"},
		{"deflate raw", "deflate", "flate"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := compressed(t, tt.enc, plain)
			if len(body) > 64<<10 {
				t.Fatalf("compressed %d bytes: not a bomb", len(body))
			}
			got, truncated, err := ReadBody(response(tt.header, body), 64<<10)
			if err != nil || !truncated || len(got) != 64<<10 || !bytes.Equal(got, plain[:64<<10]) {
				t.Errorf("read %d bytes, truncated %v, err %v; want the first 64 KiB decoded, truncated", len(got), truncated, err)
			}
			got, truncated, err = ReadBody(response(tt.header, body), int64(len(plain)))
			if err != nil || truncated || !bytes.Equal(got, plain) {
				t.Errorf("whole body: %d bytes, truncated %v, err %v", len(got), truncated, err)
			}
		})
	}
}

func TestReadBody_Errors(t *testing.T) {
	if _, _, err := ReadBody(response("br", []byte("x")), 10); err == nil || !strings.Contains(err.Error(), "unsupported content-encoding br") {
		t.Errorf("br: %v, want unsupported", err)
	}
	if _, _, err := ReadBody(response("gzip", []byte("not gzip at all")), 10); err == nil {
		t.Errorf("bad gzip: no error")
	}
	long := strings.Repeat("é", 40)
	if _, _, err := ReadBody(response(long, nil), 10); err == nil || !strings.HasSuffix(err.Error(), "…") || len(err.Error()) > 80 {
		t.Errorf("long encoding name: %v, want it cut", err)
	}
	got, truncated, err := ReadBody(response("identity", []byte("plain")), 10)
	if err != nil || truncated || string(got) != "plain" {
		t.Errorf("identity: %q %v %v", got, truncated, err)
	}
}

func TestIsHTML(t *testing.T) {
	tests := []struct {
		ct   string
		body string
		want bool
	}{
		{"text/html; charset=utf-8", "", true},
		{"Text/HTML", "", true},
		{"application/xhtml+xml", "", true},
		{"text/plain", "<html><body>x", false},
		{"", "<!DOCTYPE html><html><p>x", true},
		{"", "%PDF-1.4", false},
		{"text/html;;bad=", "", true},
	}
	for _, tt := range tests {
		if got := IsHTML(tt.ct, []byte(tt.body)); got != tt.want {
			t.Errorf("IsHTML(%q, %q) = %v, want %v", tt.ct, tt.body, got, tt.want)
		}
	}
}

func TestDecodeHTML(t *testing.T) {
	latin1 := []byte("<p>caf\xe9</p>")
	if got := string(DecodeHTML(latin1, "text/html; charset=iso-8859-1")); got != "<p>café</p>" {
		t.Errorf("latin-1 by header: %q", got)
	}
	meta := []byte(`<meta charset="windows-1252"><p>caf` + "\xe9")
	if got := string(DecodeHTML(meta, "text/html")); !strings.HasSuffix(got, "café") {
		t.Errorf("windows-1252 by meta: %q", got)
	}
	utf := []byte("<p>café</p>")
	if got := DecodeHTML(utf, "text/html"); &got[0] != &utf[0] {
		t.Errorf("UTF-8 body copied")
	}
}

func FuzzDecodeBody(f *testing.F) {
	plain := bytes.Repeat([]byte("bomb "), 1<<14)
	f.Add(compressed(f, "gzip", plain), "gzip")
	f.Add(compressed(f, "zlib", plain), "deflate")
	f.Add([]byte("\x78\x01raw"), "deflate")
	f.Add([]byte("plain"), "identity")
	f.Fuzz(func(t *testing.T, body []byte, encoding string) {
		const limit = 1 << 10
		resp := response(encoding, body)
		dec, err := Decoder(resp, resp.Body)
		if err != nil {
			return
		}
		b, truncated, _ := ReadCapped(dec, limit, -1)
		if len(b) > limit || (truncated && len(b) != limit) {
			t.Fatalf("read %d bytes (truncated %v) with cap %d", len(b), truncated, limit)
		}
	})
}
