package archives

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/linkrot/linkrot/archives/archivetest"
	"github.com/linkrot/linkrot/archives/memento"
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/httpx"
)

func TestJudgeSnapshot(t *testing.T) {
	dt := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		m    *memento.MementoResponse
		err  error
		want audit.SnapshotVerdict
		why  string
	}{
		{"Memento", &memento.MementoResponse{Status: 200, Datetime: dt}, nil, audit.SnapshotOK, ""},
		{"NoDatetime", &memento.MementoResponse{Status: 200}, nil, audit.NotAMemento, "without Memento-Datetime"},
		{"BadDatetime", &memento.MementoResponse{Status: 200, DatetimeError: "datetime \"x\": not an RFC 1123 date in GMT"}, nil, audit.NotAMemento, "invalid Memento-Datetime"},
		{"NotFound", &memento.MementoResponse{Status: 404}, nil, audit.SnapshotMissing, "no such memento"},
		{"Gone", &memento.MementoResponse{Status: 410}, nil, audit.SnapshotMissing, ""},
		{"ArchivedNotFound", &memento.MementoResponse{Status: 404, Datetime: dt}, nil, audit.SnapshotMissing, "archived error page"},
		{"ServerError", &memento.MementoResponse{Status: 503}, nil, audit.SnapshotError, "503"},
		{"RateLimited", &memento.MementoResponse{Status: 429}, nil, audit.SnapshotError, "rate limited"},
		{"Forbidden", &memento.MementoResponse{Status: 403}, nil, audit.SnapshotError, "status 403"},
		{"Timeout", nil, &memento.Error{Op: "memento", URL: "u", Class: "timeout", Err: context.DeadlineExceeded}, audit.SnapshotError, "deadline"},
		{"NoMemento", nil, &memento.Error{Op: "memento", URL: "u", Class: "no-memento", Err: memento.ErrNoMemento}, audit.SnapshotMissing, "no memento"},
		{"LeftArchiveNoDatetime", &memento.MementoResponse{Status: 302, Stop: "redirect leaves the archive to http://live/"}, nil, audit.NotAMemento, "leaves the archive"},
		{"ArchivedRedirect", &memento.MementoResponse{Status: 302, Datetime: dt, Stop: "redirect leaves the archive to http://live/"}, nil, audit.SnapshotOK, "memento of a redirect"},
		{"Loop", &memento.MementoResponse{Status: 302, Stop: "redirect loop at http://a/"}, nil, audit.SnapshotError, "loop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sc audit.SnapshotCheck
			judgeSnapshot(&sc, tt.m, tt.err)
			if sc.Verdict != tt.want || !strings.Contains(sc.Reason, tt.why) {
				t.Errorf("verdict %s (%q), want %s containing %q", sc.Verdict, sc.Reason, tt.want, tt.why)
			}
		})
	}
}

func TestCompareSnapshot(t *testing.T) {
	md := time.Date(2024, 3, 1, 23, 59, 59, 0, time.UTC)
	link := &stageLink{Link: audit.Link{Href: "https://e.org/a", Robust: &audit.Robust{
		OriginalURL: "https://e.org/a", VersionDate: audit.NewTime(time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)), VersionDateOnly: true}}}
	tests := []struct {
		name     string
		d        declared
		original string
		mismatch bool
		other    bool
	}{
		// Date-only: the same UTC day matches whatever the time.
		{"SameDay", declared{link: link, at: time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC), dateOnly: true}, "http://e.org/a", false, false},
		{"OtherDay", declared{link: link, at: time.Date(2024, 3, 2, 12, 0, 0, 0, time.UTC), dateOnly: true}, "https://e.org/a", true, false},
		// Datetimes: exact.
		{"ExactSecond", declared{link: link, at: md}, "https://e.org/a", false, false},
		{"OneSecondOff", declared{link: link, at: md.Add(-time.Second)}, "https://e.org/a", true, false},
		// The memento is of another resource (normalised: case of the host
		// and default port do not count).
		{"SameOriginalNormalized", declared{link: link}, "HTTPS://E.ORG:443/a", false, false},
		{"OtherOriginal", declared{link: link}, "https://e.org/b", false, true},
		{"NoDeclaredTime", declared{link: link}, "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := audit.SnapshotCheck{}
			compareSnapshot(&sc, tt.d, &memento.MementoResponse{Status: 200, Datetime: md, Original: tt.original})
			if sc.DatetimeMismatch != tt.mismatch || sc.OriginalMismatch != tt.other {
				t.Errorf("mismatch %v, other original %v (%s)", sc.DatetimeMismatch, sc.OriginalMismatch, sc.Reason)
			}
			if want := md.Sub(link.Link.Robust.VersionDate.Time); sc.VersionDateDelta != want {
				t.Errorf("versiondate delta %v, want %v", sc.VersionDateDelta, want)
			}
		})
	}
}

