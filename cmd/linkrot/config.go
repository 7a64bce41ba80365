package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/politeness"
)

// A configuration file (TOML) holds the flags of linkrot audit by name, so
// that every flag can be set there; command-line flags override it. Three
// tables are more than flags:
//
//	url = "https://example.org/"   # the positional argument: a URL or a directory
//	[thresholds]                   # flags again, grouped for readability
//	[[host]]                       # per-host overrides (politeness.HostRule) and excluded paths
//	[[archive]]                    # one --archive each
//
// Relative paths (flags whose value is a path, file or directory, and a
// directory url) are relative to the file's directory, so cron can run
// linkrot from anywhere.

// fileConfig is a loaded configuration file.
type fileConfig struct {
	path string
	// url is the positional argument, "" when not set.
	url string
	// hosts are the [[host]] tables.
	hosts []hostConfig
}

// hostConfig is one [[host]] table.
type hostConfig struct {
	politeness.HostRule
	// Exclude are regexps over the URL path (and query) of the host: URLs
	// neither crawled nor checked.
	Exclude []string `json:"exclude,omitempty"`
}

// configKeys that are not flag names.
const (
	keyURL        = "url"
	keyHost       = "host"
	keyArchive    = "archive"
	keyThresholds = "thresholds"
)

// parseCommand parses a command's arguments like parseInterleaved, and adds
// --config FILE: the file's settings apply to every flag not given on the
// command line, and its url is the positional argument when none was
// given (configURL). It returns the positional arguments and the loaded
// file (nil without --config).
func parseCommand(e *env, fs *flag.FlagSet, args []string) ([]string, *fileConfig, error) {
	if fs.Lookup("config") == nil {
		fs.String("config", "", "read settings from this TOML `file` (command-line flags win; see linkrot config example)")
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return nil, nil, err
	}
	if e.onFlags != nil {
		e.onFlags(fs)
		return nil, nil, flag.ErrHelp
	}
	path := fs.Lookup("config").Value.String()
	if path == "" {
		return pos, nil, nil
	}
	cfg, err := loadConfig(fs, path)
	if err != nil {
		return nil, nil, err
	}
	return pos, cfg, nil
}

// loadConfig reads the file at path and applies it to fs.
func loadConfig(fs *flag.FlagSet, path string) (*fileConfig, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("--config: %v", err)
	}
	cfg, err := applyConfig(fs, b, filepath.Dir(path))
	if err != nil {
		return nil, usagef("--config %s: %v", path, err)
	}
	cfg.path = path
	return cfg, nil
}

// applyConfig parses TOML b and sets, in fs, every flag the file names and
// the command line did not set. dir resolves relative paths. Keys naming
// no flag of fs are errors, except flags of linkrot audit that fs does
// not have (one file serves audit, crawl and check).
func applyConfig(fs *flag.FlagSet, b []byte, dir string) (*fileConfig, error) {
	var raw map[string]any
	if _, err := toml.NewDecoder(bytes.NewReader(b)).Decode(&raw); err != nil {
		return nil, err
	}
	setOnCommandLine := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { setOnCommandLine[f.Name] = true })
	cfg := &fileConfig{}
	known := auditFlagNames()

	apply := func(key string, v any) error {
		f := fs.Lookup(key)
		if f == nil {
			if known[key] {
				return nil // a flag of another command
			}
			return fmt.Errorf("unknown setting %q (settings are the flags of linkrot audit)", key)
		}
		if setOnCommandLine[key] {
			return nil
		}
		vals, err := configStrings(v)
		if err != nil {
			return fmt.Errorf("%s: %v", key, err)
		}
		if _, ok := f.Value.(*listFlag); !ok && len(vals) != 1 {
			return fmt.Errorf("%s: want one value, not a list", key)
		}
		for _, s := range vals {
			if isPathFlag(f) && s != "" && s != "-" && !filepath.IsAbs(s) && !isDatabaseURL(s) {
				s = filepath.Join(dir, s)
			}
			if err := fs.Set(key, s); err != nil {
				return fmt.Errorf("%s: %v", key, err)
			}
		}
		return nil
	}

	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := raw[k]
		switch k {
		case keyURL:
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("url: want a string")
			}
			if !strings.Contains(s, "://") && !filepath.IsAbs(s) {
				s = filepath.Join(dir, s) // a directory to audit
			}
			cfg.url = s
		case keyThresholds:
			t, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("thresholds: want a table")
			}
			tk := make([]string, 0, len(t))
			for k := range t {
				tk = append(tk, k)
			}
			sort.Strings(tk)
			for _, k := range tk {
				if err := apply(k, t[k]); err != nil {
					return nil, fmt.Errorf("thresholds: %w", err)
				}
			}
		case keyHost:
			hosts, err := configHosts(v)
			if err != nil {
				return nil, err
			}
			cfg.hosts = hosts
		case keyArchive:
			specs, err := configArchives(v)
			if err != nil {
				return nil, err
			}
			if fs.Lookup("archive") == nil {
				if known["archive"] {
					continue
				}
				return nil, fmt.Errorf("archive: this linkrot has no archives stage")
			}
			if setOnCommandLine["archive"] {
				continue
			}
			for _, s := range specs {
				if err := fs.Set("archive", s); err != nil {
					return nil, fmt.Errorf("archive: %v", err)
				}
			}
		default:
			if err := apply(k, v); err != nil {
				return nil, err
			}
		}
	}
	return cfg, nil
}

