package study

import (
	"testing"
	"time"
)

func TestEstimateBudget(t *testing.T) {
	ia := ArchiveBudget{Name: "the Internet Archive", PerMinute: 24}
	for _, c := range []struct {
		urls     int
		archives []ArchiveBudget
		lookups  int
		dur      time.Duration
		sentence string
	}{
		{1_800_000, []ArchiveBudget{ia}, 1_800_000, 75000 * time.Minute,
			"1,800,000 lookups at 24 a minute on the Internet Archive: 52 days; use a local CDX/WARC collection with --archive-warc or add archives"},
		{120, []ArchiveBudget{ia}, 120, 5 * time.Minute, "120 lookups at 24 a minute on the Internet Archive: 5 minutes"},
		{12, []ArchiveBudget{ia}, 12, 30 * time.Second, "12 lookups at 24 a minute on the Internet Archive: 30 seconds"},
		{24 * 60 * 30, []ArchiveBudget{ia}, 24 * 60 * 30, 30 * time.Hour, "43,200 lookups at 24 a minute on the Internet Archive: 30 hours; use a local CDX/WARC collection with --archive-warc or add archives"},
		{1000, []ArchiveBudget{ia, {Name: "arquivo.pt", PerMinute: 100}}, 2000, 41*time.Minute + 40*time.Second,
			"1,000 lookups at 24 a minute on the Internet Archive, 1,000 lookups at 100 a minute on arquivo.pt: 42 minutes"},
		{1_000_000, []ArchiveBudget{{Name: "a local WARC collection"}}, 1_000_000, 0, "1,000,000 lookups with no rate limit on a local WARC collection: no time"},
		{10, []ArchiveBudget{{Name: "x", PerMinute: 0.5}}, 10, 20 * time.Minute, "10 lookups at 0.5 a minute on x: 20 minutes"},
		{0, []ArchiveBudget{ia}, 0, 0, "0 lookups at 24 a minute on the Internet Archive: no time"},
		{100, nil, 0, 0, "no archives asked: 0 lookups"},
	} {
		e := EstimateBudget(c.urls, c.archives)
		if e.Lookups != c.lookups || e.Duration != c.dur || e.Sentence != c.sentence {
			t.Errorf("EstimateBudget(%d, %v) = %d, %v, %q\nwant %d, %v, %q", c.urls, c.archives, e.Lookups, e.Duration, e.Sentence, c.lookups, c.dur, c.sentence)
		}
	}
}

func TestThousandsAndHumanDuration(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", -1234567: "-1,234,567", 100000: "100,000"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
	for d, want := range map[time.Duration]string{
		0: "no time", time.Second: "1 second", 90 * time.Minute: "90 minutes", time.Minute: "1 minute",
		3 * time.Hour: "3 hours", 47 * time.Hour: "47 hours", 72 * time.Hour: "3 days", 24 * time.Hour: "24 hours",
	} {
		if got := HumanDuration(d); got != want {
			t.Errorf("HumanDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestSafeCell(t *testing.T) {
	for in, want := range map[string]string{
		"":                  "",
		"=HYPERLINK(\"x\")": "'=HYPERLINK(\"x\")",
		"+1":                "'+1",
		"-2+3":              "'-2+3",
		"@SUM(A1)":          "'@SUM(A1)",
		"\tx":               "'\tx",
		"\rx":               "'\rx",
		"doi:10.1/x":        "doi:10.1/x",
		"a=b":               "a=b",
		"https://x.test/=":  "https://x.test/=",
	} {
		if got := SafeCell(in); got != want {
			t.Errorf("SafeCell(%q) = %q, want %q", in, got, want)
		}
	}
	for d, want := range map[float64]string{-7: "-7", 0.5: "0.5", -0.001: "0", 1.236: "1.24", 3.0000001: "3"} {
		if got := FormatDays(d); got != want {
			t.Errorf("FormatDays(%v) = %q, want %q", d, got, want)
		}
	}
}
