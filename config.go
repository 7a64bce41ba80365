package linkrot

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
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

// ConfigFile is what a configuration file holds besides flag values.
type ConfigFile struct {
	// URL is the positional argument (a URL, or a directory made absolute
	// against the file's directory), "" when not set.
	URL string
	// Hosts are the [[host]] tables: Match, PerHost (concurrency), Delay,
	// Headers and Exclude set.
	Hosts []HostSettings
}

// StringList is a repeatable string flag: each Set appends. ApplyConfig
// and ExampleConfig treat flags of this type as lists (TOML arrays).
type StringList []string

func (l *StringList) String() string     { return strings.Join(*l, ",") }
func (l *StringList) Set(v string) error { *l = append(*l, v); return nil }

// configKeys that are not flag names.
const (
	keyURL        = "url"
	keyHost       = "host"
	keyArchive    = "archive"
	keyThresholds = "thresholds"
)

// ApplyConfig parses the TOML configuration file b and sets, in fs, every
// flag the file names that was not set on the command line (fs.Visit), so
// command-line flags win. dir (the file's directory) resolves relative
// paths. A key naming no flag of fs is an error unless others holds it:
// others are the flag names of the other commands one file also serves
// (linkrot audit's, for crawl and check), skipped silently. Flags are set
// in key order, so a file applies the same way every time.
func ApplyConfig(fs *flag.FlagSet, b []byte, dir string, others map[string]bool) (*ConfigFile, error) {
	var raw map[string]any
	if _, err := toml.NewDecoder(bytes.NewReader(b)).Decode(&raw); err != nil {
		return nil, err
	}
	setOnCommandLine := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { setOnCommandLine[f.Name] = true })
	cfg := &ConfigFile{}

	apply := func(key string, v any) error {
		f := fs.Lookup(key)
		if f == nil {
			if others[key] {
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
		if _, ok := f.Value.(*StringList); !ok && len(vals) != 1 {
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
			cfg.URL = s
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
			cfg.Hosts = hosts
		case keyArchive:
			specs, err := configArchives(v)
			if err != nil {
				return nil, err
			}
			if fs.Lookup("archive") == nil {
				if others["archive"] {
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

// isDatabaseURL reports whether a path flag's value is a PostgreSQL URL
// (kept as is, not joined to the file's directory).
func isDatabaseURL(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
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

func configHosts(v any) ([]HostSettings, error) {
	list, ok := v.([]map[string]any)
	if !ok {
		return nil, fmt.Errorf("host: want [[host]] tables")
	}
	var out []HostSettings
	for i, t := range list {
		var h HostSettings
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

// ExampleConfig returns a commented example configuration file for the
// flags of fs (linkrot audit's): every flag with its usage and default
// value, grouped in sections, plus commented [[host]] and [[archive]]
// tables. Applied with ApplyConfig to a fresh fs it leaves every flag at
// its default.
func ExampleConfig(fs *flag.FlagSet) string {
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
	if l, ok := f.Value.(*StringList); ok {
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
