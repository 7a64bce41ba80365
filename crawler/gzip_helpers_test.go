package crawler

import (
	"bytes"
	"compress/gzip"
	"io"
)

func gzipOf(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
