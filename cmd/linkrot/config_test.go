package main

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/politeness"
)

// flagValues returns every flag's value as a string (lists joined).
func flagValues(fs *flag.FlagSet) map[string]string {
	out := map[string]string{}
	fs.VisitAll(func(f *flag.Flag) { out[f.Name] = f.Value.String() })
	return out
}

// TestConfig_ExampleRoundTrip parses the example 'linkrot config example'
// prints: it is valid TOML, names every flag of linkrot audit, and applied
// to a fresh flag set leaves every flag at its default.
func TestConfig_ExampleRoundTrip(t *testing.T) {
	code, example, stderr := run(t, "", "config", "example")
	if code != 0 {
		t.Fatalf("config example: exit %d: %s", code, stderr)
	}
	if example != exampleConfig() {
		t.Error("the printed example differs from exampleConfig()")
	}
	var raw map[string]any
	if _, err := toml.Decode(example, &raw); err != nil {
		t.Fatalf("the example is not valid TOML: %v\n%s", err, example)
	}
	fs := auditFlags()
	defaults := flagValues(fs)
	dir := t.TempDir()
	cfg, err := applyConfig(fs, []byte(example), dir)
	if err != nil {
		t.Fatalf("applying the example: %v", err)
	}
	if cfg.URL != "https://example.org/" {
		t.Errorf("url = %q", cfg.URL)
	}
	got := flagValues(fs)
	for name, def := range defaults {
		want := def
		if name == "db" {
			want = filepath.Join(dir, def) // relative paths are relative to the file
		}
		if got[name] != want {
			t.Errorf("after the example, --%s = %q, want the default %q", name, got[name], want)
		}
	}
	// Every flag is in the example, as a setting.
	thresholds, _ := raw["thresholds"].(map[string]any)
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == "config" || f.Name == "archive" {
			return
		}
		_, top := raw[f.Name]
		_, th := thresholds[f.Name]
		if !top && !th {
			t.Errorf("flag --%s missing from the example", f.Name)
		}
	})
	// The commented tables parse once uncommented.
	var tables []string
	for _, line := range strings.Split(example, "\n") {
		if strings.HasPrefix(line, "# [[") || (strings.HasPrefix(line, "# ") && strings.Contains(line, " = ") && len(tables) > 0) {
			tables = append(tables, strings.TrimPrefix(line, "# "))
		}
	}
	if _, err := applyConfig(auditFlags(), []byte(strings.Join(tables, "\n")), dir); err != nil {
		t.Errorf("the commented [[host]] / [[archive]] tables do not apply: %v\n%s", err, strings.Join(tables, "\n"))
	}
}

func TestConfig_Apply(t *testing.T) {
	dir := t.TempDir()
	file := `
url = "public"
db = "data/site.db"
max-depth = 3
exclude = ["\\.pdf$", "^https://example.org/tmp/"]
fail-on = "new"
ignore-robots = true
timeout = "5s"
max-body = "1MiB"

[thresholds]
confirm-after = 3
confirm-spacing = "24h"

[[host]]
match = "staging.example.org"
concurrency = 1
delay = "2s"
headers = { Authorization = "Bearer x" }
exclude = ["^/private/"]
`
	fs := auditFlags()
	// --max-depth given on the command line wins over the file.
	if err := fs.Parse([]string{"--max-depth", "7"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := applyConfig(fs, []byte(file), dir)
	if err != nil {
		t.Fatal(err)
	}
	v := flagValues(fs)
	for name, want := range map[string]string{
		"db": filepath.Join(dir, "data/site.db"), "max-depth": "7", "fail-on": "new", "ignore-robots": "true",
		"timeout": "5s", "max-body": "1048576", "confirm-after": "3", "confirm-spacing": "24h0m0s",
		"exclude": `\.pdf$,^https://example.org/tmp/`,
	} {
		if v[name] != want {
			t.Errorf("--%s = %q, want %q", name, v[name], want)
		}
	}
	if cfg.URL != filepath.Join(dir, "public") {
		t.Errorf("url = %q (a relative directory is relative to the file)", cfg.URL)
	}
	want := []linkrot.HostSettings{{HostRule: politeness.HostRule{Match: "staging.example.org", PerHost: 1, Delay: 2 * time.Second,
		Headers: map[string]string{"Authorization": "Bearer x"}}, Exclude: []string{"^/private/"}}}
	if !reflect.DeepEqual(cfg.Hosts, want) {
		t.Errorf("hosts = %+v", cfg.Hosts)
	}
	set := linkrot.Settings{PerHost: 1, Check: linkrot.CheckSettings{Workers: 1}, Hosts: cfg.hostRules()}
	copts, err := set.CrawlOptions(nil)
	if err != nil {
		t.Fatal(err)
	}
	kopts, err := set.CheckOptions(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(copts.Hosts) != 1 || len(kopts.Hosts) != 1 || len(copts.Exclude) != 1 || len(kopts.Exclude) != 1 {
		t.Fatalf("host rules not applied: %+v %+v", copts, kopts)
	}
	for u, excluded := range map[string]bool{
		"https://staging.example.org/private/x":      true,
		"http://STAGING.example.org:8080/private/":   true,
		"https://staging.example.org/public/private": false,
		"https://example.org/private/x":              false,
	} {
		if got := copts.Exclude[0].MatchString(u); got != excluded {
			t.Errorf("%s excluded = %v, want %v (%s)", u, got, excluded, copts.Exclude[0])
		}
	}
}

// TestConfig_Errors checks that the commands report a bad file as a usage
// error (linkrot.ApplyConfig's own errors are tested in the root package).
func TestConfig_Errors(t *testing.T) {
	// The command reports a bad file as a usage error.
	path := filepath.Join(t.TempDir(), "bad.toml")
	if err := os.WriteFile(path, []byte("no-such-flag = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := run(t, "", "audit", "--config", path)
	if code != exitUsage || !strings.Contains(stderr, "no-such-flag") {
		t.Errorf("audit with a bad config: exit %d, stderr %q", code, stderr)
	}
	if code, out, _ := run(t, "", "config", "check", path); code != exitUsage || out != "" {
		t.Errorf("config check of a bad file: exit %d", code)
	}
}

// TestConfig_CrawlAndCheck checks that one file serves crawl and check too:
// settings of other commands are ignored.
func TestConfig_CrawlAndCheck(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "linkrot.toml")
	if err := os.WriteFile(path, []byte("max-depth = 1\nretries = 0\nconfirm-after = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"crawl", "check"} {
		var got *flag.FlagSet
		e := &env{stdin: strings.NewReader(""), onFlags: func(fs *flag.FlagSet) { got = fs }}
		for _, c := range commands {
			if c.name == cmd {
				c.run(context.Background(), e, nil)
			}
		}
		if got == nil {
			t.Fatalf("%s does not parse with parseCommand", cmd)
		}
		if _, err := applyConfig(got, mustRead(t, path), dir); err != nil {
			t.Errorf("%s: %v", cmd, err)
		}
	}
	code, out, stderr := run(t, "", "config", "check", path)
	if code != 0 || !strings.Contains(out, "OK") {
		t.Errorf("config check: exit %d %q %q", code, out, stderr)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
