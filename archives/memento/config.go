package memento

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Archive is one web archive (or aggregator) linkrot asks for mementos.
type Archive struct {
	// Name identifies the archive in results ("ia", "arquivo", ...).
	Name string
	// TimeGate is the TimeGate URL of an original resource: the URI-R is
	// appended to it (MemGator's convention), or replaces "{url}" when the
	// template holds that placeholder.
	TimeGate string
	// TimeMap is the link-format TimeMap URL, built the same way; "" when
	// the archive has none.
	TimeMap string
	// Rate is the archive's published (or assumed) limit in requests per
	// minute, for every endpoint not in one of Pools (DefaultRate when 0).
	// linkrot sends at most Rate·(1−Margin).
	Rate float64
	// Margin is the fraction of Rate kept free as a safety margin
	// (DefaultMargin when 0; a negative value means none).
	Margin float64
	// Pools are request pools of their own, with their own budgets:
	// endpoints an archive limits together (the Internet Archive's /cdx
	// and /web/timemap). A request belongs to the pool with the longest
	// matching prefix; the rest to the archive's main pool (Rate).
	Pools []Pool
	// Raw says how to get a memento's raw bytes (no banner, no rewritten
	// links), see RawReplay.
	Raw RawReplay
	// Save is the Save Page Now 2 endpoint (POST url=...; GET
	// <Save>/status/<job id>), "" when the archive takes no capture
	// requests. SaveRate is its own, stricter budget per minute
	// (defaultSaveRate when 0).
	Save     string
	SaveRate float64
	// Local marks a collection on this machine (--archive-warc): it is
	// asked about private and loopback URLs too (asking it leaks
	// nothing), and its requests need no budget.
	Local bool
	// Shutdown is set on presets of archives that no longer answer: why
	// and since when. Such a preset is never a default.
	Shutdown string
	// Source cites where the endpoints and budgets come from.
	Source string
}

// Pool is a set of an archive's endpoints that share one budget.
type Pool struct {
	// Name names the pool within its archive ("api", "replay").
	Name string
	// Prefixes are URL prefixes (scheme ignored, host lower-cased) of the
	// pool's requests.
	Prefixes []string
	// Rate is the published limit per minute; Margin as Archive.Margin.
	Rate   float64
	Margin float64
}

// Rates used when an Archive leaves them zero.
const (
	DefaultRate     = 60.0
	defaultSaveRate = 3.0
	// DefaultMargin is the share of an archive's published limit linkrot
	// leaves unused: 10%. Budgets are enforced by spacing requests (a
	// token bucket of capacity one), so in any window of W at most
	// W·rate·(1−margin)+1 requests start; the margin absorbs that one,
	// clock differences between linkrot and the archive, and the archive
	// counting a request when it ends rather than when it starts.
	DefaultMargin = 0.10
	// localRate is the budget of a local collection: it is no server.
	localRate = 1e6
)

// PerMinute returns what linkrot sends to the pool per minute: its
// published rate less the margin.
func (p Pool) PerMinute() float64 { return effective(p.Rate, p.Margin) }

func effective(rate, margin float64) float64 {
	if rate <= 0 {
		rate = DefaultRate
	}
	switch {
	case margin == 0:
		margin = DefaultMargin
	case margin < 0:
		margin = 0
	}
	return rate * (1 - min(margin, 0.9))
}

// MainPool returns the archive's main pool (every endpoint not in Pools).
func (a Archive) MainPool() Pool {
	return Pool{Name: "main", Rate: a.Rate, Margin: a.Margin}
}

