package report

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/linkrot/linkrot/audit"
)

// JUnit XML (the Ant/Surefire dialect CI systems read): one test case per
// checked target, failing when the verdict is broken, skipped when linkrot
// could not tell (blocked, rate-limited, skipped, refused); plus one failing
// case per missing #fragment.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	File      string        `xml:"file,attr,omitempty"` // where the (first) link is, when known
	Line      int           `xml:"line,attr,omitempty"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure"`
	Skipped   *junitSkipped `xml:"skipped"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }

// WriteJUnit writes ds as JUnit XML.
func WriteJUnit(w io.Writer, ds *Dataset) error {
	ds = redactedDataset(ds) // URL passwords never printed (redact.go)
	ix := newIndex(ds)
	if ix.err != nil {
		return fmt.Errorf("read the run's links: %w", ix.err)
	}
	site := strings.Join(siteOf(&ds.Run), " ")
	s := junitSuite{
		Name: "linkrot run " + strconv.FormatInt(ds.Run.ID, 10) + " " + site,
		Time: seconds(ds.Run.FinishedAt.Sub(ds.Run.StartedAt)),
		Properties: []junitProperty{
			{"run", strconv.FormatInt(ds.Run.ID, 10)},
			{"site", site},
			{"generator", ds.Generator},
		},
	}
	if ds.Run.FinishedAt.IsZero() {
		s.Time = "0.000"
	}
	if !ds.Run.StartedAt.IsZero() {
		s.Timestamp = ds.Run.StartedAt.UTC().Format("2006-01-02T15:04:05")
	}
	for _, t := range ds.Targets {
		c := ix.checkByTarget[t.ID]
		if c == nil {
			continue
		}
		host := t.Host
		if host == "" {
			host = "(no host)"
		}
		tc := junitCase{Name: t.URL, Classname: host, Time: seconds(c.Timings.Total)}
		for _, li := range ix.linksByTarget[t.ID] {
			if loc := ix.linkLocation(&ix.links[li]); loc.File {
				tc.File, tc.Line = loc.Path, loc.Line
				break
			}
		}
		switch {
		case c.Verdict.Broken():
			tc.Failure = &junitFailure{Message: verdictLine(c), Type: string(c.Verdict), Text: junitEvidence(ix, t.ID, c, nil)}
			s.Failures++
		case c.Verdict == audit.VerdictBlocked || c.Verdict == audit.VerdictRateLimited ||
			c.Verdict == audit.VerdictSkipped || c.Verdict == audit.VerdictRefused:
			tc.Skipped = &junitSkipped{Message: verdictLine(c)}
			s.Skipped++
		case c.Verdict == audit.VerdictMoved:
			tc.SystemOut = "moved permanently: update the link to " + c.Replacement
		}
		s.Cases = append(s.Cases, tc)
	}
	for i := range ds.Findings {
		f := &ds.Findings[i]
		var tc junitCase
		switch f.Verdict {
		case audit.VerdictFragmentMissing:
			tc = junitCase{
				Name: f.Target + "#" + f.Fragment + " on " + f.PageURL, Classname: "fragments", Time: "0.000",
				Failure: &junitFailure{Message: f.Message, Type: string(f.Verdict), Text: "linked from " + f.PageURL},
			}
		case audit.VerdictInvalidURL:
			// The link has no target: it is a case of its own.
			tc = junitCase{
				Name: f.Target + " on " + f.PageURL, Classname: "invalid-urls", Time: "0.000",
				Failure: &junitFailure{Message: f.Message, Type: string(f.Verdict), Text: "linked from " + f.PageURL},
			}
		default:
			continue
		}
		if loc := ix.location(f.LinkID, f.PageURL); loc.File {
			tc.File, tc.Line = loc.Path, loc.Line
			tc.Failure.Text = "linked from " + loc.String()
		}
		s.Cases = append(s.Cases, tc)
		s.Failures++
	}
	traps := junitTrapCases(ds)
	s.Cases = append(s.Cases, traps...)
	s.Skipped += len(traps)
	s.Tests = len(s.Cases)
	doc := junitSuites{Name: "linkrot", Tests: s.Tests, Failures: s.Failures, Skipped: s.Skipped, Suites: []junitSuite{s}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("write junit report: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", " ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write junit report: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("write junit report: %w", err)
	}
	return nil
}

func verdictLine(c *audit.Check) string {
	s := string(c.Verdict)
	if c.Status != 0 {
		s += " (HTTP " + strconv.Itoa(c.Status) + ")"
	}
	if c.Reason != "" {
		s += ": " + c.Reason
	}
	return s
}

// junitEvidence lists a broken target's evidence and the pages linking to
// it (at most 20).
func junitEvidence(ix *index, targetID int64, c *audit.Check, _ []string) string {
	var b strings.Builder
	if ch := redirectChain(c); ch != "" {
		b.WriteString("status chain: " + ch + "\n")
	}
	if e := evidence(c); e != "" {
		b.WriteString(e + "\n")
	}
	links := ix.linksByTarget[targetID]
	b.WriteString("linked from " + strconv.Itoa(ix.pagesPerTarget[targetID]) + " pages:\n")
	total := max(ix.linksPerTgt[targetID], len(links)) // links holds the detailed ones
	for i, li := range links {
		if i == 20 {
			break
		}
		l := &ix.links[li]
		page := ""
		if l.Page >= 0 && l.Page < len(ix.ds.Pages) {
			page = ix.ds.Pages[l.Page].URL
		}
		if loc := ix.location(l.ID, page); loc.File || loc.Line > 0 {
			page = loc.String()
		}
		b.WriteString("  " + page + " (" + strconv.Quote(l.Text) + ")\n")
	}
	if shown := min(len(links), 20); total > shown {
		b.WriteString("  … " + strconv.Itoa(total-shown) + " more links\n")
	}
	return b.String()
}

// SARIF 2.1.0 (OASIS): one result per broken link occurrence, per moved
// link and per snapshot problem, located at the page that holds the link.

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool        sarifTool         `json:"tool"`
	Invocations []sarifInvocation `json:"invocations"`
	// ColumnKind is set explicitly: columns are UTF-16 code units.
	ColumnKind string        `json:"columnKind"`
	Results    []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string       `json:"id"`
	Name                 string       `json:"name"`
	ShortDescription     sarifMessage `json:"shortDescription"`
	DefaultConfiguration sarifConfig  `json:"defaultConfiguration"`
}

type sarifConfig struct {
	Level string `json:"level"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifInvocation struct {
	ExecutionSuccessful bool   `json:"executionSuccessful"`
	StartTimeUTC        string `json:"startTimeUtc,omitempty"`
	EndTimeUTC          string `json:"endTimeUtc,omitempty"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             sarifMessage      `json:"message"`
	Locations           []sarifLocation   `json:"locations"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
	Properties          map[string]any    `json:"properties"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId,omitempty"`
}

