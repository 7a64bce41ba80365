package archives

import (
	"context"
	"html"
	"strings"
	"time"

	"github.com/linkrot/linkrot/archives/memento"
	"github.com/linkrot/linkrot/audit"
)

// Suggestion reasons.
const (
	ReasonNoRobustData   = "no-robustness-data"
	ReasonBrokenMemento  = "broken-with-memento"
	ReasonUseIdentifier  = "use-identifier"
	maxSuggestionTextLen = 300
)

// suggestions derives ready-to-paste links:
//   - a broken link with a memento (any distance; its datetime is in the
//     suggestion) gets a Robust Link whose href is the memento, so the link
//     works again, with data-originalurl the dead resource;
//   - a hyperlink to another site without robustness data whose target is
//     alive gets a Robust Link keeping its href, dated the day linkrot
//     first saw the link, with the nearest representative memento as
//     data-versionurl when there is one;
//   - a hyperlink to an access URI whose target declares a resolving
//     identifier gets that identifier as href.
func (s *stage) suggestions(nr map[int64]*near, ids map[int64][]identResult) {
	for i := range s.in.Links {
		l := &s.in.Links[i]
		c := s.in.Checks[l.TargetID]
		n := nr[l.ID]
		text := l.Link.Text
		switch b := n.bestMemento(); {
		case broken(c) && b != nil:
			orig := expectedOriginal(l)
			dateOnly := n.want.from != "versiondate" || l.Link.Robust.VersionDateOnly
			s.emitSuggestion(audit.Suggestion{
				LinkID: l.ID, PageURL: l.PageURL, Href: b.URL, Text: text, Reason: ReasonBrokenMemento,
				OriginalURL: orig, VersionDate: n.want.at, VersionURL: b.URL,
				HTML: robustHTML(b.URL, orig, n.want.at, dateOnly, b.URL, b.Datetime, text),
			})
		case alive(c) && s.suggestible(l) && n != nil:
			sg := audit.Suggestion{
				LinkID: l.ID, PageURL: l.PageURL, Href: l.Link.Href, Text: text, Reason: ReasonNoRobustData,
				OriginalURL: l.TargetURL, VersionDate: n.want.at,
			}
			var mt time.Time
			if b != nil && b.Representative {
				sg.VersionURL, mt = b.URL, b.Datetime
			}
			sg.HTML = robustHTML(l.Link.Href, l.TargetURL, n.want.at, true, sg.VersionURL, mt, text)
			s.emitSuggestion(sg)
		}
		for _, r := range ids[l.TargetID] {
			// Hyperlinks only, and not one that names the identifier
			// already.
			if !r.check.Resolves || l.Link.Resource || l.Link.Element != "a" && l.Link.Element != "area" ||
				sameResource(r.check.Identifier, l.TargetURL) {
				continue
			}
			s.emitSuggestion(audit.Suggestion{
				LinkID: l.ID, PageURL: l.PageURL, Href: r.check.Identifier, Text: text, Reason: ReasonUseIdentifier,
				OriginalURL: l.TargetURL,
				HTML:        `<a href="` + html.EscapeString(r.check.Identifier) + `">` + linkText(text, r.check.Identifier) + `</a>`,
			})
			break
		}
	}
}

func (s *stage) emitSuggestion(sg audit.Suggestion) {
	sg.RunID = s.in.RunID
	s.count(func(sum *Summary) { sum.Suggestions[sg.Reason]++ })
	if s.sink.Suggestion != nil {
		s.sink.Suggestion(sg)
	}
}

// robustHTML writes a Robust Link (robust-links spec §2-3): href,
// data-originalurl, data-versiondate (a date when dateOnly, else a
// datetime, ISO 8601 in UTC) and, when mementoURL is set,
// data-versionurl with the memento's datetime. Attribute values and text
// are HTML-escaped; an empty text shows href.
func robustHTML(href, original string, versionDate time.Time, dateOnly bool, mementoURL string, mementoTime time.Time, text string) string {
	var b strings.Builder
	b.WriteString(`<a href="`)
	b.WriteString(html.EscapeString(href))
	b.WriteString(`" data-originalurl="`)
	b.WriteString(html.EscapeString(original))
	b.WriteString(`" data-versiondate="`)
	if dateOnly {
		b.WriteString(versionDate.UTC().Format("2006-01-02"))
	} else {
		b.WriteString(versionDate.UTC().Format("2006-01-02T15:04:05Z"))
	}
	b.WriteString(`"`)
	if mementoURL != "" {
		b.WriteString(` data-versionurl="`)
		b.WriteString(html.EscapeString(mementoURL))
		if !mementoTime.IsZero() {
			b.WriteString(" " + mementoTime.UTC().Format("2006-01-02T15:04:05Z"))
		}
		b.WriteString(`"`)
	}
	b.WriteString(">")
	b.WriteString(linkText(text, href))
	b.WriteString("</a>")
	return b.String()
}

func linkText(text, href string) string {
	if strings.TrimSpace(text) == "" {
		text = href
	}
	return html.EscapeString(truncate(text, maxSuggestionTextLen))
}

// saveMissing asks the first archive taking capture requests to save the
// live targets of which no archive found a memento while that archive
// answered it has none (near.saveWanted), once per resource.
func (s *stage) saveMissing(ctx context.Context, nr map[int64]*near) {
	var arch *memento.Archive
	for i := range s.o.Archives {
		if s.o.Archives[i].Save != "" {
			arch = &s.o.Archives[i]
			break
		}
	}
	if arch == nil {
		s.log.Warn("--save-missing: no configured archive takes capture requests")
		return
	}
	var urls []string
	seen := s.rs.saveSeen // once per resource in the run
	for i := range s.in.Links {
		l := &s.in.Links[i]
		n := nr[l.ID]
		if !n.saveWanted(arch.Name) || !alive(s.in.Checks[l.TargetID]) || seen[n.want.uriR] {
			continue
		}
		seen[n.want.uriR] = true
		if s.o.Saved != nil && s.o.Saved(n.want.uriR) {
			continue // requested before the run was interrupted: never twice
		}
		urls = append(urls, n.want.uriR)
	}
	s.parallel(ctx, len(urls), func(i int) {
		rec := s.o.Client.Save(ctx, *arch, urls[i], s.o.Save)
		rec.RunID = s.in.RunID
		s.count(func(sum *Summary) { sum.Saves[rec.Status]++ })
		if s.sink.Save != nil {
			s.sink.Save(rec)
		}
	})
}
