package check

import (
	"math"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/linkrot/linkrot/audit"
)

func TestScriptRedirects(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"Assign", `window.location = "https://a.example/x";`, []string{"https://a.example/x"}},
		{"Href", `top.location.href='http://ww1.a.example/?q=1'`, []string{"http://ww1.a.example/?q=1"}},
		{"Replace", `location.replace("/lander")`, []string{"/lander"}},
		{"AssignCall", "document.location.assign( `https://a.example/` )", []string{"https://a.example/"}},
		{"NoPrefix", `location="//a.example/"`, []string{"//a.example/"}},
		{"Concatenated", `window.location.replace("http://ww25." + location.hostname + "/?" + q);`, []string{"http://ww25."}},
		{"Template", "location.href = `http://ww1.${location.host}/`", []string{"http://ww1."}},
		{"Escaped", `location.href = "https:\/\/a.example\/x\"y"`, []string{`https://a.example/x"y`}},
		{"Several", `if (a) { location.href = "/a"; } else { location.replace("/b"); }`, []string{"/a", "/b"}},
		{"Comparison", `if (location.href == "https://a.example/") {}`, nil},
		{"StrictComparison", `if (location.href === "https://a.example/") {}`, nil},
		{"StringMethod", `var u = location.href.replace(/#.*/, "");`, nil},
		{"OtherName", `mylocation = "https://a.example/"; var locations = ["x"];`, nil},
		{"Variable", `location.href = target;`, nil},
		{"Unclosed", `location.href = "https://a.example/`, nil},
		{"UnclosedAtLineEnd", "location.href = \"https://a.example/\nfoo\"", nil},
		{"Empty", `location.href = ""`, nil},
		{"Property", `var l = window.location; l.hash = "x";`, nil},
		{"AtEnd", `location`, nil},
		{"DotAtEnd", `location.`, nil},
		{"CallNoParen", `location.replace; x = "y"`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := scriptRedirects(tt.src)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") || len(got) != len(tt.want) {
				t.Errorf("scriptRedirects(%q) = %q, want %q", tt.src, got, tt.want)
			}
		})
	}
	// Bounded: at most scriptRedirectsMax targets of scriptRedirectMax
	// bytes each.
	long := strings.Repeat(`location.href="`+strings.Repeat("a", 3*scriptRedirectMax)+`";`, 10)
	got := scriptRedirects(long)
	if len(got) != scriptRedirectsMax || len(got[0]) != scriptRedirectMax {
		t.Errorf("%d targets, the first %d bytes", len(got), len(got[0]))
	}
}

func TestParkingScriptVar(t *testing.T) {
	tests := []struct{ src, want string }{
		{`window.park = "eyJ1dWlk";`, "window.park"},
		{`window.park="x"`, "window.park"},
		{`window["park"] = 'x'`, "window.park"},
		{`window . park = x`, "window.park"},
		{`var pageOptions = {"pubId": "dp-sedo80_3ph"}`, "AdSense for Domains pubId"},
		{`pageOptions = {pubId: 'ca-dp-teaminternet09_3ph'}`, "AdSense for Domains pubId"},
		{`{'pubId':'partner-dp-above_3ph'}`, "AdSense for Domains pubId"},
		{`if (window.park == null) {}`, ""},
		{`window.parking = "x"`, ""},
		{`window.parkSpot = 1`, ""},
		{`var pageOptions = {pubId: "partner-pub-1234567"}`, ""},
		{`var pageOptions = {pubId: "pub-dp-1"}`, ""},
		{`var carPark = "dp-1"`, ""},
	}
	for _, tt := range tests {
		if got := parkingScriptVar(tt.src); got != tt.want {
			t.Errorf("parkingScriptVar(%q) = %q, want %q", tt.src, got, tt.want)
		}
	}
}

