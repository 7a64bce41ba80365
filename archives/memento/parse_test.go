package memento

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
)

func TestParseDatetime(t *testing.T) {
	tests := []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"Wed, 30 May 2007 18:47:52 GMT", time.Date(2007, 5, 30, 18, 47, 52, 0, time.UTC), true},
		{"  Thu, 31 May 2007 20:35:00 GMT ", time.Date(2007, 5, 31, 20, 35, 0, 0, time.UTC), true},
		{"Tue, 11 Sep 2001 20:36:26 GMT", time.Date(2001, 9, 11, 20, 36, 26, 0, time.UTC), true},
		// Not RFC 1123 GMT: other zones, RFC 850, asctime, ISO 8601.
		{"Wed, 30 May 2007 18:47:52 +0000", time.Time{}, false},
		{"Wednesday, 30-May-07 18:47:52 GMT", time.Time{}, false},
		{"Wed May 30 18:47:52 2007", time.Time{}, false},
		{"2007-05-30T18:47:52Z", time.Time{}, false},
		// The weekday must match the date (30 May 2007 was a Wednesday).
		{"Mon, 30 May 2007 18:47:52 GMT", time.Time{}, false},
		{"Wed, 31 Feb 2007 18:47:52 GMT", time.Time{}, false},
		{"", time.Time{}, false},
	}
	for _, tt := range tests {
		got, err := ParseDatetime(tt.in)
		if (err == nil) != tt.ok || !got.Equal(tt.want) {
			t.Errorf("ParseDatetime(%q) = %v, %v; want %v ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
		if err == nil && FormatDatetime(got) != trimSpace(tt.in) {
			t.Errorf("FormatDatetime(ParseDatetime(%q)) = %q", tt.in, FormatDatetime(got))
		}
	}
}

func trimSpace(s string) string {
	for len(s) > 0 && s[0] == ' ' {
		s = s[1:]
	}
	for len(s) > 0 && s[len(s)-1] == ' ' {
		s = s[:len(s)-1]
	}
	return s
}

func TestTimestamp14(t *testing.T) {
	tm := time.Date(2017, 2, 4, 6, 37, 43, 0, time.UTC)
	if s := Timestamp14(tm); s != "20170204063743" {
		t.Errorf("Timestamp14 = %s", s)
	}
	if got, err := ParseTimestamp14("20170204063743"); err != nil || !got.Equal(tm) {
		t.Errorf("ParseTimestamp14 = %v, %v", got, err)
	}
	for _, bad := range []string{"2017", "2017020406374", "2017020406374x", "20171304063743", "201702040637430"} {
		if _, err := ParseTimestamp14(bad); err == nil {
			t.Errorf("ParseTimestamp14(%q) accepted", bad)
		}
	}
}

func TestParseWaybackURL(t *testing.T) {
	tests := []struct {
		in                      string
		ok                      bool
		prefix, ts, flags, orig string
	}{
		{"https://web.archive.org/web/20170204063743id_/http://example.org/", true, "https://web.archive.org/web/", "20170204063743", "id_", "http://example.org/"},
		{"https://web.archive.org/web/20241121100333/https://www.w3.org/", true, "https://web.archive.org/web/", "20241121100333", "", "https://www.w3.org/"},
		// Partial timestamps and other replay modes.
		{"http://127.0.0.1:8080/web/2017/http://example.org/a?b=c", true, "http://127.0.0.1:8080/web/", "2017", "", "http://example.org/a?b=c"},
		{"https://web.archive.org/web/20170204063743im_/http://example.org/x.png", true, "https://web.archive.org/web/", "20170204063743", "im_", "http://example.org/x.png"},
		// An original that holds /web/ again: the first one counts.
		{"https://web.archive.org/web/20170204063743/https://example.org/web/20200101000000/x", true, "https://web.archive.org/web/", "20170204063743", "", "https://example.org/web/20200101000000/x"},
		// Not Wayback replay URLs.
		{"https://web.archive.org/web/http://example.org/", false, "", "", "", ""},                 // a TimeGate
		{"https://web.archive.org/web/123456789012345/http://example.org/", false, "", "", "", ""}, // 15 digits
		{"https://web.archive.org/web/2017XX_/http://example.org/", false, "", "", "", ""},
		{"https://web.archive.org/web/2017/example.org/", false, "", "", "", ""}, // no scheme
		{"https://perma.cc/7YXW-UFQ3", false, "", "", "", ""},
		{"https://example.org/?q=/web/2017/http://x/", false, "", "", "", ""},
		{"no scheme /web/2017/http://x/", false, "", "", "", ""},
	}
	for _, tt := range tests {
		w, ok := ParseWaybackURL(tt.in)
		if ok != tt.ok || ok && (w.Prefix != tt.prefix || w.Timestamp != tt.ts || w.Flags != tt.flags || w.Original != tt.orig) {
			t.Errorf("ParseWaybackURL(%q) = %+v, %v", tt.in, w, ok)
		}
		if ok && w.String() != tt.in {
			t.Errorf("String() = %q, want %q", w.String(), tt.in)
		}
	}
}

func TestRawURL(t *testing.T) {
	tests := map[string]string{
		"https://web.archive.org/web/20170204063743/http://example.org/":    "https://web.archive.org/web/20170204063743id_/http://example.org/",
		"https://web.archive.org/web/20170204063743if_/http://example.org/": "https://web.archive.org/web/20170204063743id_/http://example.org/",
		"https://web.archive.org/web/20170204063743id_/http://example.org/": "https://web.archive.org/web/20170204063743id_/http://example.org/",
		"https://perma.cc/7YXW-UFQ3":                                        "https://perma.cc/7YXW-UFQ3",
	}
	for in, want := range tests {
		if got := RawURL(in); got != want {
			t.Errorf("RawURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseArchive(t *testing.T) {
	a, err := ParseArchive("local=http://127.0.0.1:8080/web/,timemap=http://127.0.0.1:8080/timemap/link/,rate=120/min,save=http://127.0.0.1:8080/save")
	if err != nil {
		t.Fatal(err)
	}
	if a.Name != "local" || a.TimeGate != "http://127.0.0.1:8080/web/" || a.TimeMap != "http://127.0.0.1:8080/timemap/link/" || a.Rate != 120 || a.Save == "" {
		t.Errorf("ParseArchive = %+v", a)
	}
	if got := a.TimeGateURL("http://example.org/a?b"); got != "http://127.0.0.1:8080/web/http://example.org/a?b" {
		t.Errorf("TimeGateURL = %q", got)
	}
	tmpl := Archive{Name: "t", TimeGate: "https://tg.example/x?url={url}"}
	if got := tmpl.TimeGateURL("http://e/"); got != "https://tg.example/x?url=http://e/" {
		t.Errorf("template TimeGateURL = %q", got)
	}
	ia, err := ParseArchive("ia,rate=2/s")
	if err != nil || ia.TimeGate != "https://web.archive.org/web/" || ia.Rate != 120 {
		t.Errorf("ParseArchive(ia,rate=2/s) = %+v, %v", ia, err)
	}
	for _, bad := range []string{"", "nope", "x=ftp://a/", "x=http://a/,rate=0", "x=http://a/,rate=fast", "x=http://a/,color=red",
		"bad name=http://a/", "x=http://a/,timemap=relative/", "x=/relative"} {
		if _, err := ParseArchive(bad); err == nil {
			t.Errorf("ParseArchive(%q) accepted", bad)
		}
	}
	for _, d := range Defaults() {
		if err := d.Validate(); err != nil {
			t.Errorf("default %s: %v", d.Name, err)
		}
	}
}

func TestParseRate(t *testing.T) {
	for in, want := range map[string]float64{"60/min": 60, "2/s": 120, "30": 30, "0.5/min": 0.5, "6000/m": 6000} {
		if got, err := ParseRate(in); err != nil || got != want {
			t.Errorf("ParseRate(%q) = %v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "-1", "0/min", "x/s", "1e9"} {
		if _, err := ParseRate(bad); err == nil {
			t.Errorf("ParseRate(%q) accepted", bad)
		}
	}
}

func TestRegistry(t *testing.T) {
	reg := DefaultRegistry()
	at := audit.NewTime(time.Date(2022, 11, 27, 18, 33, 21, 0, time.UTC))
	// The ONB resolver's documented pairs.
	got, err := reg.Resolve(audit.PWID{Raw: "urn:pwid:archive.org:…", ArchiveID: "archive.org", Datetime: at, ContentSpec: "page", Item: "https://www.iana.org/assignments/urn-formal/pwid"})
	if err != nil || got != "https://web.archive.org/web/20221127183321/https://www.iana.org/assignments/urn-formal/pwid" {
		t.Errorf("Resolve(archive.org page) = %q, %v", got, err)
	}
	onb := audit.NewTime(time.Date(2013, 12, 3, 17, 3, 3, 0, time.UTC))
	got, err = reg.Resolve(audit.PWID{ArchiveID: "WebArchiv.ONB.ac.at", Datetime: onb, ContentSpec: "page", Item: "http://m.onb.ac.at/prunksaal.htm"})
	if err != nil || got != "https://webarchiv.onb.ac.at/web/20131203170303/http://m.onb.ac.at/prunksaal.htm" {
		t.Errorf("Resolve(onb) = %q, %v", got, err)
	}
	// "part" is the item's own bytes: raw replay.
	got, err = reg.Resolve(audit.PWID{ArchiveID: "archive.org", Datetime: at, ContentSpec: "part", Item: "http://e.org/a.png"})
	if err != nil || got != "https://web.archive.org/web/20221127183321id_/http://e.org/a.png" {
		t.Errorf("Resolve(part) = %q, %v", got, err)
	}
	if _, err := reg.Resolve(audit.PWID{ArchiveID: "elsewhere.example", Datetime: at, Item: "http://e.org/"}); !errors.Is(err, errUnknownArchive) {
		t.Errorf("unknown archive: %v", err)
	}
	if _, err := reg.Resolve(audit.PWID{ArchiveID: "archive.org", Item: "http://e.org/"}); err == nil {
		t.Error("pwid without time resolved")
	}
	id, tmpl, err := ParseRegistryEntry("Fixture.Archive=http://127.0.0.1:1/web/{timestamp}{raw}/{item}")
	if err != nil || id != "fixture.archive" || tmpl != "http://127.0.0.1:1/web/{timestamp}{raw}/{item}" {
		t.Errorf("ParseRegistryEntry = %q %q %v", id, tmpl, err)
	}
	for _, bad := range []string{"x", "=http://a/{timestamp}/{item}", "x=ftp://a/{timestamp}/{item}", "x=http://a/{timestamp}/{url}",
		"x=http://a/{item}", "x=http://a/{timestamp}/{item", "x=http://a/{timestamp}"} {
		if _, _, err := ParseRegistryEntry(bad); err == nil {
			t.Errorf("ParseRegistryEntry(%q) accepted", bad)
		}
	}
	// An item that makes the URL relative or foreign is refused.
	if _, err := expandTemplate("http://{item}/{timestamp}", "20200101000000", "", ""); err == nil {
		t.Error("template giving an URL without host accepted")
	}
}

// TestLimiter_Spacing: requests start at least one interval apart, in
// order, whatever the number of waiting goroutines.
func TestLimiter_Spacing(t *testing.T) {
	l := newLimiter(6000) // 10ms
	ctx := context.Background()
	starts := make(chan time.Time, 20)
	done := make(chan struct{})
	for range 20 {
		go func() {
			defer func() { done <- struct{}{} }()
			if err := l.Wait(ctx); err != nil {
				t.Error(err)
				return
			}
			starts <- time.Now()
		}()
	}
	for range 20 {
		<-done
	}
	close(starts)
	var ts []time.Time
	for s := range starts {
		ts = append(ts, s)
	}
	first, last := ts[0], ts[0]
	for _, s := range ts {
		if s.Before(first) {
			first = s
		}
		if s.After(last) {
			last = s
		}
	}
	// 20 starts 10ms apart span at least 190ms.
	if span := last.Sub(first); span < 185*time.Millisecond {
		t.Errorf("20 starts spanned %v, want >= 190ms", span)
	}
}

func TestLimiter_PauseAndCancel(t *testing.T) {
	l := newLimiter(60000)
	l.PauseUntil(time.Now().Add(80 * time.Millisecond))
	if l.PausedUntil().IsZero() {
		t.Error("PausedUntil zero during a pause")
	}
	start := time.Now()
	if err := l.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 75*time.Millisecond {
		t.Errorf("Wait returned after %v during an 80ms pause", d)
	}
	l.PauseUntil(time.Now().Add(time.Hour))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := l.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait under a long pause = %v, want deadline exceeded", err)
	}
}