// AllPools returns the archive's pools, the main one first, with their
// prefixes filled in (the main pool's are the TimeGate and TimeMap bases
// not covered by another pool).
func (a Archive) AllPools() []Pool {
	m := a.MainPool()
	if a.Local {
		m.Rate, m.Margin = localRate, -1
	}
	for _, s := range []string{a.TimeGate, a.TimeMap} {
		if s == "" {
			continue
		}
		covered := false
		for _, p := range a.Pools {
			for _, pre := range p.Prefixes {
				if strings.HasPrefix(prefixOf(base(s)), prefixOf(pre)) {
					covered = true
				}
			}
		}
		if !covered {
			m.Prefixes = append(m.Prefixes, base(s))
		}
	}
	return append([]Pool{m}, a.Pools...)
}

// base is the part of an endpoint template before "{url}", or all of it.
func base(tmpl string) string {
	b, _, _ := strings.Cut(tmpl, "{url}")
	return b
}

// RawReplay says how an archive serves a memento's raw bytes. Its string
// form (the raw= option of --archive) is one of:
//
//	""                          the Wayback path pattern: /<14 digits><flags>/<url>
//	                            anywhere in the path gets the id_ flag (default)
//	"none"                      no raw form (archive.today, perma.cc)
//	"pattern:<path prefix>"     mementos are <prefix><timestamp><flags>/<url>; id_ is put in
//	"template:<url>"            build the raw URL from {timestamp} (14 digits) and {url}
//	                            (the original), e.g. https://arquivo.pt/noFrame/replay/{timestamp}id_/{url}
type RawReplay string

// Raw replay kinds.
const (
	RawNone = RawReplay("none")
)

// Describe returns a short description of r for listings.
func (r RawReplay) Describe() string {
	switch {
	case r == "":
		return "id_ flag in the Wayback path (/<timestamp>id_/<url>)"
	case r == RawNone:
		return "none (replay only: drift measured on the replayed page)"
	case strings.HasPrefix(string(r), "pattern:"):
		return "id_ flag after " + strings.TrimPrefix(string(r), "pattern:") + "<timestamp>"
	case strings.HasPrefix(string(r), "template:"):
		return strings.TrimPrefix(string(r), "template:")
	}
	return string(r)
}

func (r RawReplay) validate() error {
	switch {
	case r == "", r == RawNone:
		return nil
	case strings.HasPrefix(string(r), "pattern:"):
		if !strings.HasPrefix(strings.TrimPrefix(string(r), "pattern:"), "/") {
			return errors.New("raw pattern: want pattern:/path/prefix/")
		}
		return nil
	case strings.HasPrefix(string(r), "template:"):
		t := strings.TrimPrefix(string(r), "template:")
		if !strings.Contains(t, "{url}") || !strings.Contains(t, "{timestamp}") {
			return errors.New("raw template: want {timestamp} and {url}")
		}
		u, err := url.Parse(strings.NewReplacer("{url}", "", "{timestamp}", "").Replace(t))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return errors.New("raw template: not an absolute http(s) URL")
		}
		return nil
	}
	return fmt.Errorf("raw %q: want none, pattern:/prefix/ or template:URL", string(r))
}

// RawURL returns the URL of memento m's raw bytes (original the URI-R,
// at its Memento-Datetime) and true, or m and false when the archive has
// no raw form or m does not have the archive's memento form.
func (a Archive) RawURL(m, original string, at time.Time) (string, bool) {
	r := a.Raw
	switch {
	case r == RawNone:
		return m, false
	case r == "":
		w, ok := ParseWaybackURL(m)
		if !ok {
			return m, false
		}
		w.Flags = "id_"
		return w.String(), true
	case strings.HasPrefix(string(r), "pattern:"):
		prefix := strings.TrimPrefix(string(r), "pattern:")
		i := strings.Index(m, "://")
		if i < 0 {
			return m, false
		}
		rest := m[i+3:]
		slash := strings.IndexByte(rest, '/')
		if slash < 0 || !strings.HasPrefix(rest[slash:], prefix) {
			return m, false
		}
		head := m[:i+3+slash+len(prefix)]
		tail := rest[slash+len(prefix):]
		ts := 0
		for ts < len(tail) && ts < 14 && tail[ts] >= '0' && tail[ts] <= '9' {
			ts++
		}
		end := strings.IndexByte(tail, '/')
		if ts == 0 || end < ts || !validFlags(tail[ts:end]) {
			return m, false
		}
		return head + tail[:ts] + "id_" + tail[end:], true
	case strings.HasPrefix(string(r), "template:"):
		if at.IsZero() || original == "" {
			return m, false
		}
		t := strings.TrimPrefix(string(r), "template:")
		return strings.NewReplacer("{timestamp}", at.UTC().Format("20060102150405"), "{url}", original).Replace(t), true
	}
	return m, false
}

