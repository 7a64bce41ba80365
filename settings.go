package linkrot

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"regexp"
	"strings"
	"time"

	"github.com/linkrot/linkrot/check"
	"github.com/linkrot/linkrot/crawler"
	"github.com/linkrot/linkrot/drift"
	"github.com/linkrot/linkrot/politeness"
)

// SettingsVersion is the version of the Settings a run stores.
const SettingsVersion = 1

// Settings are what decides what a run records, as plain data: a front
// end fills them (the linkrot command from its flags and configuration
// file, a worker or a server from a request), the run stores them (JSON,
// Store.SaveRunSettings) so that resuming it uses the same ones, and
// Start and Open build the run from them (its crawler's and checker's
// options, CrawlOptions and CheckOptions, and its archives stage). A
// zero field means the package default of the option it sets (a zero
// crawl-trap guard, Check.Retries or Check.Workers: see their fields);
// the linkrot command's defaults are its flags'. Header values of host
// rules are secrets and are never stored (see HostSettings).
type Settings struct {
	// Version is SettingsVersion (0 in settings stored by an older
	// linkrot, which cannot be resumed).
	Version int   `json:"version"`
	Input   Input `json:"input"`
	// PerHost, UserAgent, Timeout and MaxRedirects bind the crawl and the
	// checks alike.
	PerHost      int           `json:"per_host"`
	UserAgent    string        `json:"user_agent"`
	Timeout      time.Duration `json:"timeout"`
	MaxRedirects int           `json:"max_redirects"`

	Crawl    CrawlSettings   `json:"crawl"`
	Check    CheckSettings   `json:"check"`
	Archives ArchiveSettings `json:"archives"`
	// Hosts are per-host overrides ([[host]] tables).
	Hosts []HostSettings `json:"hosts,omitempty"`
}

// CrawlSettings are the settings of the crawl (crawler.Options).
type CrawlSettings struct {
	AllowDomains []string      `json:"allow_domains,omitempty"`
	Include      []string      `json:"include,omitempty"` // regexps
	Exclude      []string      `json:"exclude,omitempty"` // regexps
	MaxDepth     int           `json:"max_depth"`
	MaxPages     int           `json:"max_pages"`
	IgnoreRobots bool          `json:"ignore_robots"`
	NoIgnore     bool          `json:"no_ignore"`
	Delay        time.Duration `json:"delay"`
	MaxBody      int64         `json:"max_body"`
	// The crawl-trap guards: 0 turns one off.
	MaxSegmentRepeats int `json:"max_segment_repeats"`
	MaxPathSegments   int `json:"max_path_segments"`
	MaxQueryVariants  int `json:"max_query_variants"`
	MaxURLLength      int `json:"max_url_length"`
	// SessionParams are session-id parameters besides the crawler's
	// defaults.
	SessionParams  []string `json:"session_params,omitempty"`
	KeepSessionIDs bool     `json:"keep_session_ids"`

	// DirListing answers a folder of a local directory that has no index
	// file with a listing of its entries (crawler.Options.DirListing).
	// It is left out of the stored settings when false, so that the
	// settings of runs without it keep their fingerprint.
	DirListing bool `json:"dir_listing,omitempty"`
}

// CheckSettings are the settings of the live checks (check.Options and
// the Config fields of the checking stage).
type CheckSettings struct {
	Workers      int           `json:"workers"`
	HostDelay    time.Duration `json:"host_delay"`
	Retries      int           `json:"retries"` // 0: none
	MaxRetryWait time.Duration `json:"max_retry_wait"`
	MaxBody      int64         `json:"max_body"`
	AllowPrivate bool          `json:"allow_private"`
	Skip         []string      `json:"skip,omitempty"` // regexps
	NoSoft404    bool          `json:"no_soft404"`
	// ExternalFragments and MaxAge are Config's.
	ExternalFragments bool          `json:"external_fragments"`
	MaxAge            time.Duration `json:"max_age"`
}

