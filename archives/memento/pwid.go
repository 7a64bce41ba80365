package memento

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/linkrot/linkrot/audit"
)

// Registry maps pwid archive ids to replay URL templates, resolving a pwid
// (urn:pwid:archive.org:2018-02-22T11:54:11Z:page:https://ipres2018.org/)
// to the URL of the memento it names. A template holds the placeholders:
//
//	{timestamp}  the archival time as 14 digits (YYYYMMDDhhmmss)
//	{raw}        "id_" for content spec "part" (the item's own bytes), else ""
//	{item}       the archived item as written (a URI or an archive's id)
//
// Archive ids are compared case-insensitively (pwid-uri draft §7).
type Registry map[string]string

// DefaultRegistry returns the built-in table: archive.org (the Wayback
// Machine) and webarchiv.onb.ac.at (the Austrian National Library), whose
// pwid ⇄ URL pairs the ONB resolver documents (PwidController.java, quoted
// in shared/notes/archive-protocols.md A4).
func DefaultRegistry() Registry {
	return Registry{
		"archive.org":         "https://web.archive.org/web/{timestamp}{raw}/{item}",
		"webarchiv.onb.ac.at": "https://webarchiv.onb.ac.at/web/{timestamp}{raw}/{item}",
	}
}

// ParseRegistryEntry reads a --pwid-archive value "archive-id=template".
func ParseRegistryEntry(s string) (id, template string, err error) {
	id, template, ok := strings.Cut(s, "=")
	id = strings.ToLower(strings.TrimSpace(id))
	template = strings.TrimSpace(template)
	if !ok || id == "" || template == "" {
		return "", "", fmt.Errorf("pwid archive %q: want archive-id=template", s)
	}
	if err := checkTemplate(template); err != nil {
		return "", "", fmt.Errorf("pwid archive %q: %w", s, err)
	}
	return id, template, nil
}

// errUnknownArchive is returned (wrapped) by Resolve for a pwid whose
// archive id is not in the registry.
var errUnknownArchive = errors.New("archive id not in the pwid registry")

// Resolve returns the replay URL of p: its template filled in. The result
// must be an absolute http(s) URL.
func (r Registry) Resolve(p audit.PWID) (string, error) {
	tmpl, ok := r[strings.ToLower(p.ArchiveID)]
	if !ok {
		return "", fmt.Errorf("pwid %.200q: %w (%q)", p.Raw, errUnknownArchive, p.ArchiveID)
	}
	if p.Datetime.IsZero() {
		return "", fmt.Errorf("pwid %.200q: no archival time", p.Raw)
	}
	return expandTemplate(tmpl, Timestamp14(p.Datetime.Time), p.ContentSpec, p.Item)
}

// expandTemplate fills a pwid replay template (see Registry). Unknown or
// unterminated placeholders are errors, and so is a result that is not an
// absolute http(s) URL.
func expandTemplate(tmpl, timestamp, contentSpec, item string) (string, error) {
	if err := checkTemplate(tmpl); err != nil {
		return "", err
	}
	raw := ""
	if strings.EqualFold(contentSpec, "part") {
		raw = "id_"
	}
	var b strings.Builder
	for s := tmpl; s != ""; {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		j := strings.IndexByte(s[i:], '}')
		switch name := s[i+1 : i+j]; name {
		case "timestamp":
			b.WriteString(timestamp)
		case "raw":
			b.WriteString(raw)
		case "item":
			b.WriteString(item)
		}
		s = s[i+j+1:]
	}
	out := b.String()
	u, err := url.Parse(out)
	if err != nil {
		return "", fmt.Errorf("pwid template %q gives an invalid URL: %w", tmpl, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("pwid template %q gives %.200q, not an absolute http(s) URL", tmpl, out)
	}
	// A pwid comes from a crawled page: its item must not move the URL
	// to another host than the template's own.
	head := tmpl[:strings.IndexByte(tmpl, '{')]
	if rest := head[strings.Index(head, "://")+3:]; strings.Contains(rest, "/") {
		if tu, err := url.Parse(head); err == nil && !strings.EqualFold(tu.Host, u.Host) {
			return "", fmt.Errorf("pwid %.200q leaves the archive's host %s", item, tu.Host)
		}
	}
	return out, nil
}

// checkTemplate accepts only the known placeholders and an http(s) start.
func checkTemplate(tmpl string) error {
	if !strings.HasPrefix(tmpl, "http://") && !strings.HasPrefix(tmpl, "https://") {
		return fmt.Errorf("template %q: must start with http:// or https://", tmpl)
	}
	for s := tmpl; ; {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return fmt.Errorf("template %q: unterminated placeholder", tmpl)
		}
		switch name := s[i+1 : i+j]; name {
		case "timestamp", "raw", "item":
		default:
			return fmt.Errorf("template %q: unknown placeholder {%s} (want {timestamp}, {raw}, {item})", tmpl, name)
		}
		s = s[i+j+1:]
	}
	if !strings.Contains(tmpl, "{item}") || !strings.Contains(tmpl, "{timestamp}") {
		return fmt.Errorf("template %q: needs {timestamp} and {item}", tmpl)
	}
	return nil
}
