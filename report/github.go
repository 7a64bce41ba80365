package report

import (
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/linkrot/linkrot/audit"
)

// Baseline marks the link occurrences of a run that are old: present at
// the baseline a pull request is compared with (linkrot --fail-on
// introduced). Their findings are reported as warnings, with the target's
// history, never hidden.
type Baseline struct {
	// Ref says what the run was compared with ("git main", "database
	// ci.db, run 12").
	Ref string
	// Old holds the IDs of the links whose occurrence is old.
	Old map[int64]bool
}

// NewBaseline returns the baseline ref of the run ds reports: the links
// whose occurrence old says was there before.
func NewBaseline(ds *Dataset, ref string, old func(*audit.Link) bool) (*Baseline, error) {
	b := &Baseline{Ref: ref, Old: map[int64]bool{}}
	mark := func(l *Link) error {
		if old(&l.Link) {
			b.Old[l.ID] = true
		}
		return nil
	}
	if ds.EachLink != nil {
		if err := ds.EachLink(mark); err != nil {
			return nil, fmt.Errorf("baseline: read the run's links: %w", err)
		}
	} else {
		for i := range ds.Links {
			mark(&ds.Links[i])
		}
	}
	return b, nil
}

// AppendMarkdown appends the Markdown summary of the run ds reports to
// the file at path (the job summary of GitHub Actions).
func AppendMarkdown(path string, ds *Dataset) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("job summary: %w", err)
	}
	if err := WriteMarkdown(f, ds); err != nil {
		f.Close()
		return fmt.Errorf("job summary: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("job summary: %w", err)
	}
	return nil
}

// old reports whether the finding f is about an old occurrence.
func (ix *index) old(f *audit.Finding) bool {
	b := ix.ds.Baseline
	return b != nil && f.LinkID != 0 && b.Old[f.LinkID]
}

// Location is where a link occurrence is: the page's source file (or its
// URL when it has none) and the line and UTF-16 column of the link in it
// (0 when unknown).
type Location struct {
	Path   string
	File   bool // Path is a local file, not a URL
	Line   int
	Column int
}

// String returns "path:line:col", "path:line" or "path".
func (l Location) String() string {
	s := l.Path
	if l.Line > 0 {
		s += ":" + strconv.Itoa(l.Line)
		if l.Column > 0 {
			s += ":" + strconv.Itoa(l.Column)
		}
	}
	return s
}

// location returns where the link linkID is, on the page pageURL.
func (ix *index) location(linkID int64, pageURL string) Location {
	li, ok := ix.linkIdx[linkID]
	if !ok || linkID == 0 {
		return ix.pageLocation(pageURL)
	}
	return ix.linkLocation(&ix.links[li])
}

// pageLocation is the page pageURL as a location: its file, or its URL.
func (ix *index) pageLocation(pageURL string) Location {
	loc := Location{Path: pageURL}
	if p := ix.pageByURL(pageURL); p != nil && p.File != "" {
		loc.Path, loc.File = p.File, true
	}
	return loc
}

// linkLocation is where l is.
func (ix *index) linkLocation(l *Link) Location {
	loc := Location{Line: l.Line, Column: l.Column}
	if l.Page >= 0 && l.Page < len(ix.ds.Pages) {
		p := ix.ds.Pages[l.Page]
		loc.Path = p.URL
		if p.File != "" {
			loc.Path, loc.File = p.File, true
		}
	}
	return loc
}

func (ix *index) pageByURL(u string) *audit.Page {
	if ix.pageIdx == nil {
		ix.pageIdx = make(map[string]int, len(ix.ds.Pages))
		for i, p := range ix.ds.Pages {
			if _, ok := ix.pageIdx[p.URL]; !ok {
				ix.pageIdx[p.URL] = i
			}
		}
	}
	if i, ok := ix.pageIdx[u]; ok {
		return ix.ds.Pages[i]
	}
	return nil
}

