package check

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/drift/textsim"
)

const page = `<!DOCTYPE html><html><head><title>Post</title></head><body>
<nav>Home Blog About</nav><main><h1>Link rot</h1><p>Links decay: pages move, sites close, and
readers land on errors. An audit finds them before readers do.</p></main><footer>(c) 2026</footer></body></html>`

func TestCheckOne_Verdicts(t *testing.T) {
	type tc struct {
		name  string
		setup func(t *testing.T, s *server) string // returns the target URL
		opts  func(o *Options)
		want  audit.Verdict
		check func(t *testing.T, c audit.Check, s *server)
		// maxTime bounds CheckOne's duration; 0: (Retries+1) attempts of
		// Timeout plus Retries waits of MaxRetryWait.
		maxTime time.Duration
	}
	tests := []tc{
		{
			name:  "OK",
			setup: func(t *testing.T, s *server) string { s.handle("/t", html200(page)); return s.URL + "/t" },
			want:  audit.VerdictOK,
			check: func(t *testing.T, c audit.Check, s *server) {
				if c.Status != 200 || c.Attempts != 1 || c.FinalURL != c.URL {
					t.Errorf("status %d, attempts %d, final %q; want 200, 1, the URL", c.Status, c.Attempts, c.FinalURL)
				}
			},
		},
		{
			name: "TemporaryRedirectChain",
			setup: func(t *testing.T, s *server) string {
				s.handle("/t", redirect("/a", http.StatusFound))
				s.handle("/a", redirect("/b", http.StatusTemporaryRedirect))
				s.handle("/b", html200(page))
				return s.URL + "/t"
			},
			want: audit.VerdictRedirected,
			check: func(t *testing.T, c audit.Check, s *server) {
				want := []audit.Redirect{{From: s.URL + "/t", To: s.URL + "/a", Status: 302}, {From: s.URL + "/a", To: s.URL + "/b", Status: 307}}
				if fmt.Sprint(c.Redirects) != fmt.Sprint(want) {
					t.Errorf("redirects %v, want %v", c.Redirects, want)
				}
				if c.Replacement != "" || c.FinalURL != s.URL+"/b" {
					t.Errorf("replacement %q final %q", c.Replacement, c.FinalURL)
				}
			},
		},
		{
			name: "Moved301",
			setup: func(t *testing.T, s *server) string {
				s.handle("/t", redirect("/new", http.StatusMovedPermanently))
				s.handle("/new", html200(page))
				return s.URL + "/t"
			},
			want: audit.VerdictMoved,
			check: func(t *testing.T, c audit.Check, s *server) {
				if c.Replacement != s.URL+"/new" {
					t.Errorf("replacement %q, want %q", c.Replacement, s.URL+"/new")
				}
			},
		},
		{
			name: "Moved308",
			setup: func(t *testing.T, s *server) string {
				s.handle("/t", redirect("/new", http.StatusPermanentRedirect))
				s.handle("/new", html200(page))
				return s.URL + "/t"
			},
			want: audit.VerdictMoved,
		},
		{
			// The link moved to /a for good; /a's own temporary redirect is
			// not the link's business.
			name: "PermanentThenTemporary",
			setup: func(t *testing.T, s *server) string {
				s.handle("/t", redirect("/a", http.StatusMovedPermanently))
				s.handle("/a", redirect("/b", http.StatusFound))
				s.handle("/b", html200(page))
				return s.URL + "/t"
			},
			want: audit.VerdictMoved,
			check: func(t *testing.T, c audit.Check, s *server) {
				if c.Replacement != s.URL+"/a" {
					t.Errorf("replacement %q, want %q", c.Replacement, s.URL+"/a")
				}
			},
		},
		{
			name: "TemporaryThenPermanent",
			setup: func(t *testing.T, s *server) string {
				s.handle("/t", redirect("/a", http.StatusFound))
				s.handle("/a", redirect("/b", http.StatusMovedPermanently))
				s.handle("/b", html200(page))
				return s.URL + "/t"
			},
			want: audit.VerdictRedirected,
		},
		{name: "NotFound", setup: status(404), want: audit.VerdictNotFound},
		{name: "Gone", setup: status(410), want: audit.VerdictGone},
		{name: "BadRequest", setup: status(400), want: audit.VerdictClientError},
		{name: "Unauthorized", setup: status(401), want: audit.VerdictBlocked},
		{name: "Forbidden", setup: status(403), want: audit.VerdictBlocked},
		{name: "LinkedIn999", setup: status(999), want: audit.VerdictBlocked},
		{
			name: "CloudflareChallenge503",
			setup: func(t *testing.T, s *server) string {
				s.handle("/t", func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Cf-Mitigated", "challenge")
					w.Header().Set("Content-Type", "text/html")
					w.WriteHeader(503)
					w.Write([]byte("<title>Just a moment...</title>"))
				})
				return s.URL + "/t"
			},
			want: audit.VerdictBlocked,
			check: func(t *testing.T, c audit.Check, s *server) {
				if c.Attempts != 1 || !strings.Contains(c.Reason, "cf-mitigated") {
					t.Errorf("attempts %d reason %q: want 1 attempt (a challenge is not retried), cf-mitigated", c.Attempts, c.Reason)
				}
			},
		},
		{
			name: "ChallengeBody403",
			setup: func(t *testing.T, s *server) string {
				s.handle("/t", func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "text/html")
					w.WriteHeader(403)
					w.Write([]byte("<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>Checking your browser</body></html>"))
				})
				return s.URL + "/t"
			},
			want: audit.VerdictBlocked,
			check: func(t *testing.T, c audit.Check, s *server) {
				if !strings.Contains(c.Reason, "Just a moment") {
					t.Errorf("reason %q", c.Reason)
				}
			},
		},
		{
			name: "RateLimitedThenOK",
			setup: func(t *testing.T, s *server) string {
				var n atomic.Int64
				s.handle("/t", func(w http.ResponseWriter, r *http.Request) {
					if n.Add(1) == 1 {
						w.Header().Set("Retry-After", "0")
						w.WriteHeader(429)
						return
					}
					w.Header().Set("Content-Type", "image/png")
				})
				return s.URL + "/t"
			},
			want: audit.VerdictOK,
			check: func(t *testing.T, c audit.Check, s *server) {
				if c.Attempts != 2 {
					t.Errorf("attempts %d, want 2", c.Attempts)
				}
			},
		},
		{
			name:  "RateLimitedForever",
			setup: status(429),
			want:  audit.VerdictRateLimited,
			check: func(t *testing.T, c audit.Check, s *server) {
				if c.Attempts != 3 {
					t.Errorf("attempts %d, want 3 (2 retries)", c.Attempts)
				}
			},
			// Two waits of at most MaxRetryWait (100ms), fast answers.
			maxTime: 2*100*time.Millisecond + time.Second,
		},
		{
			name: "ServerErrorThenOK",
			setup: func(t *testing.T, s *server) string {
				var n atomic.Int64
				s.handle("/t", func(w http.ResponseWriter, r *http.Request) {
					if n.Add(1) == 1 {
						w.WriteHeader(500)
						return
					}
					w.Header().Set("Content-Type", "application/pdf")
				})
				return s.URL + "/t"
			},
			want: audit.VerdictOK,
			check: func(t *testing.T, c audit.Check, s *server) {
				if c.Attempts != 2 {
					t.Errorf("attempts %d, want 2", c.Attempts)
				}
			},
		},
		{
			name:  "ServerErrorForever",
			setup: status(503),
			want:  audit.VerdictServerError,
			check: func(t *testing.T, c audit.Check, s *server) {
				if c.Attempts != 3 || c.Status != 503 {
					t.Errorf("attempts %d status %d, want 3, 503", c.Attempts, c.Status)
				}
			},
		},
		{
			name: "Timeout",
			setup: func(t *testing.T, s *server) string {
				s.handle("/t", func(w http.ResponseWriter, r *http.Request) {
					select {
					case <-r.Context().Done():
					case <-time.After(10 * time.Second):
					}
				})
				return s.URL + "/t"
			},
			opts: func(o *Options) { o.Timeout = 200 * time.Millisecond },
			want: audit.VerdictTimeout,
			check: func(t *testing.T, c audit.Check, s *server) {
				if c.Attempts != 3 || c.ErrorClass != "timeout" {
					t.Errorf("attempts %d class %q, want 3, timeout", c.Attempts, c.ErrorClass)
				}
			},
			maxTime: 3*200*time.Millisecond + 2*time.Second,
		},
		{
			name: "ConnectionRefused",
			setup: func(t *testing.T, s *server) string {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				addr := ln.Addr().String()
				ln.Close()
				return "http://" + addr + "/t"
			},
			want: audit.VerdictConnectionError,
			check: func(t *testing.T, c audit.Check, s *server) {
				if c.ErrorClass != "refused" || c.Attempts != 3 {
					t.Errorf("class %q attempts %d, want refused, 3", c.ErrorClass, c.Attempts)
				}
			},
		},
		{
			name: "ConnectionReset",
			setup: func(t *testing.T, s *server) string {
				s.handle("/t", func(w http.ResponseWriter, r *http.Request) {
					conn, _, err := http.NewResponseController(w).Hijack()
					if err != nil {
						t.Error(err)
						return
					}
					conn.(*net.TCPConn).SetLinger(0)
					conn.Close()
				})
				return s.URL + "/t"
			},
			want: audit.VerdictConnectionError,
			check: func(t *testing.T, c audit.Check, s *server) {
				if c.ErrorClass != "reset" && c.ErrorClass != "closed" {
					t.Errorf("class %q, want reset or closed", c.ErrorClass)
				}
				if c.Attempts != 3 {
					t.Errorf("attempts %d, want 3 (a reset is retried)", c.Attempts)
				}
			},
			// Retried twice after at most MaxRetryWait (100ms) each; no
			// attempt waits for its Timeout.
			maxTime: 2*100*time.Millisecond + time.Second,
		},
		{
			name: "TLSError",
			setup: func(t *testing.T, s *server) string {
				ts := httptest.NewUnstartedServer(html200(page))
				ts.Config.ErrorLog = log.New(io.Discard, "", 0)
				ts.StartTLS()
				t.Cleanup(ts.Close)
				return ts.URL + "/t"
			},
			want: audit.VerdictTLSError,
			check: func(t *testing.T, c audit.Check, s *server) {
				if c.ErrorClass != "tls" || c.Attempts != 1 {
					t.Errorf("class %q attempts %d, want tls, 1 (not retried)", c.ErrorClass, c.Attempts)
				}
			},
		},
		{
			name: "TLSToPlainServer",
			setup: func(t *testing.T, s *server) string {
				return strings.Replace(s.URL, "http://", "https://", 1) + "/t"
			},
			want: audit.VerdictTLSError,
		},
		{
			name:  "DNSError",
			setup: func(t *testing.T, s *server) string { return "http://nonexistent.invalid/t" },
			want:  audit.VerdictDNSError,
			check: func(t *testing.T, c audit.Check, s *server) {
				if c.ErrorClass != "dns" || c.Attempts != 1 {
					t.Errorf("class %q attempts %d, want dns, 1", c.ErrorClass, c.Attempts)
				}
			},
		},
		{
			name: "TooManyRedirects",
			setup: func(t *testing.T, s *server) string {
				for i := range 20 {
					s.handle(fmt.Sprintf("/r/%d", i), redirect(fmt.Sprintf("/r/%d", i+1), http.StatusFound))
				}
				s.handle("/r/20", html200(page))
				return s.URL + "/r/0"
			},
			want: audit.VerdictTooManyRedirects,
			check: func(t *testing.T, c audit.Check, s *server) {
				if len(c.Redirects) != 11 || s.requests.Load() != 11 {
					t.Errorf("%d redirects, %d requests; want 11 and 11", len(c.Redirects), s.requests.Load())
				}
			},
			// MaxRedirects+1 fast requests: far below one Timeout (2s).
			maxTime: time.Second,
		},
		{
			name: "RedirectLoop",
			setup: func(t *testing.T, s *server) string {
				s.handle("/a", redirect("/b", http.StatusFound))
				s.handle("/b", redirect("/a", http.StatusMovedPermanently))
				return s.URL + "/a"
			},
			want: audit.VerdictRedirectLoop,
			check: func(t *testing.T, c audit.Check, s *server) {
				if len(c.Redirects) != 2 || s.requests.Load() != 2 {
					t.Errorf("%d redirects, %d requests; want 2, 2 (stopped at the repeat)", len(c.Redirects), s.requests.Load())
				}
			},
			maxTime: time.Second,
		},
		{
			// A site that sets a cookie and redirects to itself is not a loop.
			name: "CookieRedirectIsNotALoop",
			setup: func(t *testing.T, s *server) string {
				s.handle("/t", func(w http.ResponseWriter, r *http.Request) {
					if _, err := r.Cookie("consent"); err != nil {
						http.SetCookie(w, &http.Cookie{Name: "consent", Value: "1", Path: "/"})
						http.Redirect(w, r, "/t", http.StatusFound)
						return
					}
					w.Header().Set("Content-Type", "text/plain")
				})
				return s.URL + "/t"
			},
			want: audit.VerdictRedirected,
		},
		{
			name:  "TricklingBody",
			setup: trickle,
			opts: func(o *Options) {
				o.Timeout = 300 * time.Millisecond
				o.Retries = -1
			},
			want: audit.VerdictTimeout,
			check: func(t *testing.T, c audit.Check, s *server) {
				if c.Status != 200 || c.Attempts != 1 {
					t.Errorf("status %d attempts %d, want 200, 1", c.Status, c.Attempts)
				}
			},
			maxTime: 300*time.Millisecond + 2*time.Second,
		},
		{
			name: "RedirectToMetadataRefused",
			setup: func(t *testing.T, s *server) string {
				s.handle("/t", redirect("http://169.254.169.254/latest/meta-data/", http.StatusFound))
				return s.URL + "/t"
			},
			want: audit.VerdictRefused,
			check: func(t *testing.T, c audit.Check, s *server) {
				if len(c.Redirects) != 1 || c.ErrorClass != "policy" || c.Attempts != 2 {
					t.Errorf("redirects %v class %q attempts %d", c.Redirects, c.ErrorClass, c.Attempts)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t)
			target := tt.setup(t, s)
			o := testOptions()
			if tt.opts != nil {
				tt.opts(&o)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			c := New(o).CheckOne(context.Background(), Target{ID: 1, URL: target})
			elapsed := time.Since(start)
			runtime.ReadMemStats(&after)
			if c.Verdict != tt.want {
				t.Fatalf("verdict %q (reason %q, status %d, class %q), want %q", c.Verdict, c.Reason, c.Status, c.ErrorClass, tt.want)
			}
			if c.URL != target || c.TargetID != 1 {
				t.Errorf("URL %q ID %d", c.URL, c.TargetID)
			}
			maxTime := tt.maxTime
			if maxTime == 0 {
				no := New(o).o // defaults filled in
				maxTime = time.Duration(no.Retries+1)*no.Timeout + time.Duration(no.Retries)*no.MaxRetryWait
			}
			if elapsed > maxTime {
				t.Errorf("took %v, want at most %v", elapsed, maxTime)
			}
			// Memory: whatever the server does, a check allocates about
			// one capped body, not what the server sends.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > maxCheckAlloc {
				t.Errorf("allocated %d bytes, want at most %d", alloc, maxCheckAlloc)
			}
			if tt.check != nil {
				tt.check(t, c, s)
			}
		})
	}
}

