package maintain_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkrot/linkrot/maintain"
)

// loadDuration is how long TestLoad sends: LINKROT_LOAD_DURATION (the
// documented figure is 20s), 3s by default so that go test stays fast.
func loadDuration(t *testing.T) time.Duration {
	if s := os.Getenv("LINKROT_LOAD_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("LINKROT_LOAD_DURATION: %v", err)
		}
		return d
	}
	return 3 * time.Second
}

// TestLoad: 200 concurrent clients, each from its own loopback address,
// send a mix of valid and malformed notifications in both framings for
// loadDuration. The server must stay under 200 MB, answer every valid one
// (200), drop every malformed one with its status, and the database must
// hold exactly the valid ones. Skipped with -short.
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("load test: run without -short")
	}
	const clients = 200
	dur := loadDuration(t)
	ext := newExt(t)
	path := newSiteDB(t, ext.URL)
	// 10 notifications per second per client allowed; clients send about
	// 5 per second each, so a valid notification is never rate-limited.
	h := startServer(t, path, harnessOpts{limits: maintain.LimitOptions{Rate: 10, Burst: 20, Conns: 8}, header: 2 * time.Second})

	var peakHeap, peakSys atomic.Uint64
	stopSample := make(chan struct{})
	var sampled sync.WaitGroup
	sampled.Add(1)
	go func() {
		defer sampled.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peakHeap.Load() {
				peakHeap.Store(ms.HeapInuse)
			}
			if ms.Sys > peakSys.Load() {
				peakSys.Store(ms.Sys)
			}
			select {
			case <-stopSample:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()

	type kind struct {
		name  string
		valid bool
		want  int
		req   func(c, n int) string
	}
	a := site + "/a"
	kinds := []kind{
		{"draft LINK", true, 200, func(c, n int) string {
			return fmt.Sprintf("LINK %s/links?c=%d&n=%d %s\r\n\r\n", ext.URL, c, n, a)
		}},
		{"draft UNLINKR", true, 200, func(c, n int) string {
			return fmt.Sprintf("UNLINKR %s %s/gone %s/new\r\n\r\n", a, ext.URL, ext.URL)
		}},
		{"http LINK", true, 200, func(c, n int) string {
			return fmt.Sprintf("LINK %s/links?h=%d&n=%d HTTP/1.1\r\nHost: x\r\nLink-Target: %s\r\nConnection: close\r\n\r\n", ext.URL, c, n, a)
		}},
		{"http LINKMOD", true, 200, func(c, n int) string {
			return fmt.Sprintf("LINKMOD %s HTTP/1.1\r\nHost: x\r\nLink-Target: %s/ok\r\nConnection: close\r\n\r\n", a, ext.URL)
		}},
		{"malformed", false, 400, func(c, n int) string { return "LINK only-one-token\r\n\r\n" }},
		{"elsewhere", false, 417, func(c, n int) string {
			return fmt.Sprintf("LINK %s/links %s/ok\r\n\r\n", ext.URL, ext.URL)
		}},
		{"unknown page", false, 404, func(c, n int) string {
			return fmt.Sprintf("LINK %s/links %s/nope\r\n\r\n", ext.URL, site)
		}},
		{"oversized", false, 400, func(c, n int) string {
			return "LINK http://x.example/" + strings.Repeat("z", maintain.MaxLineLen) + " " + a + "\r\n\r\n"
		}},
		{"http no target", false, 400, func(c, n int) string {
			return "UNLINKR " + a + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
		}},
	}
	var sent, ok200 atomic.Int64
	var validSent atomic.Int64
	var mu sync.Mutex
	wrong := map[string]int{}
	deadline := time.Now().Add(dur)
	var wg sync.WaitGroup
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 1, byte(1+c))}, Timeout: 5 * time.Second}
			for n := 0; time.Now().Before(deadline); n++ {
				k := kinds[(c+n)%len(kinds)]
				st, err := send(d, h.addr, k.req(c, n))
				sent.Add(1)
				if k.valid {
					validSent.Add(1)
				}
				if err != nil || st != k.want {
					mu.Lock()
					wrong[fmt.Sprintf("%s: got %d (%v), want %d", k.name, st, err, k.want)]++
					mu.Unlock()
				} else if st == 200 {
					ok200.Add(1)
				}
				time.Sleep(200 * time.Millisecond)
			}
		}(c)
	}
	wg.Wait()
	close(stopSample)
	sampled.Wait()
	rss := vmHWM()
	rows := len(wires(t, h.wdb)) // every answer came after its commit
	h.stop()

	for w, n := range wrong {
		t.Errorf("%d× %s", n, w)
	}
	t.Logf("%d clients, %v: %d notifications sent, %d valid answered 200, %d rows in the inbox; peak heap in use %.1f MB, Go runtime memory %.1f MB, peak RSS %.1f MB",
		clients, dur, sent.Load(), ok200.Load(), rows, mb(peakHeap.Load()), mb(peakSys.Load()), mb(rss))
	if ok200.Load() != validSent.Load() {
		t.Errorf("valid notifications answered 200: %d of %d", ok200.Load(), validSent.Load())
	}
	if int64(rows) != validSent.Load() {
		t.Errorf("the inbox holds %d rows, want exactly the %d valid notifications", rows, validSent.Load())
	}
	switch {
	case raceEnabled:
		// Under -race the RSS is mostly the detector's shadow memory:
		// bound what the Go runtime itself obtained.
		if peakSys.Load() > 200<<20 {
			t.Errorf("Go runtime memory %.1f MB, want under 200 MB", mb(peakSys.Load()))
		}
	case rss > 200<<20:
		t.Errorf("peak RSS %.1f MB, want under 200 MB", mb(rss))
	}
}

func mb(b uint64) float64 { return float64(b) / (1 << 20) }

// vmHWM is the process's peak resident set (Linux), 0 elsewhere.
func vmHWM() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// send sends one request on its own connection and returns the status.
func send(d net.Dialer, addr, req string) (int, error) {
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