func TestListingOf(t *testing.T) {
	tests := []struct {
		target, page string
		want         string
	}{
		{"https://old-trails.com/x", "https://sedo.com/search/details/?domain=old-trails.com", "sedo.com"},
		{"https://www.old-trails.com/x", "https://www.afternic.com/forsale/old-trails.com?traffic_id=x", "afternic.com"},
		{"https://old-trails.com/x", "https://www.hugedomains.com/domain_profile.cfm?d=old-trails&e=com", "hugedomains.com"},
		{"https://shop.old-trails.co.uk/x", "https://dan.com/buy-domain/old-trails.co.uk", "dan.com"},
		{"https://old-trails.com/x", "https://dan.com/buy-domain/OLD-TRAILS.COM", "dan.com"},
		{"https://old-trails.com/x", "https://dan.com/buy-domain/old%2Dtrails.com", "dan.com"},
		{"https://old-trails.com/x", "https://dan.com/buy-domain/new-trails.com", ""},
		{"https://old-trails.com/x", "https://dan.com/buy-domain/old-trails-guide.com", ""},
		{"https://old-trails.com/x", "https://dan.com/", ""},
		{"https://old-trails.com/x", "https://old-trails.com/search/details/?domain=old-trails.com", ""},
		{"https://old-trails.com/x", "https://notsedo.com/search/details/?domain=old-trails.com", ""},
		{"https://sedo.com/x", "https://sedo.com/search/details/?domain=sedo.com", ""},
		{"http://127.0.0.1/x", "https://sedo.com/search/details/?domain=127.0.0.1", ""},
	}
	for _, tt := range tests {
		start := mustURL(t, tt.target)
		if got := listingOf(mustURL(t, tt.page), namesOf(start, start)); got != tt.want {
			t.Errorf("listingOf(%s) for %s = %q, want %q", tt.page, tt.target, got, tt.want)
		}
	}
}

func TestWWHost(t *testing.T) {
	tests := []struct {
		target, to string
		want       bool
	}{
		{"http://old-trails.com/", "http://ww1.old-trails.com/", true},
		{"http://www.old-trails.com/a", "https://ww25.old-trails.com/?subid=3", true},
		{"http://old-trails.com/", "http://ww1.", true},
		{"http://old-trails.com/", "//ww3.old-trails.com", true},
		{"http://old-trails.com/", "http://ww1.other.com/", false},
		{"http://old-trails.com/", "http://www.old-trails.com/", false},
		{"http://old-trails.com/", "http://www2.old-trails.com/", false},
		{"http://old-trails.com/", "http://ww.old-trails.com/", false},
		{"http://old-trails.com/", "http://ww123456.old-trails.com/", false},
		{"http://old-trails.com/", "/ww1.old-trails.com", false},
	}
	for _, tt := range tests {
		start := mustURL(t, tt.target)
		if got := wwHost(tt.to, namesOf(start, start)); got != tt.want {
			t.Errorf("wwHost(%q) for %s = %v, want %v", tt.to, tt.target, got, tt.want)
		}
	}
}

func TestServiceOf(t *testing.T) {
	for host, want := range map[string]string{
		"sedo.com": "sedo.com", "www.sedo.com": "sedo.com", "help.godaddy.com": "godaddy.com",
		"www.networksolutions.com": "networksolutions.com", "img.sedoparking.com": "sedoparking.com",
		"old-trails.com": "", "sedo.com.evil.example": "", "notsedo.com": "",
	} {
		if got := serviceOf(host); got != want {
			t.Errorf("serviceOf(%q) = %q, want %q", host, got, want)
		}
	}
}