// Defaults returns the archives a run asks when --archive is not given:
// the Internet Archive's Wayback Machine and Arquivo.pt, the two large
// public Memento archives that answer today with published limits.
// Memento TimeTravel, a default until 2025, is shut down: it is only a
// named preset (Presets).
func Defaults() []Archive {
	return []Archive{presetIA(), presetArquivo()}
}

// presetIA is the Internet Archive's Wayback Machine.
//
//   - TimeGate https://web.archive.org/web/<URI-R> and TimeMap
//     https://web.archive.org/web/timemap/link/<URI-R>: the endpoints the
//     Internet Archive advertises in its own Memento Link headers (also in
//     the TimeMap fixtures of the aiu parser, shared/notes/archive-protocols.md
//     A2); the TimeGate answers 302 to the closest capture (RFC 7089 pattern
//     2.1).
//   - API pool "api" (/cdx and /web/timemap): since June 2026 these share
//     one pool limited to 30 requests a minute per address
//     (edgi-govdata-archiving/wayback#206, #208); the maintained client
//     (edgi wayback) runs that pool at 24 a minute, and so does linkrot:
//     published 30, margin 20%. Ignoring 429s for a minute gets the
//     address blocked at the firewall for an hour, doubling on each repeat
//     (wayback#137), hence the pause-the-pool controller (Client).
//   - Replay pool (TimeGate and /web/<timestamp>/ mementos): the staff
//     figure "an average of 60/min" (wayback#137, 2023), at the same 20%
//     margin: 48 a minute.
//   - Raw replay: the id_ flag (/web/<timestamp>id_/<url>), the identity
//     mode whose bytes the CDX digest covers.
//   - Save Page Now 2 at https://web.archive.org/save (SPN2 API draft by
//     V. Banos), at 3 captures a minute: the limit reported for
//     anonymous submissions (akamhy/waybackpy#187, 2023).
func presetIA() Archive {
	return Archive{
		Name:     "ia",
		TimeGate: "https://web.archive.org/web/",
		TimeMap:  "https://web.archive.org/web/timemap/link/",
		Rate:     60,
		Margin:   0.20,
		Pools: []Pool{{
			Name:     "api",
			Prefixes: []string{"web.archive.org/cdx/", "web.archive.org/web/timemap/"},
			Rate:     30,
			Margin:   0.20,
		}},
		Save:     "https://web.archive.org/save",
		SaveRate: 3,
		Source:   "Memento endpoints from IA's own Link headers; /cdx+/web/timemap pool 30/min (edgi-govdata-archiving/wayback#206), replay 60/min (wayback#137); 20% margin",
	}
}