// configStrings turns a TOML value into flag values: a string, number or
// boolean is one value, an array one value per element.
func configStrings(v any) ([]string, error) {
	switch x := v.(type) {
	case string:
		return []string{x}, nil
	case bool:
		return []string{strconv.FormatBool(x)}, nil
	case int64:
		return []string{strconv.FormatInt(x, 10)}, nil
	case float64:
		return []string{strconv.FormatFloat(x, 'g', -1, 64)}, nil
	case []any:
		var out []string
		for _, e := range x {
			s, err := configStrings(e)
			if err != nil || len(s) != 1 {
				return nil, fmt.Errorf("want a list of plain values")
			}
			out = append(out, s[0])
		}
		if out == nil {
			out = []string{}
		}
		return out, nil
	default:
		return nil, fmt.Errorf("unsupported value %v (%T)", v, v)
	}
}

// isPathFlag reports whether a flag's value is a file-system path, from the
// placeholder of its usage ("`path`", "`FILE`", "`directory`").
func isPathFlag(f *flag.Flag) bool {
	name, _ := flag.UnquoteUsage(f)
	switch strings.ToLower(name) {
	case "path", "file", "directory", "dir":
		return true
	}
	return false
}

func configHosts(v any) ([]hostConfig, error) {
	list, ok := v.([]map[string]any)
	if !ok {
		return nil, fmt.Errorf("host: want [[host]] tables")
	}
	var out []hostConfig
	for i, t := range list {
		var h hostConfig
		for k, v := range t {
			var err error
			switch k {
			case "match":
				h.Match, ok = v.(string)
				if !ok || strings.TrimSpace(h.Match) == "" {
					err = errors.New("want a host name")
				}
			case "concurrency":
				n, ok := v.(int64)
				if !ok || n < 1 {
					err = errors.New("want a positive integer")
				}
				h.PerHost = int(n)
			case "delay":
				s, ok := v.(string)
				if !ok {
					err = errors.New(`want a duration string ("2s")`)
				} else if h.Delay, err = time.ParseDuration(s); err == nil && h.Delay < 0 {
					err = errors.New("negative")
				}
			case "headers":
				m, ok := v.(map[string]any)
				if !ok {
					err = errors.New("want a table of strings")
				}
				h.Headers = map[string]string{}
				for name, val := range m {
					s, ok := val.(string)
					if !ok {
						err = fmt.Errorf("header %s: want a string", name)
					}
					h.Headers[name] = s
				}
			case "exclude":
				vals, e := configStrings(v)
				if e != nil {
					err = e
				}
				h.Exclude = vals
			default:
				err = errors.New("unknown key (match, concurrency, delay, headers, exclude)")
			}
			if err != nil {
				return nil, fmt.Errorf("host %d: %s: %v", i+1, k, err)
			}
		}
		if h.Match == "" {
			return nil, fmt.Errorf("host %d: match is required", i+1)
		}
		out = append(out, h)
	}
	return out, nil
}