func TestRobustHTML(t *testing.T) {
	at := time.Date(2024, 11, 20, 16, 43, 33, 0, time.UTC)
	got := robustHTML(`https://e.org/?a=1&b="x"`, "https://e.org/", at, true, "https://web.archive.org/web/20241121100333/https://e.org/",
		time.Date(2024, 11, 21, 10, 3, 33, 0, time.UTC), `<b>bold</b> & "quoted"`)
	want := `<a href="https://e.org/?a=1&amp;b=&#34;x&#34;" data-originalurl="https://e.org/" data-versiondate="2024-11-20" ` +
		`data-versionurl="https://web.archive.org/web/20241121100333/https://e.org/ 2024-11-21T10:03:33Z">&lt;b&gt;bold&lt;/b&gt; &amp; &#34;quoted&#34;</a>`
	if got != want {
		t.Errorf("robustHTML =\n%s\nwant\n%s", got, want)
	}
	got = robustHTML("https://e.org/", "https://e.org/", at, false, "", time.Time{}, "")
	if got != `<a href="https://e.org/" data-originalurl="https://e.org/" data-versiondate="2024-11-20T16:43:33Z">https://e.org/</a>` {
		t.Errorf("robustHTML without memento = %s", got)
	}
}

// TestRun_Cancelled: a cancelled context stops the stage at once, with its
// goroutines gone; nothing is emitted after Run returns.
func TestRun_Cancelled(t *testing.T) {
	fa := archivetest.New(t, archivetest.Options{})
	cfg := fa.Config("slowpoke", 1) // one request a minute
	rt, done := httpx.NewTransport(httpx.Options{AllowPrivate: true})
	defer done()
	client := memento.NewClient(memento.Options{Archives: []memento.Archive{cfg}, Transport: rt})
	var links []stageLink
	for i := range 20 {
		u := fmt.Sprintf("https://e.example/%d", i)
		links = append(links, stageLink{ID: int64(i + 1), PageURL: "https://site.example/", TargetID: int64(i + 1), TargetURL: u,
			Link: audit.Link{Element: "a", Href: u, Robust: &audit.Robust{OriginalURL: u, VersionDate: audit.NewTime(time.Now())}}})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	var emitted int
	_, err := runStage(ctx, Options{Client: client, Workers: 4}, stageInput{RunID: 1, Links: links}, stageSink{Memento: func(audit.Memento) { emitted++ }})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Run = %v, want deadline exceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Run took %v after cancellation", d)
	}
	if emitted != 0 {
		t.Errorf("%d mementos emitted from an interrupted lookup phase", emitted)
	}
}

// TestLookup_PrivateNotLeaked: a loopback or intranet URL is never sent to
// a public archive (it cannot be there, and asking leaks it), while a
// loopback archive (a local MemGator, the test fixture) is asked.
func TestLookup_PrivateNotLeaked(t *testing.T) {
	public := memento.Archive{Name: "ia", TimeGate: "https://web.archive.org/web/"}
	// Any request at all fails the test: nothing may leave the machine.
	noNetwork := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		t.Errorf("request sent: %s %s", r.Method, r.URL)
		return nil, errors.New("no network in this test")
	})
	s := &stage{o: Options{Client: memento.NewClient(memento.Options{Archives: []memento.Archive{public}, Transport: noNetwork}), Now: time.Now}}
	for _, u := range []string{"http://127.0.0.1:8080/a", "http://10.1.2.3/x", "http://[::1]/", "http://intranet.localhost/"} {
		res := s.lookup(context.Background(), public, want{uriR: u, at: time.Now(), from: "first-seen"})
		if !res.skipped || res.found || !strings.Contains(res.memento.Error, "not asked") {
			t.Errorf("%s: lookup = %+v", u, res)
		}
	}
	for h, want := range map[string]bool{"localhost:80": true, "192.168.1.1": true, "[fe80::1]:443": true, "example.org": false, "8.8.8.8:53": false} {
		if got := localHost(h); got != want {
			t.Errorf("localHost(%q) = %v", h, got)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