// historyNote describes how long the target of an old occurrence has
// been broken: "broken since 2024-05-01 (run 2), 2 consecutive failed
// runs". It is "" when the history is not known.
func (ix *index) historyNote(target string) string {
	ti, ok := ix.targetByURL[target]
	if !ok {
		return ""
	}
	h := ix.historyByTarget[ix.ds.Targets[ti].ID]
	if h == nil {
		return "first seen broken in this run"
	}
	var parts []string
	switch {
	case !h.FailingSince.IsZero():
		parts = append(parts, "broken since "+h.FailingSince.UTC().Format("2006-01-02")+runSuffix(h.FailingSinceRun))
	case !h.FirstBroken.IsZero():
		parts = append(parts, "first seen broken "+h.FirstBroken.UTC().Format("2006-01-02")+runSuffix(h.FirstBrokenRun))
	}
	if h.FailedRuns > 0 {
		n := "consecutive failed runs"
		if h.FailedRuns == 1 {
			n = "failed run"
		}
		parts = append(parts, strconv.Itoa(h.FailedRuns)+" "+n)
	}
	if len(parts) == 0 {
		return "first seen broken in this run"
	}
	return strings.Join(parts, ", ")
}

func runSuffix(run int64) string {
	if run == 0 {
		return ""
	}
	return " (run " + strconv.FormatInt(run, 10) + ")"
}

// findingText is the one-line message of a finding in the CI outputs,
// naming the link's element and attribute unless it is a hyperlink
// ("<img srcset> URL is broken: ..."); for an old occurrence it says so
// and gives the target's history.
func (ix *index) findingText(f *audit.Finding) string {
	subject := linkSubject(ix.findingLink(f))
	msg := subject + " " + f.Target + " is broken: " + f.Message
	switch f.Verdict {
	case audit.VerdictFragmentMissing:
		msg = subject + " " + f.Target + "#" + f.Fragment + ": " + f.Message
	case audit.VerdictInvalidURL:
		msg = strings.TrimSuffix(subject, " to") + " " + f.Target + " cannot be followed: " + f.Message
	}
	if ix.old(f) {
		note := ix.historyNote(f.Target)
		msg += " [old link, not introduced by this change"
		if note != "" {
			msg += "; " + note
		}
		msg += "]"
	}
	return msg
}

// findingLink is the link of a finding, nil when it has none.
func (ix *index) findingLink(f *audit.Finding) *Link {
	if li, ok := ix.linkIdx[f.LinkID]; ok && f.LinkID != 0 {
		return &ix.links[li]
	}
	return nil
}

// level is the SARIF and GitHub level of a finding: error, or warning for
// an old occurrence.
func (ix *index) level(f *audit.Finding) string {
	if ix.old(f) {
		return "warning"
	}
	return "error"
}

// WriteLocations writes up to max broken link occurrences of ds as
// "path:line:col: verdict target" lines for a terminal (compilers' format,
// which editors and terminals turn into links), introduced ones first
// when there is a baseline, and says how many more there are.
func WriteLocations(w io.Writer, ds *Dataset, max int) error {
	ds = redactedDataset(ds) // URL passwords never printed (redact.go)
	ix := newIndex(ds)
	if ix.err != nil {
		return fmt.Errorf("read the run's links: %w", ix.err)
	}
	var rows []*audit.Finding
	for i := range ds.Findings {
		rows = append(rows, &ds.Findings[i])
	}
	sort.SliceStable(rows, func(i, j int) bool { return !ix.old(rows[i]) && ix.old(rows[j]) })
	var b strings.Builder
	for i, f := range rows {
		if i == max {
			fmt.Fprintf(&b, "  … %d more\n", len(rows)-max)
			break
		}
		target := f.Target
		if f.Fragment != "" {
			target += "#" + f.Fragment
		}
		line := "  " + ix.location(f.LinkID, f.PageURL).String() + ": " + string(f.Verdict) + " " + target
		if ix.old(f) {
			line += " (old: " + ix.historyNote(f.Target) + ")"
		}
		b.WriteString(sanitizeLine(line) + "\n")
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write locations: %w", err)
	}
	return nil
}

// sanitizeLine drops control characters (crawled text must not move a
// terminal's cursor or inject lines).
func sanitizeLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return -1
		}
		return r
	}, s)
}