// sarifRegion is where a link is: its line and UTF-16 start column.
type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
}

// sarifLocationOf is the physical location of loc.
func sarifLocationOf(rp *repoPaths, loc Location) sarifLocation {
	uri, base := sarifURI(rp, loc)
	phys := sarifPhysical{ArtifactLocation: sarifArtifact{URI: uri, URIBaseID: base}}
	if loc.Line > 0 {
		phys.Region = &sarifRegion{StartLine: loc.Line, StartColumn: loc.Column}
	}
	return sarifLocation{phys}
}

// sarifRules are the rules a result can refer to, with their level.
var sarifRules = func() []sarifRule {
	var rules []sarifRule
	for _, v := range audit.Verdicts {
		if v.Broken() {
			rules = append(rules, sarifRule{ID: string(v), Name: ruleName(string(v)),
				ShortDescription: sarifMessage{"Broken link: " + string(v)}, DefaultConfiguration: sarifConfig{"error"}})
		}
	}
	return append(rules,
		sarifRule{ID: "moved", Name: "Moved", ShortDescription: sarifMessage{"Link to a permanently moved resource: update it"}, DefaultConfiguration: sarifConfig{"warning"}},
		sarifRule{ID: string(audit.SnapshotMissing), Name: "SnapshotMissing", ShortDescription: sarifMessage{"Declared snapshot is missing from the archive"}, DefaultConfiguration: sarifConfig{"warning"}},
		sarifRule{ID: string(audit.NotAMemento), Name: "NotAMemento", ShortDescription: sarifMessage{"Declared snapshot is not a memento"}, DefaultConfiguration: sarifConfig{"warning"}},
		sarifRule{ID: string(audit.SnapshotError), Name: "SnapshotError", ShortDescription: sarifMessage{"Declared snapshot could not be fetched"}, DefaultConfiguration: sarifConfig{"note"}},
		sarifRule{ID: "snapshot-datetime-mismatch", Name: "SnapshotDatetimeMismatch", ShortDescription: sarifMessage{"Snapshot datetime differs from the declared one"}, DefaultConfiguration: sarifConfig{"warning"}},
		sarifRule{ID: "snapshot-original-mismatch", Name: "SnapshotOriginalMismatch", ShortDescription: sarifMessage{"Snapshot is of another original URL"}, DefaultConfiguration: sarifConfig{"warning"}},
	)
}()