// ArchiveSettings are the settings of the archives stage: Stage builds
// the stage (robust.Stage) from them.
type ArchiveSettings struct {
	// Off runs the stage offline: first-seen drift only.
	Off bool `json:"off"`
	// Archives are archive specs (archive.ParseArchive), PWIDs pwid
	// registry entries, WARCs local web archives.
	Archives     []string         `json:"archives,omitempty"`
	PWIDs        []string         `json:"pwids,omitempty"`
	WARCs        []string         `json:"warcs,omitempty"`
	TimeMap      bool             `json:"timemap"`
	MaxDistance  time.Duration    `json:"max_distance"`
	SaveMissing  bool             `json:"save_missing"`
	SavePoll     time.Duration    `json:"save_poll"`
	Workers      int              `json:"workers"`
	FetchRate    string           `json:"fetch_rate"`
	Shingle      int              `json:"shingle"`
	Thresholds   drift.Thresholds `json:"thresholds"`
	MaxSnapshots int              `json:"max_snapshots"`
	MaxAge       time.Duration    `json:"max_age"`
}

// HostSettings is a per-host override: limits and headers, and URL paths
// (regexps over what follows the authority) neither crawled nor checked.
// Stored settings have no header values: only their names and a hash of
// the values (HeaderHash), so that other values make other settings;
// resuming a run needs them from elsewhere (the configuration file).
type HostSettings struct {
	politeness.HostRule
	Exclude     []string `json:"exclude,omitempty"`
	HeaderNames []string `json:"header_names,omitempty"`
	HeaderHash  string   `json:"header_hash,omitempty"`
}

// ErrOldSettings is returned by ParseSettings for settings stored by an
// older linkrot.
var ErrOldSettings = errors.New("settings stored by an older linkrot")

// ParseSettings reads stored settings.
func ParseSettings(b []byte) (Settings, error) {
	var s Settings
	if err := json.Unmarshal(b, &s); err != nil {
		return Settings{}, fmt.Errorf("settings: %w", err)
	}
	if s.Version != SettingsVersion {
		return Settings{}, fmt.Errorf("%w (version %d)", ErrOldSettings, s.Version)
	}
	return s, nil
}

// Stored returns the settings as a run stores them (JSON, header values
// left out) and their fingerprint: runs with the same settings have the
// same fingerprint.
func (s Settings) Stored() (fingerprint string, b []byte) {
	s.Version = SettingsVersion
	hosts := make([]HostSettings, len(s.Hosts))
	for i, h := range s.Hosts {
		h.Headers = nil
		hosts[i] = h
	}
	s.Hosts = hosts
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("linkrot: marshal settings: %v", err)) // plain data only
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16]), b
}

// compile compiles the regexps of a list, naming the setting (flag) in
// errors.
func compile(name string, l []string) ([]*regexp.Regexp, error) {
	var out []*regexp.Regexp
	for _, s := range l {
		re, err := regexp.Compile(s)
		if err != nil {
			return nil, fmt.Errorf("--%s %q: %v", name, s, err)
		}
		out = append(out, re)
	}
	return out, nil
}

// offIfZero maps a setting's 0 ("off") to the crawler's negative "off"
// (its 0 means the default).
func offIfZero(n int) int {
	if n <= 0 {
		return -1
	}
	return n
}

// CrawlOptions returns the crawler's options of the settings, host rules
// included. Errors name the linkrot flag of the setting at fault.
func (s *Settings) CrawlOptions(log *slog.Logger) (crawler.Options, error) {
	c := s.Crawl
	inc, err := compile("include", c.Include)
	if err != nil {
		return crawler.Options{}, err
	}
	exc, err := compile("exclude", c.Exclude)
	if err != nil {
		return crawler.Options{}, err
	}
	if s.PerHost < 1 {
		return crawler.Options{}, errors.New("--per-host must be at least 1")
	}
	if c.MaxDepth < 0 || c.MaxPages < 0 || s.MaxRedirects < 0 {
		return crawler.Options{}, errors.New("--max-depth, --max-pages and --max-redirects must not be negative")
	}
	var session []string
	if len(c.SessionParams) > 0 {
		session = append(append([]string{}, crawler.DefaultSessionParams...), c.SessionParams...)
	}
	o := crawler.Options{
		AllowDomains: c.AllowDomains,
		NoIgnore:     c.NoIgnore,
		DirListing:   c.DirListing,
		Include:      inc,
		Exclude:      exc,
		MaxDepth:     c.MaxDepth,
		MaxPages:     c.MaxPages,
		IgnoreRobots: c.IgnoreRobots,
		PerHost:      s.PerHost,
		Delay:        c.Delay,
		UserAgent:    s.UserAgent,
		Timeout:      s.Timeout,
		MaxBody:      c.MaxBody,
		MaxRedirects: s.MaxRedirects,
		Observe:      check.Observer(0),
		Logger:       log,

		MaxSegmentRepeats: offIfZero(c.MaxSegmentRepeats),
		MaxPathSegments:   offIfZero(c.MaxPathSegments),
		MaxQueryVariants:  offIfZero(c.MaxQueryVariants),
		MaxURLLength:      offIfZero(c.MaxURLLength),
		SessionParams:     session,
		KeepSessionIDs:    c.KeepSessionIDs,
	}
	rules, exclude, err := s.hostRules()
	if err != nil {
		return crawler.Options{}, err
	}
	o.Hosts, o.Exclude = rules, append(o.Exclude, exclude...)
	return o, nil
}

