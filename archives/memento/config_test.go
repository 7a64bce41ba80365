package memento

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestArchive_RawURL(t *testing.T) {
	at := time.Date(2024, 3, 1, 12, 30, 45, 0, time.UTC)
	orig := "http://example.org/a?b=1"
	for _, c := range []struct {
		name, raw, memento, want string
		ok                       bool
	}{
		{"wayback default", "", "https://web.archive.org/web/20240301123045/http://example.org/a?b=1", "https://web.archive.org/web/20240301123045id_/http://example.org/a?b=1", true},
		{"wayback flags replaced", "", "https://web.archive.org/web/20240301123045mp_/http://example.org/a?b=1", "https://web.archive.org/web/20240301123045id_/http://example.org/a?b=1", true},
		{"pywb path", "pattern:/wayback/archive/", "https://www.webarchive.org.uk/wayback/archive/20240301123045/http://example.org/a?b=1", "https://www.webarchive.org.uk/wayback/archive/20240301123045id_/http://example.org/a?b=1", true},
		{"pattern not matching", "pattern:/all/", "https://webarchive.loc.gov/other/20240301123045/http://example.org/", "https://webarchive.loc.gov/other/20240301123045/http://example.org/", false},
		{"template", "template:https://arquivo.pt/noFrame/replay/{timestamp}id_/{url}", "https://arquivo.pt/wayback/20240301123045/http://example.org/a?b=1", "https://arquivo.pt/noFrame/replay/20240301123045id_/http://example.org/a?b=1", true},
		{"none", "none", "https://archive.ph/AbCdE", "https://archive.ph/AbCdE", false},
		{"short id, default", "", "https://archive.ph/AbCdE", "https://archive.ph/AbCdE", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := Archive{Name: "x", TimeGate: "https://x.example/", Raw: RawReplay(c.raw)}
			if err := a.Validate(); err != nil {
				t.Fatal(err)
			}
			got, ok := a.RawURL(c.memento, orig, at)
			if got != c.want || ok != c.ok {
				t.Errorf("RawURL = %q, %v; want %q, %v", got, ok, c.want, c.ok)
			}
		})
	}
	for _, bad := range []string{"pattern:nope", "template:https://x.example/{url}", "template:ftp://x/{timestamp}/{url}", "sometimes"} {
		if err := (Archive{Name: "x", TimeGate: "https://x.example/", Raw: RawReplay(bad)}).Validate(); err == nil {
			t.Errorf("raw %q accepted", bad)
		}
	}
}

func TestDefaultsAndPresets(t *testing.T) {
	d := Defaults()
	if len(d) != 2 || d[0].Name != "ia" || d[1].Name != "arquivo" {
		t.Fatalf("defaults = %v", d)
	}
	for _, a := range Presets() {
		if err := a.Validate(); err != nil {
			t.Errorf("preset %s: %v", a.Name, err)
		}
		if a.Source == "" {
			t.Errorf("preset %s cites no source", a.Name)
		}
		if (a.Name == "timetravel") != (a.Shutdown != "") {
			t.Errorf("preset %s: shutdown %q", a.Name, a.Shutdown)
		}
	}
	for _, a := range d {
		if a.Shutdown != "" {
			t.Errorf("default %s is shut down", a.Name)
		}
	}
	ia := d[0]
	pools := ia.AllPools()
	var api Pool
	for _, p := range pools {
		if p.Name == "api" {
			api = p
		}
	}
	// The IA API pool (/cdx + /web/timemap) stays below its published 30
	// a minute, at the maintained client's 24.
	if api.PerMinute() >= 30 || api.PerMinute() != 24 {
		t.Errorf("IA api pool at %v/min", api.PerMinute())
	}
	c := NewClient(Options{Archives: d})
	for u, want := range map[string]string{
		"https://web.archive.org/web/timemap/link/http://example.org/":  "ia/api",
		"https://web.archive.org/cdx/search/cdx?url=example.org":        "ia/api",
		"https://web.archive.org/web/http://example.org/":               "ia/main",
		"https://web.archive.org/web/2024id_/http://example.org/":       "ia/main",
		"https://arquivo.pt/wayback/http://example.org/":                "arquivo/main",
		"https://arquivo.pt/noFrame/replay/2024id_/http://example.org/": "arquivo/replay",
		"https://example.org/": "example.org",
	} {
		if got := c.PoolOf(u); got != want {
			t.Errorf("PoolOf(%s) = %q, want %q", u, got, want)
		}
	}
	// Arquivo.pt's published Memento limit is 400 a minute.
	if p := d[1].PerMinute(); p >= 400 || p <= 0 {
		t.Errorf("arquivo at %v/min", p)
	}
	if _, err := url.Parse(d[1].TimeMapURL("http://example.org/")); err != nil || !strings.HasPrefix(d[1].TimeMapURL("x"), "https://arquivo.pt/") {
		t.Errorf("arquivo timemap %q", d[1].TimeMapURL("x"))
	}
}

func TestParseArchive_Presets(t *testing.T) {
	a, err := ParseArchive("archive.today")
	if err != nil || a.Raw != RawNone {
		t.Errorf("archive.today = %+v, %v", a, err)
	}
	a, err = ParseArchive("mine=http://127.0.0.1:8080/wayback/,raw=pattern:/wayback/,margin=0.25,rate=100")
	if err != nil || a.Raw != "pattern:/wayback/" || a.PerMinute() != 75 {
		t.Errorf("custom = %+v (%v/min), %v", a, a.PerMinute(), err)
	}
	if a, _ := ParseArchive("x=http://127.0.0.1:8080/,rate=60"); a.PerMinute() != 54 {
		t.Errorf("default margin: %v/min for rate 60", a.PerMinute())
	}
	if _, err := ParseArchive("nosuchpreset"); err == nil || !strings.Contains(err.Error(), "memgator") {
		t.Errorf("unknown preset: %v", err)
	}
}