func ruleName(id string) string {
	var b strings.Builder
	for _, p := range strings.Split(id, "-") {
		if p != "" {
			b.WriteString(strings.ToUpper(p[:1]) + p[1:])
		}
	}
	return b.String()
}

func fingerprint(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// WriteSARIF writes ds as a SARIF 2.1.0 log.
func WriteSARIF(w io.Writer, ds *Dataset) error {
	ds = redactedDataset(ds) // URL passwords never printed (redact.go)
	ix := newIndex(ds)
	if ix.err != nil {
		return fmt.Errorf("read the run's links: %w", ix.err)
	}
	ruleIdx := map[string]int{}
	for i, r := range sarifRules {
		ruleIdx[r.ID] = i
	}
	rules := sarifRules
	if len(ds.CrawlTraps) > 0 {
		rules = append(rules[:len(rules):len(rules)], trapRule)
		ruleIdx[trapRule.ID] = len(rules) - 1
	}
	run := sarifRun{
		Tool: sarifTool{Driver: sarifDriver{Name: "linkrot", Version: ds.Run.Version,
			InformationURI: "https://github.com/linkrot/linkrot", Rules: rules}},
		Invocations: []sarifInvocation{{ExecutionSuccessful: ds.Run.Status != audit.RunFailed,
			StartTimeUTC: sarifTime(ds.Run.StartedAt), EndTimeUTC: sarifTime(ds.Run.FinishedAt)}},
		ColumnKind: "utf16CodeUnits",
		Results:    []sarifResult{},
	}
	// The log is written as json.Encoder with SetIndent("", " ") would
	// write it, with its results streamed one at a time: the part before
	// and after the (empty) results array, and each result between.
	head, err := json.MarshalIndent(sarifLog{Schema: "https://json.schemastore.org/sarif-2.1.0.json", Version: "2.1.0",
		Runs: []sarifRun{run}}, "", " ")
	if err != nil {
		return fmt.Errorf("write sarif report: %w", err)
	}
	const empty = `"results": []`
	cut := bytes.LastIndex(head, []byte(empty))
	if cut < 0 {
		return errors.New("write sarif report: no results array")
	}
	const indent = "    " // results are elements of runs[0].results
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.Write(head[:cut])
	bw.WriteString(`"results": [`)
	n := 0
	var werr error
	rp := newRepoPaths()
	// result adds a result located at loc on page (the page URL keeps
	// the fingerprint stable whatever the position); level "" is the
	// rule's.
	result := func(rule, level string, loc Location, page, msg string, props map[string]any, fp ...string) {
		if werr != nil {
			return
		}
		r := rules[ruleIdx[rule]]
		if level == "" {
			level = r.DefaultConfiguration.Level
		}
		b, err := json.MarshalIndent(sarifResult{
			RuleID: rule, RuleIndex: ruleIdx[rule], Level: level, Message: sarifMessage{msg},
			Locations:           []sarifLocation{sarifLocationOf(rp, loc)},
			PartialFingerprints: map[string]string{"linkrot/v1": fingerprint(append([]string{rule, page}, fp...)...)},
			Properties:          props,
		}, indent, " ")
		if err != nil {
			werr = err
			return
		}
		if n > 0 {
			bw.WriteByte(',')
		}
		n++
		bw.WriteString("\n" + indent)
		bw.Write(b)
	}
	for i := range ds.Findings {
		f := &ds.Findings[i]
		props := map[string]any{"target": f.Target}
		if l := ix.findingLink(f); l != nil {
			props["anchorText"] = l.Text
			props["href"] = l.Href
			props["element"] = l.Element
			props["attr"] = l.Attr
			props["kind"] = string(l.Rule().Kind)
		}
		if f.Verdict == audit.VerdictFragmentMissing {
			props["fragment"] = f.Fragment
		}
		if ix.old(f) {
			props["baseline"] = "old"
			props["history"] = ix.historyNote(f.Target)
		} else if ds.Baseline != nil {
			props["baseline"] = "introduced"
		}
		result(string(f.Verdict), ix.level(f), ix.location(f.LinkID, f.PageURL), f.PageURL, ix.findingText(f), props, f.Target, f.Fragment)
	}
	for _, m := range ds.Fixes {
		result("moved", "", ix.fixLocation(m), m.Source, "Link to "+m.Target+" moved permanently ("+strconv.Itoa(m.Status)+"): link to "+m.Replacement+" instead",
			map[string]any{"target": m.Target, "replacement": m.Replacement}, m.Target)
	}
	// Snapshot problems of every link, streamed.
	var snaps []snapshotRow
	err = ix.eachLink(func(l *Link) error {
		snaps = ix.linkSnapshotRows(snaps[:0], -1, l)
		page := ""
		if len(snaps) > 0 && l.Page >= 0 && l.Page < len(ds.Pages) {
			page = ds.Pages[l.Page].URL
		}
		for _, r := range snaps {
			if r.verdict == string(Unchecked) {
				continue
			}
			props := map[string]any{"snapshot": r.declared, "source": r.source, "href": l.Href}
			loc := ix.linkLocation(l)
			if r.verdict != string(audit.SnapshotOK) {
				result(r.verdict, "", loc, page, "Snapshot "+r.declared+" of the link to "+l.Href+": "+r.verdict+reasonSuffix(r.reason), props, r.declared)
			}
			if r.flags&1 != 0 {
				result("snapshot-datetime-mismatch", "", loc, page, "Snapshot "+r.declared+" is dated "+csvTime(r.mementoTime)+", the link declares "+csvTime(r.declaredTime), props, r.declared)
			}
			if r.flags&2 != 0 {
				result("snapshot-original-mismatch", "", loc, page, "Snapshot "+r.declared+" is of "+r.actualOriginal+", the link declares "+r.declaredOriginal, props, r.declared)
			}
		}
		return werr
	})
	if err == nil {
		err = werr
	}
	for i := range ds.CrawlTraps {
		if err != nil {
			break
		}
		t := &ds.CrawlTraps[i]
		result(audit.FindingCrawlTrap, "", ix.pageLocation(t.PageURL), t.PageURL, t.Message()+"; first URL cut: "+t.Example,
			map[string]any{"trap": string(t.Kind), "pattern": t.Pattern, "cut": t.Cut, "limit": t.Limit, "example": t.Example}, string(t.Kind), t.Pattern)
		err = werr
	}
	if err != nil {
		return fmt.Errorf("write sarif report: %w", err)
	}
	if n > 0 {
		bw.WriteString("\n" + indent[:3] + "]")
	} else {
		bw.WriteString("]")
	}
	bw.Write(head[cut+len(empty):])
	bw.WriteByte('\n') // json.Encoder ends with a newline
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write sarif report: %w", err)
	}
	return nil
}

