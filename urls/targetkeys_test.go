package urls

import (
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// targetKeyHrefs are hrefs as links carry them: resolved (the extractor
// writes an href it resolved in the parser's serialisation), with
// fragments, credentials, IDNs, invalid, of other schemes, blank, and
// pairs differing only in what CutFragment looks at.
var targetKeyHrefs = []string{
	"https://example.org/a/b.html",
	"https://example.org/a/b.html#sec",
	"https://example.org/a/b.html#other",
	"https://example.org/a/b.html#",
	"https://example.org/a/b.html?q=1#sec",
	"https://example.org/a/b.html?q=1",
	"https://example.org/a/b.html?#x",
	"https://example.org/a/../b.html#x",
	"https://Example.ORG:443/a#x",
	"http://example.org:80#x",
	"http://u:pw@example.org/x#y",
	"http://u:other@example.org/x#y",
	"http://u:***@example.org/x#y",
	"https://user@example.org/#top",
	"https://bücher.example/straße#kapitel",
	"https://xn--bcher-kva.example/stra%C3%9Fe#kapitel",
	"https://例え.テスト/パス#節",
	"http://[::1]:8080/a#b",
	"http://[::1/a#b",
	"http://h:99999/#x",
	"http://exa mple.org/#x",
	"https://example.org/a%zz#b",
	"https://example.org/#%_sec_6.2",
	"https://example.org/#frag#again",
	"https://example.org/a b#x",
	"https://example.org/a #x",
	"https://example.org/a\t#x",
	"https://example.org/a\n#x",
	"https://example.org/a\x00#x",
	"https://example.org/a\x7f#x",
	"https://example.org/a\u00a0#x",
	"https://example.org/a\u3000#x",
	"https://example.org/a%#x",
	"https://example.org/a%2#x",
	"https://example.org/a%20#x",
	"https://example.org/a/.#x",
	"https://example.org/a/%2e%2E#x",
	"https://example.org\\a\\b#x",
	"mailto:someone@example.org#x",
	"mailto:someone@example.org",
	"javascript:void(0)#x",
	"data:text/plain,hello #frag",
	"data:text/plain,hello#frag",
	"urn:isbn:0451450523#p",
	"file:///usr/share/doc/index.html#x",
	"file://host/share#x",
	"web+demo:/.//not-a-host/#x",
	"ws://example.org/chat#x",
	"ftp://example.org/pub#x",
	"pwid:archive.org:2016-01-22T11:20:29Z:page:https://example.org/",
	"page.html#x",
	"/relative#x",
	"#x",
	"#",
	"",
	" ",
	"\t\n",
	"\u00a0",
	"\u00a0#x",
	" https://example.org/a#x",
	"https://example.org/a#x ",
	"https#x",
	"https:#x",
	"https://#x",
	"a:#x",
	"x" + strings.Repeat("/a", 300) + "#f",
	"http://example.org" + strings.Repeat("/a", 250) + "#f",
	"http://example.org/" + strings.Repeat("a/", 600) + "#f",
	"http://example.org/" + strings.Repeat("a/", 1100) + "#f",
	"http://example.org/" + strings.Repeat("a/", 1100),
	// tooCostly fails the whole (nine "@" in the authority: from 512
	// bytes on), and would pass its part before the fragment.
	"http://a@a@a@a@a@a@a@a@a@a/#" + strings.Repeat("f", 500),
	"http://a@a@a@a@a@a@a@a@a@a/#" + strings.Repeat("f", 400),
}

// checkTargetKeys fails unless tk answers for href what TargetKey and
// ParseURL do: the key and ok, and the URL of NetURL (every field) or the
// error.
func checkTargetKeys(t *testing.T, tk *TargetKeys, href string) {
	t.Helper()
	want, _, wantOK := TargetKey(href)
	got, ok := tk.Key(href)
	if got != want || ok != wantOK {
		t.Errorf("TargetKeys.Key(%q) = %q, %v; TargetKey: %q, %v", href, got, ok, want, wantOK)
	}
	var wantURL *url.URL
	p, wantErr := ParseURL(href)
	if wantErr == nil {
		wantURL = p.NetURL()
	}
	gotURL, err := tk.NetURL(href)
	if !reflect.DeepEqual(err, wantErr) || !reflect.DeepEqual(gotURL, wantURL) {
		t.Errorf("TargetKeys.NetURL(%q) = %#v, %v; ParseURL: %#v, %v", href, gotURL, err, wantURL, wantErr)
	}
	if gotURL != nil {
		gotURL.Path = "/changed by the caller" // a copy of the entry's
	}
}

func TestTargetKeysEqualTargetKey(t *testing.T) {
	check := checkTargetKeys
	// One memo for all, in both orders: whichever href of a group filled
	// an entry, every other gets TargetKey's result.
	var fwd, back TargetKeys
	for _, h := range targetKeyHrefs {
		check(t, &fwd, h)
	}
	for i := len(targetKeyHrefs) - 1; i >= 0; i-- {
		check(t, &back, targetKeyHrefs[i])
	}
	for _, h := range targetKeyHrefs { // hits now
		check(t, &fwd, h)
	}
}

func TestTargetKeysShares(t *testing.T) {
	// What the memo is for: the fragments of one target are one entry.
	var tk TargetKeys
	for _, f := range []string{"", "#a", "#b", "#", "#a%20b"} {
		if k, ok := tk.Key("https://example.org/x.html" + f); !ok || k != "https://example.org/x.html" {
			t.Fatalf("Key(x.html%s) = %q, %v", f, k, ok)
		}
	}
	if len(tk.m) != 1 {
		t.Errorf("%d entries for one target through five fragments; want 1", len(tk.m))
	}
	// Where the cut could change the key, href is its own entry.
	for _, tc := range []struct{ href, key string }{
		{"https://example.org/a #x", "https://example.org/a #x"},
		{"https://example.org/a\t#x", "https://example.org/a\t#x"},
		{"https://example.org/a\u00a0#x", "https://example.org/a\u00a0#x"},
		{"#x", "#x"},
		{"http://example.org/" + strings.Repeat("a", 500) + "#x", "http://example.org/" + strings.Repeat("a", 500) + "#x"},
		{"https://example.org/a#x", "https://example.org/a"},
		{"https://example.org/a?q#x#y", "https://example.org/a?q"},
	} {
		if got := CutFragment(tc.href); got != tc.key {
			t.Errorf("CutFragment(%q) = %q; want %q", tc.href, got, tc.key)
		}
	}
}

// FuzzTargetKeys holds the memo to TargetKey and ParseURL: CutFragment's cut
// gives the same key, and a memo filled by other hrefs (here the same
// with other fragments and prefixes) answers their results.
func FuzzTargetKeys(f *testing.F) {
	for i, h := range targetKeyHrefs {
		f.Add(h, targetKeyHrefs[(i+1)%len(targetKeyHrefs)])
	}
	f.Fuzz(func(t *testing.T, href, other string) {
		if len(href) > 4096 || len(other) > 4096 {
			return // the limits that matter are at 512 bytes; keep the fuzzer fast
		}
		want, _, wantOK := TargetKey(href)
		if k := CutFragment(href); k != href {
			if got, _, ok := TargetKey(k); got != want || ok != wantOK {
				t.Fatalf("TargetKey(%q) = %q, %v; of its cut %q: %q, %v", href, want, wantOK, k, got, ok)
			}
		}
		base, _, _ := strings.Cut(href, "#")
		var tk TargetKeys
		for _, h := range []string{other, base + "#" + other, base, href + other, href, href} {
			checkTargetKeys(t, &tk, h)
		}
	})
}