// maxCheckAlloc bounds the bytes one CheckOne of the verdict table may
// allocate (the default MaxBody is 2 MiB).
const maxCheckAlloc = 8 << 20

// status serves the status at /t.
func status(code int) func(t *testing.T, s *server) string {
	return func(t *testing.T, s *server) string {
		s.handle("/t", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(code) })
		return s.URL + "/t"
	}
}

// trickle serves an HTML body that never ends, one byte every 20ms.
func trickle(t *testing.T, s *server) string {
	s.handle("/t", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		rc := http.NewResponseController(w)
		for {
			if _, err := w.Write([]byte("a")); err != nil {
				return
			}
			rc.Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
	return s.URL + "/t"
}

func TestCheckOne_Skipped(t *testing.T) {
	s := newServer(t)
	s.handle("/", html200(page))
	o := testOptions()
	o.Exclude = []*regexp.Regexp{regexp.MustCompile(`/private/`)}
	c := New(o)
	tests := []struct{ url, reason string }{
		{"mailto:someone@example.org", "mailto: URL, not fetched"},
		{"tel:+15551234", "tel: URL, not fetched"},
		{"javascript:alert(1)", "javascript: URL, not fetched"},
		{"data:text/html,<p>x</p>", "data: URL, not fetched"},
		{"ftp://example.org/file", `unsupported scheme "ftp"`},
		{"/relative", "relative URL"},
		{s.URL + "/private/x", "excluded by pattern /private/"},
		// Invalid for the WHATWG parser (browsers read "http:///nohost"
		// as http://nohost/, which is fetched): the reason is the
		// parser's.
		{"http:///", "invalid URL: The input has a special scheme, but does not contain a host"},
		{"http://example.org:99999/", "invalid URL: The input's port is outside the range [0-65535]"},
		{"http://[::1", "invalid URL: An IPv6 address is missing the closing U+005D (])"},
	}
	for _, tt := range tests {
		got := c.CheckOne(context.Background(), Target{URL: tt.url})
		if got.Verdict != audit.VerdictSkipped || got.Reason != tt.reason {
			t.Errorf("CheckOne(%q) = %q %q, want skipped %q", tt.url, got.Verdict, got.Reason, tt.reason)
		}
	}
	if n := s.requests.Load(); n != 0 {
		t.Errorf("%d requests, want none", n)
	}
}

func TestCheckOne_Refused(t *testing.T) {
	s := newServer(t)
	s.handle("/", html200(page))
	tests := []struct {
		name         string
		url          string
		allowPrivate bool
		resolver     fakeResolver
	}{
		{"Metadata", "http://169.254.169.254/latest/meta-data/", true, nil},
		{"LoopbackWithoutAllowPrivate", s.URL + "/", false, nil},
		{"NameResolvingToPrivate", "http://intranet.example/", false, fakeResolver{"intranet.example": {"10.1.2.3"}}},
		{"NameResolvingToMappedMetadata", "http://evil.example/", true, fakeResolver{"evil.example": {"::ffff:169.254.169.254"}}},
		{"OneBadAddressAmongGood", "http://mixed.example/", false, fakeResolver{"mixed.example": {"93.184.215.14", "127.0.0.1"}}},
		{"Unspecified", "http://0.0.0.0:" + s.URL[strings.LastIndex(s.URL, ":")+1:] + "/", true, nil},
		{"IPv6LinkLocal", "http://[fe80::1]/", true, nil},
		{"Localhost", "http://localhost/", false, fakeResolver{"localhost": {"127.0.0.1", "::1"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := testOptions()
			o.AllowPrivate = tt.allowPrivate
			if tt.resolver != nil {
				o.Resolver = tt.resolver
			}
			got, rs := New(o).checkOne(context.Background(), Target{URL: tt.url})
			if got.Verdict != audit.VerdictRefused || got.ErrorClass != "policy" {
				t.Fatalf("verdict %q class %q reason %q, want refused", got.Verdict, got.ErrorClass, got.Reason)
			}
			if n := rs.guard.Dials(); n != 0 {
				t.Errorf("%d connection attempts, want none", n)
			}
		})
	}
	if n := s.conns.Load(); n != 0 {
		t.Errorf("server saw %d connections, want none", n)
	}
}

func TestCheckOne_HugeBodies(t *testing.T) {
	const size = 50 << 20
	const maxBody = 256 << 10
	for _, ct := range []string{"text/html", "application/octet-stream"} {
		t.Run(ct, func(t *testing.T) {
			s := newServer(t)
			var written atomic.Int64
			s.handle("/t", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", ct)
				w.Header().Set("Content-Length", fmt.Sprint(size))
				chunk := []byte(strings.Repeat("<p>word</p>", 3000))
				for written.Load() < size {
					n, err := w.Write(chunk)
					written.Add(int64(n))
					if err != nil {
						return
					}
				}
			})
			o := testOptions()
			o.MaxBody = maxBody
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			c := New(o).CheckOne(context.Background(), Target{URL: s.URL + "/t"})
			elapsed := time.Since(start)
			runtime.ReadMemStats(&after)
			s.Close() // wait for the handler
			// Time: the body is cut at MaxBody, not read to its end, and
			// the soft-404 probe is answered at once: well within one
			// attempt's Timeout.
			if elapsed > o.Timeout {
				t.Errorf("took %v, want under the %v Timeout", elapsed, o.Timeout)
			}
			// Memory: proportional to MaxBody, not to the 50 MB the server
			// sends. The HTML parse of the capped body dominates: about 55
			// bytes allocated (mostly garbage) per byte of markup as dense
			// as this one's, a few per byte of ordinary text.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 100*maxBody {
				t.Errorf("allocated %d bytes for a %d-byte body with MaxBody %d", alloc, size, maxBody)
			}
			if c.Verdict != audit.VerdictOK {
				t.Fatalf("verdict %q (%s), want ok", c.Verdict, c.Reason)
			}
			if ct == "text/html" && (!c.Truncated || c.Words == 0) {
				t.Errorf("truncated %v words %d: want a truncated, fingerprinted body", c.Truncated, c.Words)
			}
			// Bytes read: one word per 11-byte "<p>word</p>", so the words
			// tell how much of the body was read: at most MaxBody.
			if max := maxBody/11 + 1; c.Words > max {
				t.Errorf("%d words: read about %d bytes, want at most MaxBody (%d)", c.Words, 11*c.Words, maxBody)
			}
			if ct != "text/html" && (c.Truncated || c.SHA256 != "") {
				t.Errorf("non-HTML body was read")
			}
			// Socket buffers let the server write some megabytes more than
			// was read, not the whole body.
			if n := written.Load(); n >= size/2 {
				t.Errorf("server wrote %d of %d bytes: the body was not closed early", n, size)
			}
		})
	}
}

func TestCheckOne_Fingerprint(t *testing.T) {
	s := newServer(t)
	s.handle("/page", html200(page))
	s.handle("/image", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n not really"))
	})
	s.handle("/sniffed", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil // no Content-Type: sniffed
		w.Write([]byte(page))
	})
	c := New(testOptions())
	sum := sha256.Sum256([]byte(page))
	words := textsim.Words(textsim.MainText([]byte(page)))
	for _, path := range []string{"/page", "/sniffed"} {
		got := c.CheckOne(context.Background(), Target{URL: s.URL + path})
		if got.SHA256 != hex.EncodeToString(sum[:]) || got.SimHash != textsim.SimHash(words) || got.Words != len(words) || got.Words == 0 {
			t.Errorf("%s: sha256 %q simhash %#x words %d; want %x %#x %d", path, got.SHA256, got.SimHash, got.Words, sum, textsim.SimHash(words), len(words))
		}
	}
	got := c.CheckOne(context.Background(), Target{URL: s.URL + "/image"})
	if got.Verdict != audit.VerdictOK || got.SHA256 != "" || got.SimHash != 0 || got.Words != 0 || got.Soft404 != nil {
		t.Errorf("image: %+v; want ok without fingerprint or probe", got)
	}
}

