package archive

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// Archive is one web archive (or aggregator) linkrot asks for mementos.
type Archive struct {
	// Name identifies the archive in results ("ia", "timetravel", ...).
	Name string
	// TimeGate is the TimeGate URL of an original resource: the URI-R is
	// appended to it (MemGator's convention), or replaces "{url}" when the
	// template holds that placeholder.
	TimeGate string
	// TimeMap is the link-format TimeMap URL, built the same way; "" when
	// the archive has none.
	TimeMap string
	// Rate is the most requests per minute linkrot sends to the archive's
	// hosts (DefaultRate when 0).
	Rate float64
	// Save is the Save Page Now 2 endpoint (POST url=...; GET
	// <Save>/status/<job id>), "" when the archive takes no capture
	// requests. SaveRate is its own, stricter budget per minute
	// (DefaultSaveRate when 0).
	Save     string
	SaveRate float64
}

// Rates used when an Archive leaves them zero.
const (
	DefaultRate     = 60.0
	DefaultSaveRate = 3.0
)

// Defaults returns the default archives: the Internet Archive's Wayback
// Machine and the Memento TimeTravel aggregator.
//
// Wayback Machine ("ia"):
//   - TimeGate https://web.archive.org/web/<URI-R> and TimeMap
//     https://web.archive.org/web/timemap/link/<URI-R>: the endpoints the
//     Internet Archive advertises in its own Memento Link headers (also in
//     the TimeMap fixtures of the aiu parser, shared/notes/archive-protocols.md
//     A2); the TimeGate answers 302 to the closest capture (RFC 7089 pattern
//     2.1).
//   - 30 requests a minute: the Internet Archive limits its API endpoints
//     per IP; its staff gave "an average of 60/min; if 429s are ignored for
//     more than a minute we block the IP at the firewall for 1 hour"
//     (edgi-govdata-archiving/wayback#137, 2023), and since June 2026 the
//     /cdx and /web/timemap endpoints share one pool limited to 30 a minute
//     (edgi-govdata-archiving/wayback#206, #208). linkrot stays at the
//     lower figure for every request to web.archive.org.
//   - Save Page Now 2 at https://web.archive.org/save (SPN2 API draft by
//     V. Banos), at 3 captures a minute: the limit reported for
//     anonymous submissions (akamhy/waybackpy#187, 2023).
//
// Memento TimeTravel ("timetravel"):
//   - TimeGate https://timetravel.mementoweb.org/timegate/<URI-R> and
//     TimeMap https://timetravel.mementoweb.org/timemap/link/<URI-R>:
//     sections 3 and 4 of the Time Travel API guide
//     (timetravel.mementoweb.org/guide/api), the default of the Memento
//     project's own py-memento-client (DEFAULT_TIMEGATE_BASE_URI), and the
//     TimeMaps quoted in machawk1/Mink#86.
//   - Caution: the Los Alamos Research Library took mementoweb.org and its
//     services down at the end of 2025 (mementoweb.github.io/about, 2026;
//     dessant/web-archives#127). The aggregator stays in the default list
//     because it is the documented Memento aggregator, but expect its
//     lookups to be recorded as errors; replace it with --archive (a local
//     MemGator, or LANL's TimeStitch aggregator) or drop it.
//   - 60 requests a minute (no published limit).
func Defaults() []Archive {
	return []Archive{
		{
			Name:     "ia",
			TimeGate: "https://web.archive.org/web/",
			TimeMap:  "https://web.archive.org/web/timemap/link/",
			Rate:     30,
			Save:     "https://web.archive.org/save",
			SaveRate: 3,
		},
		{
			Name:     "timetravel",
			TimeGate: "https://timetravel.mementoweb.org/timegate/",
			TimeMap:  "https://timetravel.mementoweb.org/timemap/link/",
			Rate:     60,
		},
	}
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

func (a Archive) rate() float64 {
	if a.Rate > 0 {
		return a.Rate
	}
	return DefaultRate
}

func (a Archive) saveRate() float64 {
	if a.SaveRate > 0 {
		return a.SaveRate
	}
	return DefaultSaveRate
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
//	name=timegate-url[,timemap=url][,rate=N/min][,save=url][,save-rate=N/min]
//
// or the name of a default archive ("ia", "timetravel") followed by the
// same options, which override its settings. Rates are "N/min", "N/s" or
// a bare N (per minute).
func ParseArchive(spec string) (Archive, error) {
	parts := strings.Split(spec, ",")
	var a Archive
	head := strings.TrimSpace(parts[0])
	if name, tg, ok := strings.Cut(head, "="); ok {
		a = Archive{Name: strings.TrimSpace(name), TimeGate: strings.TrimSpace(tg)}
	} else {
		found := false
		for _, d := range Defaults() {
			if d.Name == head {
				a, found = d, true
			}
		}
		if !found {
			return Archive{}, fmt.Errorf("archive %q: want name=timegate-url or a default name (ia, timetravel)", spec)
		}
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
		case "rate", "save-rate":
			r, err := ParseRate(v)
			if err != nil {
				return Archive{}, fmt.Errorf("archive %q: %w", spec, err)
			}
			if strings.EqualFold(k, "rate") {
				a.Rate = r
			} else {
				a.SaveRate = r
			}
		default:
			return Archive{}, fmt.Errorf("archive %q: unknown option %q (timemap, rate, save, save-rate)", spec, k)
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