// presetArquivo is Arquivo.pt, the Portuguese web archive.
//
//   - TimeGate https://arquivo.pt/wayback/<URI-R> and TimeMap
//     https://arquivo.pt/wayback/timemap/link/<URI-R>: the wiki page
//     "Memento API – URL Search in Arquivo.pt" (arquivo/pwa-technologies
//     wiki), whose sample TimeMap names that TimeGate.
//   - Budgets: "CDX-server API: 250 requests/minute from the same IP
//     address; Memento API: 400 requests/minute"; "IP addresses that
//     exceed these limits will be permanently blocked" (arquivo.pt/api,
//     "API usage limits", 2025). linkrot asks only the Memento API and
//     the replay: the main pool at 400 with a 20% margin (320 a minute).
//     The raw replay endpoint (noFrame/replay) has its own published limit
//     of 4437 a minute; it is a pool of its own at the same margin.
//   - Raw replay: https://arquivo.pt/noFrame/replay/<timestamp>id_/<url>
//     ("original file of the web-archived page", same page).
func presetArquivo() Archive {
	return Archive{
		Name:     "arquivo",
		TimeGate: "https://arquivo.pt/wayback/",
		TimeMap:  "https://arquivo.pt/wayback/timemap/link/",
		Rate:     400,
		Margin:   0.20,
		Pools: []Pool{{
			Name:     "replay",
			Prefixes: []string{"arquivo.pt/noFrame/replay/"},
			Rate:     4437,
			Margin:   0.20,
		}},
		Raw:    "template:https://arquivo.pt/noFrame/replay/{timestamp}id_/{url}",
		Source: "arquivo.pt/api usage limits: Memento API 400/min, CDX 250/min, noFrame/replay 4437/min per address; 20% margin",
	}
}

// Presets returns every archive known by name to --archive NAME, defaults
// included, in listing order.
//
//   - memgator: the public MemGator aggregator at ODU
//     (https://memgator.cs.odu.edu/timegate/, /timemap/link/: MemGator
//     README, oduwsdl/MemGator), the aggregator people moved to after
//     TimeTravel. No published limit: 60 a minute with the default margin;
//     an aggregator asks every archive it knows for each lookup, so be
//     gentle. Raw replay: the mementos are other archives' URLs, so the
//     Wayback path pattern is tried on each.
//   - memgator-local: a self-hosted MemGator on its default port 1208
//     (MemGator main.go, --port default), 600 a minute.
//   - archive.today: TimeGate http://archive.today/timegate/<URI-R>,
//     TimeMap http://archive.today/timemap/<URI-R> (MemGator's archive
//     list, docs/archives.json). Captures are short ids with no raw form.
//     It publishes no limit and throttles aggressively: 10 a minute.
//   - perma: perma.cc's Memento routes timegate/<url> and
//     timemap/link/<url> (harvard-lil/perma perma_web/perma/urls.py). No
//     raw form (playback is in a sandboxed frame). 30 a minute.
//   - ukwa: the UK Web Archive's open collection,
//     https://www.webarchive.org.uk/wayback/archive/ (pywb; MemGator's
//     archive list), raw by the id_ flag; 60 a minute.
//   - loc: the Library of Congress web archives,
//     https://webarchive.loc.gov/all/ (pywb/OpenWayback; MemGator's
//     archive list), raw by the id_ flag; 60 a minute.
//   - timetravel: Memento TimeTravel (timetravel.mementoweb.org, API
//     guide sections 3 and 4). SHUT DOWN: the Los Alamos Research Library
//     took mementoweb.org and its services down at the end of 2025
//     (mementoweb.github.io/about, 2026; dessant/web-archives#127). Kept so
//     that old configurations name it; every lookup will fail.
func Presets() []Archive {
	return []Archive{
		presetIA(),
		presetArquivo(),
		{
			Name: "memgator", TimeGate: "https://memgator.cs.odu.edu/timegate/", TimeMap: "https://memgator.cs.odu.edu/timemap/link/",
			Rate: 60, Source: "MemGator README (oduwsdl/MemGator); no published limit",
		},
		{
			Name: "memgator-local", TimeGate: "http://localhost:1208/timegate/", TimeMap: "http://localhost:1208/timemap/link/",
			Rate: 600, Margin: -1, Source: "self-hosted MemGator, default port 1208 (MemGator main.go); your own server",
		},
		{
			Name: "archive.today", TimeGate: "http://archive.today/timegate/", TimeMap: "http://archive.today/timemap/",
			Rate: 10, Raw: RawNone, Source: "MemGator archive list (docs/archives.json); no published limit, throttles hard",
		},
		{
			Name: "perma", TimeGate: "https://perma.cc/timegate/", TimeMap: "https://perma.cc/timemap/link/",
			Rate: 30, Raw: RawNone, Source: "harvard-lil/perma perma_web/perma/urls.py; no published limit",
		},
		{
			Name: "ukwa", TimeGate: "https://www.webarchive.org.uk/wayback/archive/", TimeMap: "https://www.webarchive.org.uk/wayback/archive/timemap/link/",
			Rate: 60, Raw: "pattern:/wayback/archive/", Source: "MemGator archive list; pywb; no published limit",
		},
		{
			Name: "loc", TimeGate: "https://webarchive.loc.gov/all/", TimeMap: "https://webarchive.loc.gov/all/timemap/link/",
			Rate: 60, Raw: "pattern:/all/", Source: "MemGator archive list; no published limit",
		},
		{
			Name: "timetravel", TimeGate: "https://timetravel.mementoweb.org/timegate/", TimeMap: "https://timetravel.mementoweb.org/timemap/link/",
			Rate: 60, Raw: RawNone,
			Shutdown: "shut down at the end of 2025 (mementoweb.github.io/about); every lookup fails",
			Source:   "Time Travel API guide (timetravel.mementoweb.org/guide/api)",
		},
	}
}

