package linkrot_test

import (
	"strings"
	"testing"

	"github.com/linkrot/linkrot"
)

// TestSettings_DirListing: --dir-listing is a setting of the run: stored
// and read back, part of the fingerprint (a run with listings is not
// resumed as one without), handed to the crawler; when off it is left
// out of the stored settings, so that the fingerprint of settings
// without it is the one they had before it existed.
func TestSettings_DirListing(t *testing.T) {
	off := linkrot.Settings{Input: linkrot.Input{Kind: linkrot.Directory, Dir: "site", Seeds: []string{"http://localhost/"}}, PerHost: 1}
	on := off
	on.Crawl.DirListing = true
	fpOff, bOff := off.Stored()
	fpOn, bOn := on.Stored()
	if fpOff == fpOn {
		t.Errorf("same fingerprint with and without --dir-listing")
	}
	if strings.Contains(string(bOff), "dir_listing") {
		t.Errorf("settings without --dir-listing store it: %s", bOff)
	}
	if !strings.Contains(string(bOn), `"dir_listing":true`) {
		t.Errorf("settings with --dir-listing: %s", bOn)
	}
	back, err := linkrot.ParseSettings(bOn)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Crawl.DirListing {
		t.Errorf("read back without --dir-listing")
	}
	for _, tc := range []struct {
		s    linkrot.Settings
		want bool
	}{{off, false}, {back, true}} {
		o, err := tc.s.CrawlOptions(nil)
		if err != nil {
			t.Fatal(err)
		}
		if o.DirListing != tc.want {
			t.Errorf("crawler.Options.DirListing %v, want %v", o.DirListing, tc.want)
		}
	}
}
