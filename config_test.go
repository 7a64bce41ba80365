package linkrot

import (
	"flag"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/linkrot/linkrot/politeness"
)

// configFlags is a small flag set shaped like linkrot audit's: a path, a
// number, a list, a duration and an --archive list.
func configFlags() (*flag.FlagSet, *StringList, *StringList) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.String("db", "linkrot.db", "database `file`")
	fs.Int("max-depth", 0, "depth")
	fs.Duration("confirm-spacing", 0, "spacing")
	var exclude, archives StringList
	fs.Var(&exclude, "exclude", "`regexp`")
	fs.Var(&archives, "archive", "archive")
	return fs, &exclude, &archives
}

func TestApplyConfig(t *testing.T) {
	fs, exclude, archives := configFlags()
	if err := fs.Parse([]string{"--max-depth", "7"}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg, err := ApplyConfig(fs, []byte(`
url = "public"
db = "data/site.db"
max-depth = 3
exclude = ["a", "b"]
retries = 2
[thresholds]
confirm-spacing = "24h"
[[host]]
match = "staging.example.org"
concurrency = 1
delay = "2s"
headers = { Authorization = "Bearer x" }
exclude = ["^/private/"]
[[archive]]
name = "local"
timegate = "https://a/tg/"
rate = "60/min"
`), dir, map[string]bool{"retries": true})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"db": filepath.Join(dir, "data/site.db"), "max-depth": "7", "confirm-spacing": "24h0m0s",
	} {
		if got := fs.Lookup(name).Value.String(); got != want {
			t.Errorf("--%s = %q, want %q", name, got, want)
		}
	}
	if !reflect.DeepEqual([]string(*exclude), []string{"a", "b"}) {
		t.Errorf("exclude = %q", *exclude)
	}
	if !reflect.DeepEqual([]string(*archives), []string{"local=https://a/tg/,rate=60/min"}) {
		t.Errorf("archive = %q", *archives)
	}
	if cfg.URL != filepath.Join(dir, "public") {
		t.Errorf("url = %q (a relative directory is relative to the file)", cfg.URL)
	}
	want := []HostSettings{{HostRule: politeness.HostRule{Match: "staging.example.org", PerHost: 1, Delay: 2 * time.Second,
		Headers: map[string]string{"Authorization": "Bearer x"}}, Exclude: []string{"^/private/"}}}
	if !reflect.DeepEqual(cfg.Hosts, want) {
		t.Errorf("hosts = %+v", cfg.Hosts)
	}
	// A PostgreSQL URL in a path flag is kept as is.
	fs, _, _ = configFlags()
	if _, err := ApplyConfig(fs, []byte(`db = "postgres://u@h/d"`), dir, nil); err != nil {
		t.Fatal(err)
	}
	if got := fs.Lookup("db").Value.String(); got != "postgres://u@h/d" {
		t.Errorf("db = %q", got)
	}
}

func TestApplyConfig_Errors(t *testing.T) {
	for name, file := range map[string]string{
		"UnknownKey":      `no-such-flag = 1`,
		"BadValue":        `max-depth = "deep"`,
		"ListForScalar":   `max-depth = [1, 2]`,
		"HostNoMatch":     "[[host]]\nconcurrency = 2",
		"HostUnknownKey":  "[[host]]\nmatch = \"a\"\nspeed = 2",
		"HostBadDelay":    "[[host]]\nmatch = \"a\"\ndelay = 5",
		"ArchiveNoName":   "[[archive]]\ntimegate = \"https://a/\"",
		"ArchiveComma":    "[[archive]]\nname = \"ia\"\nrate = \"1,2\"",
		"NotTOML":         `max-depth = `,
		"ThresholdsValue": `thresholds = 3`,
	} {
		t.Run(name, func(t *testing.T) {
			fs, _, _ := configFlags()
			if _, err := ApplyConfig(fs, []byte(file), t.TempDir(), nil); err == nil {
				t.Errorf("%q accepted", file)
			}
		})
	}
}

func TestExampleConfig_RoundTrip(t *testing.T) {
	fs, _, _ := configFlags()
	example := ExampleConfig(fs)
	for _, want := range []string{"\ndb = \"linkrot.db\"\n", "\nexclude = []\n", "[thresholds]\n", "\nconfirm-spacing = \"0s\"\n", "# [[archive]]"} {
		if !strings.Contains(example, want) {
			t.Errorf("example lacks %q:\n%s", want, example)
		}
	}
	fresh, _, _ := configFlags()
	if _, err := ApplyConfig(fresh, []byte(example), "/", nil); err != nil {
		t.Fatalf("the example does not apply: %v", err)
	}
	if got := fresh.Lookup("max-depth").Value.String(); got != "0" {
		t.Errorf("max-depth = %q after the example", got)
	}
}