// presetNamed returns the preset named name.
func presetNamed(name string) (Archive, bool) {
	for _, p := range Presets() {
		if p.Name == name {
			return p, true
		}
	}
	return Archive{}, false
}

func presetNames() string {
	var n []string
	for _, p := range Presets() {
		n = append(n, p.Name)
	}
	return strings.Join(n, ", ")
}

// TimeGateURL returns the TimeGate URL of uriR.
func (a Archive) TimeGateURL(uriR string) string { return expand(a.TimeGate, uriR) }

// TimeMapURL returns the TimeMap URL of uriR, or "" without a TimeMap.
func (a Archive) TimeMapURL(uriR string) string {
	if a.TimeMap == "" {
		return ""
	}
	return expand(a.TimeMap, uriR)
}

func expand(tmpl, uriR string) string {
	if strings.Contains(tmpl, "{url}") {
		return strings.ReplaceAll(tmpl, "{url}", uriR)
	}
	return tmpl + uriR
}

// PerMinute returns what linkrot sends to the archive's main pool per
// minute: its rate less the margin.
func (a Archive) PerMinute() float64 {
	if a.Local {
		return localRate
	}
	return effective(a.Rate, a.Margin)
}

func (a Archive) saveRate() float64 {
	if a.SaveRate > 0 {
		return a.SaveRate
	}
	return defaultSaveRate
}

// hosts returns the host[:port] of each endpoint of a (lower-cased).
func (a Archive) hosts() []string {
	var out []string
	for _, s := range []string{a.TimeGate, a.TimeMap, a.Save} {
		if s == "" {
			continue
		}
		u, err := url.Parse(strings.ReplaceAll(s, "{url}", ""))
		if err == nil && u.Host != "" {
			out = append(out, strings.ToLower(u.Host))
		}
	}
	return out
}