// configArchives turns [[archive]] tables into --archive values.
func configArchives(v any) ([]string, error) {
	list, ok := v.([]map[string]any)
	if !ok {
		return nil, fmt.Errorf("archive: want [[archive]] tables")
	}
	var out []string
	for i, t := range list {
		name, _ := t["name"].(string)
		if name == "" {
			return nil, fmt.Errorf("archive %d: name is required", i+1)
		}
		spec := name
		if tg, ok := t["timegate"].(string); ok && tg != "" {
			spec += "=" + tg
		}
		keys := make([]string, 0, len(t))
		for k := range t {
			if k != "name" && k != "timegate" {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			vals, err := configStrings(t[k])
			if err != nil || len(vals) != 1 {
				return nil, fmt.Errorf("archive %d: %s: want one value", i+1, k)
			}
			if strings.Contains(vals[0], ",") {
				return nil, fmt.Errorf("archive %d: %s: a value must not contain a comma", i+1, k)
			}
			spec += "," + k + "=" + vals[0]
		}
		out = append(out, spec)
	}
	return out, nil
}

// auditFlags returns the flag set of linkrot audit, as registered by
// runAudit (so every flag any stage adds is listed).
func auditFlags() *flag.FlagSet {
	var got *flag.FlagSet
	e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard,
		onFlags: func(fs *flag.FlagSet) { got = fs }}
	_ = runAudit(context.Background(), e, nil)
	if got == nil {
		panic("linkrot: runAudit did not parse its flags with parseCommand")
	}
	return got
}

// auditFlagNames returns the names of the flags of linkrot audit.
func auditFlagNames() map[string]bool {
	names := map[string]bool{}
	auditFlags().VisitAll(func(f *flag.Flag) { names[f.Name] = true })
	return names
}

// withURL returns pos, or the config's url when pos is empty.
func (c *fileConfig) withURL(pos []string) []string {
	if len(pos) == 0 && c != nil && c.url != "" {
		return []string{c.url}
	}
	return pos
}

// hostRules returns the host rules of a config (nil-safe).
func (c *fileConfig) hostRules() []linkrot.HostSettings {
	if c == nil {
		return nil
	}
	var out []linkrot.HostSettings
	for _, h := range c.hosts {
		out = append(out, linkrot.HostSettings{HostRule: h.HostRule, Exclude: h.Exclude})
	}
	return out
}

// runConfig is linkrot config: "linkrot config example" prints a commented
// example file holding every flag of linkrot audit; "linkrot config check
// FILE" loads a file and reports its errors.
func runConfig(_ context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usagef("usage: linkrot config example | linkrot config check FILE")
	}
	switch args[0] {
	case "example":
		if len(args) != 1 {
			return usagef("config example takes no arguments")
		}
		_, err := io.WriteString(e.stdout, exampleConfig())
		return err
	case "check":
		if len(args) != 2 {
			return usagef("usage: linkrot config check FILE")
		}
		fs := auditFlags()
		cfg, err := loadConfig(fs, args[1])
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%s: OK (%d host rules)\n", args[1], len(cfg.hosts))
		return nil
	case "-h", "--help", "help":
		fmt.Fprintln(e.stdout, "usage: linkrot config example | linkrot config check FILE")
		return nil
	}
	return usagef("unknown config subcommand %q (example, check)", args[0])
}

// exampleSections group the flags of linkrot audit in the example; flags
// not listed go under "Other settings", so a flag added later is still
// in the example.
var exampleSections = []struct {
	title string
	flags []string
}{
	{"Database and scheduled runs", []string{"db", "resume", "resume-max-age", "wait", "fail-on", "log-format", "log-level", "quiet", "verbose"}},
	{"What to crawl", []string{"sitemap", "urls", "base", "dir-listing", "allow-domain", "include", "exclude", "max-depth", "max-pages", "ignore-robots"}},
	{"Crawl traps (0 turns a guard off)", []string{"max-segment-repeats", "max-path-segments", "max-query-variants", "max-url-length", "session-param", "keep-session-ids"}},
	{"Politeness and limits (both stages)", []string{"concurrency", "per-host", "delay", "host-delay", "user-agent", "timeout", "max-redirects", "max-body", "check-max-body"}},
	{"Checking", []string{"retries", "max-retry-wait", "allow-private", "skip", "no-soft404", "check-external-fragments", "max-age"}},
}