func reasonSuffix(r string) string {
	if r == "" {
		return ""
	}
	return " (" + r + ")"
}

func sarifTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// WriteMarkdown writes a short summary for a CI job page: the run's
// counts and the top broken targets.
func WriteMarkdown(w io.Writer, ds *Dataset) error {
	ds = redactedDataset(ds) // URL passwords never printed (redact.go)
	ix := newIndex(ds)
	if ix.err != nil {
		return fmt.Errorf("read the run's links: %w", ix.err)
	}
	var b strings.Builder
	counts := ix.verdictCounts()
	broken := 0
	for v, n := range counts {
		if v.Broken() {
			broken += n
		}
	}
	drift := 0
	for _, d := range ix.driftByTarget {
		if drifted(d.Band) {
			drift++
		}
	}
	invalid := ix.invalidURLs()
	site := strings.Join(siteOf(&ds.Run), ", ")
	fmt.Fprintf(&b, "## linkrot: run #%d of %s\n\n", ds.Run.ID, mdEscape(site))
	switch {
	case len(ds.Checks) == 0 && invalid == 0:
		b.WriteString("No target was checked in this run.\n\n")
	case broken == 0 && invalid == 0:
		b.WriteString("No broken links. ✅\n\n")
	case broken == 0:
		fmt.Fprintf(&b, "**%s links with an invalid URL** (%s findings on pages). ❌\n\n", fmtInt(invalid), fmtInt(len(ds.Findings)))
	case invalid == 0:
		fmt.Fprintf(&b, "**%s broken targets** (%s findings on pages). ❌\n\n", fmtInt(broken), fmtInt(len(ds.Findings)))
	default:
		fmt.Fprintf(&b, "**%s broken targets**, **%s links with an invalid URL** (%s findings on pages). ❌\n\n",
			fmtInt(broken), fmtInt(invalid), fmtInt(len(ds.Findings)))
	}
	b.WriteString("| Pages | Links | Targets | Broken | Moved | Drifted |\n|---:|---:|---:|---:|---:|---:|\n")
	fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n\n", fmtInt(ds.Stats.Pages), fmtInt(ds.Stats.Links),
		fmtInt(ds.Stats.Targets), fmtInt(broken), fmtInt(counts[audit.VerdictMoved]), fmtInt(drift))
	var parts []string
	for _, v := range audit.Verdicts {
		if n := counts[v]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", v, fmtInt(n)))
		}
	}
	if invalid > 0 {
		parts = append(parts, fmt.Sprintf("%s %s", audit.VerdictInvalidURL, fmtInt(invalid)))
	}
	if len(parts) > 0 {
		b.WriteString("Verdicts: " + strings.Join(parts, " · ") + "\n\n")
	}
	writeMarkdownSince(&b, ds.Since)
	writeMarkdownLocations(&b, ix)
	writeMarkdownTraps(&b, ds)
	var top []int
	for _, ti := range ix.brokenTargets() {
		if c := ix.checkByTarget[ds.Targets[ti].ID]; c.Verdict.Broken() {
			top = append(top, ti)
		}
	}
	if len(top) > 0 {
		b.WriteString("### Top broken targets\n\n| Verdict | Pages | Target |\n|---|---:|---|\n")
		for i, ti := range top {
			if i == 10 {
				break
			}
			t := ds.Targets[ti]
			c := ix.checkByTarget[t.ID]
			v := string(c.Verdict)
			if c.Status != 0 {
				v += " (" + strconv.Itoa(c.Status) + ")"
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", v, fmtInt(ix.pagesPerTarget[t.ID]), mdEscape(t.URL))
		}
		if len(top) > 10 {
			fmt.Fprintf(&b, "\n…and %s more broken targets in the full report.\n", fmtInt(len(top)-10))
		}
		b.WriteString("\n")
		writeMarkdownAdvice(&b, ix, top[:min(len(top), 10)])
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write markdown report: %w", err)
	}
	return nil
}

