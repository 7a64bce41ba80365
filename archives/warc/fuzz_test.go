package warc

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// readAll opens a collection of one file holding b and reads every
// capture: whatever b is, nothing panics.
func readAll(t *testing.T, name string, b []byte) {
	dir := t.TempDir()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Open("f", []string{p}, Options{IndexDir: filepath.Join(dir, "idx")})
	if err != nil {
		return
	}
	for _, u := range []string{page, "http://example.org/other", "http://example.org/cut"} {
		for _, e := range c.Captures(u) {
			c.Read(e)
		}
	}
}

func FuzzWARC(f *testing.F) {
	p := collectionFile(&testing.T{}, f.TempDir())
	seed, _ := os.ReadFile(p)
	f.Add(seed)
	f.Add(response(page, t1, body1))
	f.Add(revisit(page, t3, t2, body2))
	f.Add([]byte("WARC/1.1\r\nWARC-Type: response\r\nContent-Length: 99999999\r\n\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		readAll(t, "x.warc.gz", b)
		readAll(t, "x.warc", b)
	})
}

func FuzzWACZ(f *testing.F) {
	for _, withIndex := range []bool{false, true} {
		seed, _ := os.ReadFile(wacz(&testing.T{}, f.TempDir(), withIndex))
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		readAll(t, "x.wacz", b)
	})
}

func FuzzCDXJ(f *testing.F) {
	f.Add([]byte(`org,example)/ 20240301100000 {"url":"http://example.org/","offset":"0","filename":"a.warc.gz","status":"200"}`))
	f.Add([]byte("!meta\n- 1 {}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		es, _ := readCDXJ(bytes.NewReader(b))
		var out bytes.Buffer
		if err := writeCDXJ(&out, nil, es); err != nil {
			t.Fatal(err)
		}
		again, bad := readCDXJ(&out)
		if len(again) != len(es) || len(bad) != 0 {
			t.Fatalf("round trip: %d entries, then %d (%v)", len(es), len(again), bad)
		}
	})
}
