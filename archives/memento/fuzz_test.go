package memento

import (
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// The parsers of this package read what archives and crawled pages say:
// hostile input. They must never panic, and what they accept must be
// consistent.

func FuzzParseDatetime(f *testing.F) {
	for _, s := range []string{"Wed, 30 May 2007 18:47:52 GMT", "Tue, 11 Sep 2001 20:36:26 GMT", "Mon, 30 May 2007 18:47:52 GMT",
		"", " GMT", "Wed, 30 May 2007 18:47:52 +0000", "Wed, 99 May 2007 18:47:52 GMT", "Wed,30 May 2007 18:47:52 GMT"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseDatetime(s)
		if err != nil {
			return
		}
		if got.Location() != time.UTC {
			t.Fatalf("ParseDatetime(%q) not in UTC", s)
		}
		// Accepted values round-trip exactly.
		again, err := ParseDatetime(FormatDatetime(got))
		if err != nil || !again.Equal(got) {
			t.Fatalf("round trip of %q: %v, %v", s, again, err)
		}
	})
}

func FuzzParseWaybackURL(f *testing.F) {
	for _, s := range []string{
		"https://web.archive.org/web/20170204063743id_/http://example.org/",
		"http://127.0.0.1:1/web/2017/http://e.org/a?b=/web/1/http://x/",
		"https://web.archive.org/web/http://example.org/",
		"https://web.archive.org/web/20170204063743cm1_/mailto:x@y",
		"://web/1/a:", "http:///web/1//:",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, ok := ParseWaybackURL(s)
		if !ok {
			if RawURL(s) != s {
				t.Fatalf("RawURL changed a non-Wayback URL %q", s)
			}
			return
		}
		if w.String() != s {
			t.Fatalf("String() = %q, want %q", w.String(), s)
		}
		if len(w.Timestamp) < 1 || len(w.Timestamp) > 14 || !allDigits(w.Timestamp) || !validFlags(w.Flags) {
			t.Fatalf("bad parts of %q: %+v", s, w)
		}
		raw := RawURL(s)
		rw, ok := ParseWaybackURL(raw)
		if !ok || rw.Flags != "id_" || rw.Original != w.Original || rw.Timestamp != w.Timestamp {
			t.Fatalf("RawURL(%q) = %q parses as %+v, %v", s, raw, rw, ok)
		}
	})
}

func FuzzExpandTemplate(f *testing.F) {
	f.Add("https://web.archive.org/web/{timestamp}{raw}/{item}", "20221127183321", "part", "https://www.iana.org/")
	f.Add("http://a/{timestamp}/{item}", "1", "page", "x")
	f.Add("http://{item}/{timestamp}", "", "", "@evil.example")
	f.Add("https://a/{timestamp}{raw}{raw}/{item}?{item}", "20200101000000", "PART", "http://e/?q=1#f")
	f.Fuzz(func(t *testing.T, tmpl, ts, spec, item string) {
		out, err := expandTemplate(tmpl, ts, spec, item)
		if err != nil {
			return
		}
		u, perr := url.Parse(out)
		if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			t.Fatalf("expandTemplate(%q, %q, %q, %q) = %q: not an absolute http(s) URL", tmpl, ts, spec, item, out)
		}
		if i := strings.Index(tmpl, "/{"); i > 0 && strings.Count(tmpl[:i], "/") >= 2 && !strings.Contains(tmpl[:i], "{") {
			tu, _ := url.Parse(tmpl[:i])
			if tu != nil && tu.Host != "" && !strings.EqualFold(tu.Host, u.Host) {
				t.Fatalf("expandTemplate(%q, ..., item %q) = %q: host moved", tmpl, item, out)
			}
		}
		if strings.Contains(out, "{timestamp}") && !strings.Contains(ts+item, "{timestamp}") {
			t.Fatalf("placeholder left in %q", out)
		}
	})
}

func FuzzParseTimeMap(f *testing.F) {
	f.Add(`<http://a.example.org>;rel="original",
<http://arxiv.example.net/web/20000620180259/http://a.example.org>
  ; rel="first memento";datetime="Tue, 20 Jun 2000 18:02:59 GMT",
<http://arxiv.example.net/timemap/2>; rel="timemap"; type="application/link-format"`)
	f.Add(`<x>; rel="memento"; datetime="Tue, 20 Jun 2000 18:02:59 GMT", <y>; rel="memento self"`)
	f.Add("<\x00>;rel=memento;datetime=\"\\\"")
	base, _ := url.Parse("http://archive.example/timemap/link/http://e/")
	f.Fuzz(func(t *testing.T, body string) {
		li := ParseTimeMap(body, base)
		for _, m := range li.Mementos {
			if m.Datetime.IsZero() || m.Datetime.Location() != time.UTC {
				t.Fatalf("memento without a UTC datetime: %+v", m)
			}
		}
		if len(li.Mementos)+li.BadDatetimes > len(body) {
			t.Fatalf("%d mementos from %d bytes", len(li.Mementos), len(body))
		}
		if utf8.ValidString(body) && !utf8.ValidString(li.Original) {
			t.Fatalf("invalid UTF-8 original from valid input")
		}
	})
}