// writeMarkdownAdvice writes the fix of each verdict among the targets
// listed that has advice of its own (audit.FixAdvice), once per verdict.
func writeMarkdownAdvice(b *strings.Builder, ix *index, listed []int) {
	var done []audit.Verdict
	for _, ti := range listed {
		v := ix.checkByTarget[ix.ds.Targets[ti].ID].Verdict
		if a := audit.FixAdvice(v); a != "" && !slices.Contains(done, v) {
			done = append(done, v)
			fmt.Fprintf(b, "**%s**: %s\n\n", v, mdEscape(a))
		}
	}
}

// markdownLocations is how many broken link occurrences the Markdown
// summary lists with their positions.
const markdownLocations = 50

// writeMarkdownLocations lists broken link occurrences with path:line:col
// (introduced ones first when there is a baseline), when the run has
// positions or a baseline; a web crawl without either keeps the summary
// short (the top broken targets follow).
func writeMarkdownLocations(b *strings.Builder, ix *index) {
	ds := ix.ds
	var rows []*audit.Finding
	positioned := false
	for i := range ds.Findings {
		f := &ds.Findings[i]
		rows = append(rows, f)
		if loc := ix.location(f.LinkID, f.PageURL); loc.File || loc.Line > 0 {
			positioned = true
		}
	}
	if len(rows) == 0 || (!positioned && ds.Baseline == nil) {
		return
	}
	sort.SliceStable(rows, func(i, j int) bool { return !ix.old(rows[i]) && ix.old(rows[j]) })
	b.WriteString("### Broken links\n\n")
	if ds.Baseline != nil {
		intro := 0
		for _, f := range rows {
			if !ix.old(f) {
				intro++
			}
		}
		fmt.Fprintf(b, "Compared with %s: **%s introduced by this change**, %s old (warnings).\n\n",
			mdEscape(ds.Baseline.Ref), fmtInt(intro), fmtInt(len(rows)-intro))
		b.WriteString("| Where | Verdict | Target | Change |\n|---|---|---|---|\n")
	} else {
		b.WriteString("| Where | Verdict | Target |\n|---|---|---|\n")
	}
	for i, f := range rows {
		if i == markdownLocations {
			fmt.Fprintf(b, "\n…and %s more in the full report.\n", fmtInt(len(rows)-markdownLocations))
			break
		}
		target := f.Target
		if f.Fragment != "" {
			target += "#" + f.Fragment
		}
		if f.Verdict == audit.VerdictInvalidURL {
			target += " (" + f.Message + ")"
		}
		fmt.Fprintf(b, "| `%s` | %s | %s |", strings.ReplaceAll(mdCode(ix.location(f.LinkID, f.PageURL).String()), "|", "\\|"), f.Verdict, mdEscape(target))
		if ds.Baseline != nil {
			if ix.old(f) {
				b.WriteString(" old: " + mdEscape(ix.historyNote(f.Target)) + " |")
			} else {
				b.WriteString(" **introduced** |")
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// mdCode makes s safe inside a Markdown code span in a table cell.
func mdCode(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '`' || r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
}

// writeMarkdownSince writes the "since last run" counts and up to ten of
// the changes (nothing when there is no earlier run to compare with).
func writeMarkdownSince(b *strings.Builder, d *audit.RunDiff) {
	if d == nil || d.From == 0 {
		return
	}
	drift := fmtInt(len(d.NewlyDrifted)) + " newly drifted"
	if !d.DriftAvailable {
		drift = "drift not measured"
	}
	fmt.Fprintf(b, "### Since run #%d\n\n%s newly broken · %s newly confirmed broken · %s recovered · %s · %s newly moved\n\n",
		d.From, fmtInt(len(d.NewBroken)), fmtInt(len(d.NewlyConfirmed)), fmtInt(len(d.Recovered)), drift, fmtInt(len(d.NewlyMoved)))
	if d.Empty() {
		return
	}
	b.WriteString("| Change | Now | Before | Target |\n|---|---|---|---|\n")
	shown, total := 0, 0
	for _, l := range []struct {
		name  string
		cs    []audit.Change
		drift bool
	}{
		{"newly broken", d.NewBroken, false}, {"newly confirmed", d.NewlyConfirmed, false},
		{"recovered", d.Recovered, false}, {"newly drifted", d.NewlyDrifted, true}, {"newly moved", d.NewlyMoved, false},
	} {
		for _, c := range l.cs {
			total++
			if shown == 10 {
				continue
			}
			shown++
			now, before := string(c.Verdict), string(c.Previous)
			if c.Status != 0 {
				now += " (" + strconv.Itoa(c.Status) + ")"
			}
			if l.drift {
				now, before = c.Band, c.PreviousBand
			}
			if before == "" {
				before = "—"
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s |\n", l.name, now, before, mdEscape(c.URL))
		}
	}
	if total > shown {
		fmt.Fprintf(b, "\n…and %s more changes in the full report.\n", fmtInt(total-shown))
	}
	b.WriteString("\n")
}

// mdEscape makes hostile text inert in GitHub-flavoured Markdown table
// cells: markup characters are backslash-escaped, HTML is entity-encoded
// and line breaks become spaces.
func mdEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '\n', '\r', '\t', '\u2028', '\u2029':
			b.WriteByte(' ')
		case '\\', '`', '*', '_', '{', '}', '[', ']', '(', ')', '#', '+', '!', '|', '~', '"', '\'':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			if r < 0x20 || r == 0x7f {
				continue
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}