// CheckOptions returns the checker's options of the settings, host rules
// included. Errors name the linkrot flag of the setting at fault.
func (s *Settings) CheckOptions(log *slog.Logger) (check.Options, error) {
	c := s.Check
	skip, err := compile("skip", c.Skip)
	if err != nil {
		return check.Options{}, err
	}
	retries := c.Retries
	if retries == 0 {
		retries = -1 // check.Options: 0 means "default", negative means none
	}
	if c.Workers < 1 || s.PerHost < 1 {
		return check.Options{}, errors.New("--workers and --per-host must be at least 1")
	}
	if c.MaxBody > 64<<20 { // parsing HTML costs many times the body read
		return check.Options{}, fmt.Errorf("--check-max-body %d is above the 64MiB limit", c.MaxBody)
	}
	o := check.Options{
		Workers:        c.Workers,
		PerHost:        s.PerHost,
		HostDelay:      c.HostDelay,
		Retries:        retries,
		MaxRetryWait:   c.MaxRetryWait,
		Timeout:        s.Timeout,
		MaxRedirects:   s.MaxRedirects,
		MaxBody:        c.MaxBody,
		UserAgent:      s.UserAgent,
		AllowPrivate:   c.AllowPrivate,
		Exclude:        skip,
		DisableSoft404: c.NoSoft404,
		Logger:         log,
	}
	rules, exclude, err := s.hostRules()
	if err != nil {
		return check.Options{}, err
	}
	o.Hosts, o.Exclude = rules, append(o.Exclude, exclude...)
	return o, nil
}

// hostRules returns the host rules and the patterns of the URLs they
// exclude.
func (s *Settings) hostRules() ([]politeness.HostRule, []*regexp.Regexp, error) {
	var rules []politeness.HostRule
	var exclude []*regexp.Regexp
	for _, h := range s.Hosts {
		rules = append(rules, h.HostRule)
		res, err := h.excludes()
		if err != nil {
			return nil, nil, err
		}
		exclude = append(exclude, res...)
	}
	return rules, exclude, nil
}

// excludes returns the rule's excluded paths as regexps over whole URLs.
func (h HostSettings) excludes() ([]*regexp.Regexp, error) {
	var out []*regexp.Regexp
	for _, ex := range h.Exclude {
		re, err := hostExcludeRegexp(h.Match, ex)
		if err != nil {
			return nil, fmt.Errorf("host %s: exclude %q: %v", h.Match, ex, err)
		}
		out = append(out, re)
	}
	return out, nil
}

// hostExcludeRegexp turns a host rule's path regexp into one over whole
// URLs of the matching hosts: the path pattern applies to what follows the
// authority, its ^ anchoring at the path's start.
func hostExcludeRegexp(match, pathRE string) (*regexp.Regexp, error) {
	if _, err := regexp.Compile(pathRE); err != nil {
		return nil, err
	}
	m := strings.ToLower(strings.TrimSpace(match))
	var host string
	if d, ok := strings.CutPrefix(m, "*."); ok {
		host = `([^/@]+\.)?` + regexp.QuoteMeta(d) + `(:[0-9]+)?`
	} else if _, _, err := net.SplitHostPort(m); err == nil {
		host = regexp.QuoteMeta(m) // host and port
	} else {
		host = regexp.QuoteMeta(m) + `(:[0-9]+)?`
	}
	p := strings.TrimPrefix(pathRE, "^")
	anchored := p != pathRE
	pathPart := `(/[^?#]*)?` // any path before the pattern
	if anchored {
		pathPart = ``
	}
	return regexp.Compile(`(?i)^https?://` + host + pathPart + `(?-i:` + p + `)`)
}