// Validate reports what is wrong with a, if anything.
func (a Archive) Validate() error {
	if !validName(a.Name) {
		return fmt.Errorf("archive name %q: use letters, digits, '.', '_' or '-'", a.Name)
	}
	check := func(what, s string, required bool) error {
		if s == "" {
			if required {
				return fmt.Errorf("archive %s: no %s URL", a.Name, what)
			}
			return nil
		}
		u, err := url.Parse(strings.ReplaceAll(s, "{url}", ""))
		if err != nil {
			return fmt.Errorf("archive %s: %s URL: %w", a.Name, what, err)
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("archive %s: %s URL %q is not an absolute http(s) URL", a.Name, what, s)
		}
		return nil
	}
	if err := check("TimeGate", a.TimeGate, true); err != nil {
		return err
	}
	if err := check("TimeMap", a.TimeMap, false); err != nil {
		return err
	}
	if err := check("save", a.Save, false); err != nil {
		return err
	}
	if a.Rate < 0 || a.SaveRate < 0 {
		return fmt.Errorf("archive %s: negative rate", a.Name)
	}
	if a.Margin >= 0.9 {
		return fmt.Errorf("archive %s: margin %v: want less than 0.9", a.Name, a.Margin)
	}
	if err := a.Raw.validate(); err != nil {
		return fmt.Errorf("archive %s: %w", a.Name, err)
	}
	return nil
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// ParseArchive reads an --archive value:
//
//	name=timegate-url[,timemap=url][,rate=N/min][,margin=F][,raw=R][,save=url][,save-rate=N/min]
//
// or the name of a preset (Presets: "ia", "arquivo", "memgator", ...)
// followed by the same options, which override its settings. raw is a
// RawReplay ("none", "pattern:/prefix/", "template:URL"); margin the
// share of rate left unused (default DefaultMargin). Rates are "N/min", "N/s" or
// a bare N (per minute).
func ParseArchive(spec string) (Archive, error) {
	parts := strings.Split(spec, ",")
	var a Archive
	head := strings.TrimSpace(parts[0])
	if name, tg, ok := strings.Cut(head, "="); ok {
		a = Archive{Name: strings.TrimSpace(name), TimeGate: strings.TrimSpace(tg)}
	} else {
		p, found := presetNamed(head)
		if !found {
			return Archive{}, fmt.Errorf("archive %q: want name=timegate-url or a preset name (%s)", spec, presetNames())
		}
		a = p
	}
	for _, p := range parts[1:] {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok {
			return Archive{}, fmt.Errorf("archive %q: option %q is not key=value", spec, p)
		}
		switch strings.ToLower(k) {
		case "timemap":
			a.TimeMap = v
		case "timegate":
			a.TimeGate = v
		case "save":
			a.Save = v
		case "raw":
			a.Raw = RawReplay(v)
		case "margin":
			m, err := strconv.ParseFloat(v, 64)
			if err != nil || m < 0 || m >= 0.9 {
				return Archive{}, fmt.Errorf("archive %q: margin %q: want a fraction from 0 to 0.9", spec, v)
			}
			if m == 0 {
				m = -1 // explicitly none
			}
			a.Margin = m
		case "rate", "save-rate":
			r, err := ParseRate(v)
			if err != nil {
				return Archive{}, fmt.Errorf("archive %q: %w", spec, err)
			}
			if strings.EqualFold(k, "rate") {
				a.Rate = r
				a.Pools = nil // a user's rate is for every endpoint
			} else {
				a.SaveRate = r
			}
		default:
			return Archive{}, fmt.Errorf("archive %q: unknown option %q (timemap, rate, margin, raw, save, save-rate)", spec, k)
		}
	}
	if err := a.Validate(); err != nil {
		return Archive{}, err
	}
	return a, nil
}

// ParseRate reads a request rate: "N/min", "N/s" or "N" (per minute), N a
// positive number. It returns requests per minute.
func ParseRate(s string) (float64, error) {
	s = strings.TrimSpace(s)
	mult := 1.0
	switch {
	case strings.HasSuffix(s, "/min"):
		s = strings.TrimSuffix(s, "/min")
	case strings.HasSuffix(s, "/m"):
		s = strings.TrimSuffix(s, "/m")
	case strings.HasSuffix(s, "/s"):
		s, mult = strings.TrimSuffix(s, "/s"), 60
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || n <= 0 || n > 1e6 {
		return 0, errors.New("rate " + strconv.Quote(s) + ": want a positive N/min or N/s")
	}
	return n * mult, nil
}