func TestCheckOne_Charset(t *testing.T) {
	s := newServer(t)
	s.handle("/t", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=windows-1252")
		w.Write([]byte("<p>caf\xe9 cr\xe8me br\xfbl\xe9e</p>"))
	})
	got := New(testOptions()).CheckOne(context.Background(), Target{URL: s.URL + "/t"})
	want := textsim.SimHash([]string{"café", "crème", "brûlée"})
	if got.SimHash != want || got.Words != 3 {
		t.Errorf("simhash %#x words %d, want %#x 3 (decoded from windows-1252)", got.SimHash, got.Words, want)
	}
}

func TestCheckOne_Anchors(t *testing.T) {
	s := newServer(t)
	s.handle("/t", html200(`<h1 id="top">T</h1><a name="legacy"></a><input name="q"><p id="top">dup</p><div id="">empty</div><section id="s&amp;1">`))
	c := New(testOptions())
	got := c.CheckOne(context.Background(), Target{URL: s.URL + "/t", WantAnchors: true})
	if want := []string{"top", "legacy", "s&1"}; fmt.Sprint(got.Anchors) != fmt.Sprint(want) {
		t.Errorf("anchors %q, want %q", got.Anchors, want)
	}
	if got := c.CheckOne(context.Background(), Target{URL: s.URL + "/t"}); got.Anchors != nil {
		t.Errorf("anchors %q without WantAnchors", got.Anchors)
	}
	many := strings.Repeat(`<p id="x">`, 1) + func() string {
		var b strings.Builder
		for i := range maxAnchors + 100 {
			fmt.Fprintf(&b, `<i id="a%d">`, i)
		}
		return b.String()
	}()
	if n := len(anchors([]byte(many), maxAnchors)); n != maxAnchors {
		t.Errorf("%d anchors, want the cap %d", n, maxAnchors)
	}
}