// FuzzScriptRedirects: any script is read without panicking, into at most
// scriptRedirectsMax targets of at most scriptRedirectMax bytes, each
// found in the script's text (bar unescaping).
func FuzzScriptRedirects(f *testing.F) {
	f.Add(`window.location.replace("http://ww1." + location.host)`)
	f.Add("location.href = `a${b}`; location.assign('\\x')")
	f.Add(`location.href="\`)
	f.Add("location\x00=\"\xff\"")
	f.Add(`window.park = "x"; var o = {pubId: "dp-x"};`)
	f.Fuzz(func(t *testing.T, src string) {
		got := scriptRedirects(src)
		if len(got) > scriptRedirectsMax {
			t.Fatalf("%d targets", len(got))
		}
		for _, g := range got {
			if g == "" || len(g) > scriptRedirectMax {
				t.Fatalf("target %q", g)
			}
		}
		if len(got) > 0 && !strings.Contains(src, "location") {
			t.Fatalf("targets %q without a location in the script", got)
		}
		parkingScriptVar(src)
	})
}

// FuzzParkedSignals: any page at any URL gives parked-domain signals
// without panicking, with finite scores, a positive sum whenever a
// kind of lander is named, fingerprints within their bounds, and no parked
// sum at all for a target on a marketplace's own site.
func FuzzParkedSignals(f *testing.F) {
	f.Add(parkedFixture(f, "sedo.html"), "http://old-trails.com/a")
	f.Add(parkedFixture(f, "script-redirect.html"), "http://scree-runs.info/")
	f.Add(parkedFixture(f, "lander-ja.html"), "https://furui-michi.jp/x")
	f.Add(parkedFixture(f, "refresh-marketplace.html"), "https://sedo.com/search/details/?domain=tarn-hopping.com")
	f.Add(`<html data-adblockkey=x><meta http-equiv=refresh content="0;url=//ww1.">`, "http://[::1]:80/")
	f.Fuzz(func(t *testing.T, page, target string) {
		u, err := url.Parse(target)
		if err != nil {
			return
		}
		fp := fingerprintPage([]byte(page), "text/html", false, nil, false)
		if fp.signals != nil {
			if len(fp.signals.Parking) > signalParkMax {
				t.Fatalf("%d fingerprints", len(fp.signals.Parking))
			}
			for _, p := range fp.signals.Parking {
				kind, v, ok := strings.Cut(p, ":")
				if !ok || v == "" || !utf8.ValidString(p) || len(v) > signalURLMax+len("…") {
					t.Fatalf("fingerprint %q", p)
				}
				if (kind == "goto" || kind == "offer" || kind == "renew") && strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 }) {
					t.Fatalf("control character in %q", p)
				}
			}
		}
		sigs, kinds := parkedSignals(&soft404Input{start: u, final: u, words: fp.words, count: fp.count, page: fp.signals},
			foldTokens(fp.words), effectiveLength(fp.words, fp.count))
		sum := 0.0
		for _, s := range sigs {
			if math.IsNaN(s.Score) || math.IsInf(s.Score, 0) || s.Name != "parked" {
				t.Fatalf("signal %+v", s)
			}
			sum += s.Score
		}
		if len(kinds) > 0 && sum <= 0 {
			t.Fatalf("signals %+v, kinds %q", sigs, kinds)
		}
		if serviceOf(cleanHost(u)) != "" && sum > 1e-9 {
			t.Fatalf("parked sum %v on a marketplace's own site: %+v", sum, sigs)
		}
		res := classifySoft404(&soft404Input{start: u, final: u, words: fp.words, count: fp.count, page: fp.signals})
		if res.verdict == audit.VerdictParked && (res.ev.Parked < 1 || !strings.HasPrefix(res.reason, "parked domain (score ")) {
			t.Fatalf("parked with %+v: %s", res.ev, res.reason)
		}
	})
}

// TestPageSignals_URLBounds: the URLs a page's fingerprints keep are cut,
// without control characters, at most signalURLKinds of a kind, each once.
func TestPageSignals_URLBounds(t *testing.T) {
	long := "https://dan.com/buy-domain/x.com?" + strings.Repeat("a", 2*signalURLMax)
	var b strings.Builder
	for range 5 {
		b.WriteString(`<a href="` + long + `">x</a><a href="https://sedo.com/search/details/?domain=x.com&#10;&#9;">y</a>`)
	}
	b.WriteString(`<a href="https://www.afternic.com/forsale/x.com">z</a>`)
	fp := fingerprintPage([]byte(b.String()), "text/html", false, nil, false)
	var offers []string
	for _, p := range fp.signals.Parking {
		if v, ok := strings.CutPrefix(p, "offer:"); ok {
			offers = append(offers, v)
		}
	}
	want := []string{cutText(long, signalURLMax), "https://sedo.com/search/details/?domain=x.com"}
	if strings.Join(offers, " ") != strings.Join(want, " ") {
		t.Errorf("offers %q, want %q", offers, want)
	}
}
