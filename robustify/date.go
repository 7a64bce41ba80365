package robustify

import (
	"bytes"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"golang.org/x/net/html"

	"github.com/linkrot/linkrot/crawler/extract"
)

// LinkDate is the date a link was made: the value data-versiondate
// carries (robust-links 3.3), at the granularity the linker has (3.5: a
// date is never turned into an invented datetime).
type LinkDate struct {
	// Time is the instant in UTC; noon UTC of the day when DateOnly
	// (robust-links 3.3: a date means noon UTC).
	Time time.Time
	// DateOnly is set when only the day is known.
	DateOnly bool
	// Source says where the date comes from: "mtime" (the file's
	// modification time), "now" (the run's time: a link made now, with
	// a fresh capture), "declared" (the link's own data-versiondate),
	// "last-modified" (an HTTP Last-Modified header) or the page's
	// statement ("meta article:modified_time", "time in header", ...).
	Source string
}

// IsZero reports whether no date is known.
func (d LinkDate) IsZero() bool { return d.Time.IsZero() }

// String writes d in the Robust Links ABNF (6.1): iso8601-date
// (YYYY-MM-DD) when only the day is known, else iso8601-datetime
// (YYYY-MM-DDThh:mm:ssZ, to the second).
func (d LinkDate) String() string {
	if d.DateOnly {
		return d.Time.UTC().Format("2006-01-02")
	}
	return d.Time.UTC().Format("2006-01-02T15:04:05Z")
}

// DateTime returns the date of an instant known to the second: t in UTC,
// truncated to the second.
func DateTime(t time.Time, source string) LinkDate {
	return LinkDate{Time: t.UTC().Truncate(time.Second), Source: source}
}

// FileDate is the default linking date of a file's links: its last
// modification time (robust-links 3.5 names a page's last modification
// date as a plausible linking date), to the second.
func FileDate(_ string, info fs.FileInfo, _ []byte) LinkDate {
	return DateTime(info.ModTime(), "mtime")
}

// PageOrFileDate is the date the page states (PageDate), else the file's
// modification time.
func PageOrFileDate(rel string, info fs.FileInfo, doc []byte) LinkDate {
	if d, ok := PageDate(doc, nil); ok {
		return d
	}
	return FileDate(rel, info, doc)
}

// ParseLinkDate reads a data-versiondate value (any form
// extract.ParseVersionDate understands, leniently written ones included);
// false when it is empty or unusable.
func ParseLinkDate(s, source string) (LinkDate, bool) {
	t, dateOnly, _ := extract.ParseVersionDate("data-versiondate", s)
	if t.IsZero() {
		return LinkDate{}, false
	}
	return LinkDate{Time: t.UTC(), DateOnly: dateOnly, Source: source}, true
}

// Page statements of modification and publication, in the order they are
// preferred: a modification date covers links added in the last edit; a
// publication date is the next best. Names are matched case-insensitively.
var pageDateMeta = []string{
	"article:modified_time", "dcterms.modified", "dc.date.modified", "og:updated_time",
	"article:published_time", "dcterms.created", "dcterms.issued", "dc.date.created",
	"dc.date.issued", "dcterms.date", "dc.date",
}

// maxPageDateTags bounds the tokens PageDate reads: its statements sit in
// <head> and the first <header>, near the top of a page.
const maxPageDateTags = 20000

// PageDate returns the date a page states for itself (its last
// modification, else its publication), the linking date of links made
// in it when no better one is known (robust-links 3.5):
//
//   - <meta property="article:modified_time">, dcterms.modified,
//     DC.date.modified, og:updated_time;
//   - <meta property="article:published_time">, dcterms.created,
//     dcterms.issued, DC.date.created, DC.date.issued, dcterms.date,
//     DC.date (name or property, any case);
//   - the first <time datetime> inside a <header> element;
//   - the HTTP Last-Modified header, when header is given (a crawled
//     page).
//
// Values are read with the Robust Links datetime parser, leniently (an
// ISO 8601 offset is converted to UTC, a date stays a date). Unusable
// values are skipped. false when the page states nothing usable.
func PageDate(doc []byte, header http.Header) (LinkDate, bool) {
	found := map[string]LinkDate{} // by meta name
	var headerTime LinkDate
	z := html.NewTokenizer(bytes.NewReader(doc))
	inHeader := 0
	for n := 0; n < maxPageDateTags; n++ {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		if tt == html.EndTagToken {
			if name, _ := z.TagName(); string(name) == "header" && inHeader > 0 {
				inHeader--
			}
			continue
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		name, hasAttr := z.TagName()
		attrs := map[string]string{}
		for hasAttr {
			var k, v []byte
			k, v, hasAttr = z.TagAttr()
			if _, dup := attrs[string(k)]; !dup {
				attrs[string(k)] = string(v)
			}
		}
		switch string(name) {
		case "header":
			if tt == html.StartTagToken {
				inHeader++
			}
		case "meta":
			key := strings.ToLower(strings.TrimSpace(attrs["property"]))
			if key == "" {
				key = strings.ToLower(strings.TrimSpace(attrs["name"]))
			}
			if key == "" {
				continue
			}
			if _, ok := found[key]; ok {
				continue
			}
			if d, ok := ParseLinkDate(attrs["content"], "meta "+key); ok {
				found[key] = d
			}
		case "time":
			if inHeader > 0 && headerTime.IsZero() {
				if d, ok := ParseLinkDate(attrs["datetime"], "time in header"); ok {
					headerTime = d
				}
			}
		}
	}
	for _, m := range pageDateMeta {
		if d, ok := found[m]; ok {
			return d, true
		}
	}
	if !headerTime.IsZero() {
		return headerTime, true
	}
	if header != nil {
		if t, err := http.ParseTime(header.Get("Last-Modified")); err == nil && !t.IsZero() {
			return DateTime(t, "last-modified"), true
		}
	}
	return LinkDate{}, false
}
