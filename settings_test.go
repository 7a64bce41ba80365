package linkrot_test

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/politeness"
)

// TestSettings_Stored: settings survive being stored and read back
// (typed, no flag package), header values are left out but their hash
// is kept, equal settings have equal fingerprints, and settings stored
// by an older linkrot are refused with ErrOldSettings.
func TestSettings_Stored(t *testing.T) {
	s := linkrot.Settings{
		Input:   linkrot.Input{Kind: linkrot.Sitemap, Seeds: []string{"https://example.org/"}, Sitemaps: []string{"https://example.org/sitemap.xml"}},
		PerHost: 2, UserAgent: "ua", Timeout: 5 * time.Second, MaxRedirects: 3,
		Crawl:    linkrot.CrawlSettings{Include: []string{"^https://example.org/docs/"}, MaxDepth: 4, MaxBody: 1 << 20, SessionParams: []string{"tok"}},
		Check:    linkrot.CheckSettings{Workers: 16, Retries: 1, Skip: []string{"/private/"}, MaxAge: time.Hour},
		Archives: linkrot.ArchiveSettings{Archives: []string{"ia"}, Workers: 2, FetchRate: "60/min", MaxAge: 24 * time.Hour},
		Hosts: []linkrot.HostSettings{{HostRule: politeness.HostRule{Match: "example.org", PerHost: 1, Headers: map[string]string{"Authorization": "secret"}},
			Exclude: []string{"^/admin"}, HeaderNames: []string{"Authorization"}, HeaderHash: "h"}},
	}
	fp, b := s.Stored()
	if strings.Contains(string(b), "secret") {
		t.Fatalf("a header value is stored: %s", b)
	}
	got, err := linkrot.ParseSettings(b)
	if err != nil {
		t.Fatal(err)
	}
	want := s
	want.Version = linkrot.SettingsVersion
	want.Hosts = []linkrot.HostSettings{s.Hosts[0]}
	want.Hosts[0].Headers = nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back:\n%+v\nwant\n%+v", got, want)
	}
	if fp2, _ := got.Stored(); fp2 != fp {
		t.Errorf("fingerprint %s after reading back, %s before", fp2, fp)
	}
	other := s
	other.Check.Workers = 17
	if fp3, _ := other.Stored(); fp3 == fp {
		t.Errorf("other settings, same fingerprint")
	}
	if _, err := linkrot.ParseSettings([]byte(`{"mode":"site","seeds":["https://example.org/"],"flags":{"max-depth":["2"]}}`)); !errors.Is(err, linkrot.ErrOldSettings) {
		t.Errorf("older settings: %v, want ErrOldSettings", err)
	}

	// The options built from them.
	copts, err := got.CrawlOptions(nil)
	if err != nil {
		t.Fatal(err)
	}
	if copts.PerHost != 2 || copts.MaxDepth != 4 || len(copts.Include) != 1 || len(copts.Exclude) != 1 ||
		copts.MaxSegmentRepeats != -1 || len(copts.Hosts) != 1 || !slices.Contains(copts.SessionParams, "tok") {
		t.Errorf("crawl options %+v", copts)
	}
	if !copts.Exclude[0].MatchString("https://example.org/admin/x") || copts.Exclude[0].MatchString("https://example.org/docs/admin") {
		t.Errorf("host exclude %s", copts.Exclude[0])
	}
	kopts, err := got.CheckOptions(nil)
	if err != nil {
		t.Fatal(err)
	}
	if kopts.Workers != 16 || kopts.PerHost != 2 || kopts.Retries != 1 || len(kopts.Exclude) != 2 || kopts.Timeout != 5*time.Second {
		t.Errorf("check options %+v", kopts)
	}
	got.Check.Retries = 0
	if kopts, _ := got.CheckOptions(nil); kopts.Retries >= 0 {
		t.Errorf("Retries 0: check.Options.Retries %d, want none (negative)", kopts.Retries)
	}
	for name, bad := range map[string]func(*linkrot.Settings){
		"--include":   func(s *linkrot.Settings) { s.Crawl.Include = []string{"("} },
		"--per-host":  func(s *linkrot.Settings) { s.PerHost = 0 },
		"--max-depth": func(s *linkrot.Settings) { s.Crawl.MaxDepth = -1 },
	} {
		b := want
		bad(&b)
		if _, err := b.CrawlOptions(nil); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, bad := range map[string]func(*linkrot.Settings){
		"--skip":           func(s *linkrot.Settings) { s.Check.Skip = []string{"["} },
		"--workers":        func(s *linkrot.Settings) { s.Check.Workers = 0 },
		"--check-max-body": func(s *linkrot.Settings) { s.Check.MaxBody = 65 << 20 },
	} {
		b := want
		bad(&b)
		if _, err := b.CheckOptions(nil); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