// thresholdFlag reports whether a flag goes into the [thresholds] table.
func thresholdFlag(name string) bool {
	return strings.HasPrefix(name, "confirm-") || strings.HasPrefix(name, "drift-") || name == "max-memento-distance"
}

// exampleConfig returns the commented example: every flag of linkrot audit
// with its default value, plus commented [[host]] and [[archive]] tables.
// It parses back into exactly the defaults (TestConfig_ExampleRoundTrip).
func exampleConfig() string {
	fs := auditFlags()
	var b strings.Builder
	b.WriteString(`# linkrot configuration (TOML) for scheduled runs:
#
#   linkrot audit --config linkrot.toml
#
# Every flag of 'linkrot audit' can be set here under its own name; flags
# given on the command line win. The values below are the defaults.
# Relative paths are relative to this file.

# The site to audit: a URL, or a directory with 'base' set.
url = "https://example.org/"
`)
	done := map[string]bool{"config": true}
	var thresholds []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) {
		if thresholdFlag(f.Name) {
			thresholds = append(thresholds, f)
			done[f.Name] = true
		}
	})
	for _, sec := range exampleSections {
		fmt.Fprintf(&b, "\n# --- %s ---\n", sec.title)
		for _, name := range sec.flags {
			if f := fs.Lookup(name); f != nil && !done[name] {
				writeExampleFlag(&b, f)
				done[name] = true
			}
		}
	}
	var other []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) {
		if !done[f.Name] && f.Name != "archive" {
			other = append(other, f)
		}
	})
	if len(other) > 0 {
		b.WriteString("\n# --- Other settings ---\n")
		for _, f := range other {
			writeExampleFlag(&b, f)
		}
	}
	b.WriteString(`
# --- Thresholds ---
# confirm-*: when a failing target is confirmed broken (what --fail-on new
# reports). drift-*: the content-drift bands.
[thresholds]
`)
	for _, f := range thresholds {
		writeExampleFlag(&b, f)
	}
	b.WriteString(`
# --- Per-host overrides ---
# match: "example.org" (any port), "example.org:8080", or "*.example.org".
# concurrency and delay apply to the crawl and the checks (for checks,
# concurrency cannot exceed per-host); headers go only to that host;
# exclude: regexps over the URL path, neither crawled nor checked.
#
# [[host]]
# match = "staging.example.org"
# concurrency = 1
# delay = "2s"
# headers = { Authorization = "Bearer CHANGE-ME" }
# exclude = ["^/private/", "^/logout"]
`)
	if fs.Lookup("archive") != nil {
		b.WriteString(`
# --- Archives ---
# One table per archive; without any, the defaults are used. name alone
# selects a default archive (ia, timetravel) whose options you change.
#
# [[archive]]
# name = "ia"
# rate = "30/min"
#
# [[archive]]
# name = "local"
# timegate = "https://archive.example.org/timegate/"
# timemap = "https://archive.example.org/timemap/link/"
# rate = "60/min"
`)
	}
	return b.String()
}

// writeExampleFlag writes a flag's usage as a comment and its default as
// a TOML setting.
func writeExampleFlag(b *strings.Builder, f *flag.Flag) {
	_, usage := flag.UnquoteUsage(f)
	fmt.Fprintf(b, "\n# %s\n%s = %s\n", strings.ReplaceAll(usage, "\n", "\n# "), f.Name, tomlValue(f))
}

// tomlValue renders a flag's default value in TOML: booleans and integers
// bare, lists as arrays, everything else (durations, sizes, floats kept
// exact) as strings the flag parses.
func tomlValue(f *flag.Flag) string {
	if l, ok := f.Value.(*listFlag); ok {
		parts := make([]string, len(*l))
		for i, s := range *l {
			parts[i] = strconv.Quote(s)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	if g, ok := f.Value.(flag.Getter); ok {
		switch v := g.Get().(type) {
		case bool:
			return strconv.FormatBool(v)
		case int, int64, uint, uint64:
			return fmt.Sprint(v)
		}
	}
	return strconv.Quote(f.DefValue)
}