// WriteGitHub writes the findings of ds as GitHub Actions workflow
// commands (::error / ::warning with file, line and col), which the
// runner turns into annotations on the pull request's lines: broken links
// are errors, old ones (see Baseline) warnings, links to moved resources
// notices. A page without a local file is named in the message. Values
// are escaped by the workflow-command rules: %, CR and LF in the message;
// also ':' and ',' in properties. File paths are relative to the
// repository root, as SARIF's are (see repoPaths).
func WriteGitHub(w io.Writer, ds *Dataset) error {
	ds = redactedDataset(ds) // URL passwords never printed (redact.go)
	ix := newIndex(ds)
	if ix.err != nil {
		return fmt.Errorf("read the run's links: %w", ix.err)
	}
	var b strings.Builder
	rp := newRepoPaths()
	for i := range ds.Findings {
		f := &ds.Findings[i]
		loc := ix.location(f.LinkID, f.PageURL)
		msg := ix.findingText(f)
		if !loc.File {
			msg += " (on " + loc.String() + ")"
		}
		writeCommand(&b, rp, ix.level(f), loc, "linkrot: "+string(f.Verdict), msg)
	}
	for _, m := range ds.Fixes {
		loc := ix.fixLocation(m)
		msg := "Link to " + m.Target + " moved permanently (" + strconv.Itoa(m.Status) + "): link to " + m.Replacement + " instead"
		if !loc.File {
			msg += " (on " + m.Source + ")"
		}
		writeCommand(&b, rp, "notice", loc, "linkrot: moved", msg)
	}
	for i := range ds.CrawlTraps {
		t := &ds.CrawlTraps[i]
		loc := ix.pageLocation(t.PageURL)
		msg := t.Message() + "; first URL cut: " + t.Example
		if !loc.File {
			msg += " (on " + t.PageURL + ")"
		}
		writeCommand(&b, rp, "warning", loc, "linkrot: "+audit.FindingCrawlTrap, msg)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write github report: %w", err)
	}
	return nil
}

// fixLocation locates a link-maintenance record: the first link on its
// source page to its target.
func (ix *index) fixLocation(m audit.Maintenance) Location {
	loc := Location{Path: m.Source}
	for _, li := range ix.linksByTarget[ix.targetID(m.Target)] {
		l := &ix.links[li]
		if l.Page >= 0 && l.Page < len(ix.ds.Pages) && ix.ds.Pages[l.Page].URL == m.Source {
			return ix.location(l.ID, m.Source)
		}
	}
	if p := ix.pageByURL(m.Source); p != nil && p.File != "" {
		loc.Path, loc.File = p.File, true
	}
	return loc
}

func (ix *index) targetID(u string) int64 {
	if ti, ok := ix.targetByURL[u]; ok {
		return ix.ds.Targets[ti].ID
	}
	return 0
}

func writeCommand(b *strings.Builder, rp *repoPaths, level string, loc Location, title, msg string) {
	b.WriteString("::" + level + " ")
	var props []string
	if loc.File {
		props = append(props, "file="+escapeProperty(rp.path(loc.Path)))
		if loc.Line > 0 {
			props = append(props, "line="+strconv.Itoa(loc.Line))
			if loc.Column > 0 {
				props = append(props, "col="+strconv.Itoa(loc.Column))
			}
		}
	}
	props = append(props, "title="+escapeProperty(title))
	b.WriteString(strings.Join(props, ","))
	b.WriteString("::" + escapeData(msg) + "\n")
}

// escapeData escapes a workflow command's message: % first, then CR and
// LF, as the runner's toolkit does (@actions/core escapeData).
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty escapes a workflow command's property value: the
// message escapes plus ':' and ',' (@actions/core escapeProperty).
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// sarifURI turns a location's path into a SARIF artifact URI: a file path
// relative to the repository (repoPaths) as a relative reference against
// %SRCROOT%, the repository root for a code-scanning upload; an absolute
// one that cannot be made relative as a file: URI; a page URL as is.
func sarifURI(rp *repoPaths, loc Location) (uri, baseID string) {
	if !loc.File {
		return loc.Path, ""
	}
	file := rp.path(loc.Path)
	segs := strings.Split(file, "/")
	for i, s := range segs {
		segs[i] = escapePathSegment(s)
	}
	p := strings.Join(segs, "/")
	if path.IsAbs(file) {
		return "file://" + p, ""
	}
	return p, "%SRCROOT%"
}

func escapePathSegment(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~!$&'()*+=@", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
