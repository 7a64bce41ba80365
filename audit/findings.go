package audit

import (
	"fmt"
	"maps"
	"net/url"
	"strings"
)

// LinkUse is what the findings rule needs of one link: where it is, what
// it points to and its #fragment.
type LinkUse struct {
	LinkID  int64
	PageURL string // the linking page's final URL
	// Fragment is the link's href after the first '#' ("" when none).
	Fragment string
	// WantFragment says the target's anchors were collected for this
	// link's fragment (a page of the audited site, or any target with
	// external fragments checked); a fragment is judged only then.
	WantFragment bool
}

// LinkFindings is the findings rule for one link and its target's check:
// a broken target gives a finding with the check's verdict; a moved
// target with a replacement gives a link-maintenance record; a fragment
// of a fetched HTML target that names no element of anchors gives a
// fragment-missing finding. anchors is nil when the target's anchors are
// unknown (no fragment finding then). "top" always exists (HTML
// standard: it scrolls to the top of the page). It is pure.
func LinkFindings(runID int64, l LinkUse, c *Check, anchors map[string]bool) ([]Finding, *Maintenance) {
	if c == nil {
		return nil, nil
	}
	var (
		out []Finding
		fix *Maintenance
	)
	switch {
	case c.Verdict.Broken():
		out = append(out, Finding{RunID: runID, PageURL: l.PageURL, LinkID: l.LinkID, Target: c.URL, Verdict: c.Verdict,
			Message: VerdictMessage(c)})
	case c.Verdict == VerdictMoved && c.Replacement != "":
		fix = &Maintenance{RunID: runID, Source: l.PageURL, Target: c.URL, Replacement: c.Replacement, Status: FirstStatus(c)}
	}
	fetched := c.Verdict == VerdictOK || c.Verdict == VerdictRedirected || c.Verdict == VerdictMoved
	if l.Fragment != "" && l.WantFragment && fetched && anchors != nil {
		frag, _ := url.PathUnescape(l.Fragment)
		if !anchors[l.Fragment] && !anchors[frag] && !strings.EqualFold(l.Fragment, "top") {
			out = append(out, Finding{RunID: runID, PageURL: l.PageURL, LinkID: l.LinkID, Target: c.URL,
				Verdict: VerdictFragmentMissing, Fragment: l.Fragment,
				Message: fmt.Sprintf("no element with id or name %q in the target page", l.Fragment)})
		}
	}
	return out, fix
}

// CodeInvalidURL is the code of the diagnostic extraction records on a
// link whose URL attribute does not parse as a URL (crawler/extract and
// crawler/markdown write it; such a link is stored without a target).
const CodeInvalidURL = "invalid-url"

// invalidURLPhrase separates, in the message of a CodeInvalidURL
// diagnostic, the attribute as written from the parser's reason
// (`href="http://[::1" is not a valid URL: <reason>`).
const invalidURLPhrase = " is not a valid URL: "

// InvalidURLFinding is the finding of a link whose URL is not valid,
// made from the CodeInvalidURL diagnostic extraction recorded on it: the
// link's own verdict VerdictInvalidURL, its target the href as written,
// and the message "invalid URL: " followed by the parser's reason (the
// diagnostic's message after the attribute it quotes, or all of it when
// it does not have that form). It is pure.
func InvalidURLFinding(runID int64, l LinkRef, d Diagnostic) Finding {
	reason := d.Message
	if i := strings.LastIndex(reason, invalidURLPhrase); i >= 0 && i+len(invalidURLPhrase) < len(reason) {
		reason = reason[i+len(invalidURLPhrase):]
	}
	if reason == "" {
		reason = "the URL does not parse"
	}
	return Finding{RunID: runID, PageURL: l.PageURL, LinkID: l.LinkID, Target: l.Href, Verdict: VerdictInvalidURL,
		Message: "invalid URL: " + reason}
}

// InvalidURLOccurrencePrefix starts the Occurrence target of a link whose
// URL does not parse (InvalidURLOccurrence). It holds a space, which no
// normalized URL does.
const InvalidURLOccurrencePrefix = "invalid-url "

// InvalidURLOccurrence is the Occurrence target of a link whose URL does
// not parse, which has no normalized URL: its href as extraction wrote it
// (and the store keeps it), after InvalidURLOccurrencePrefix. An old
// invalid link is then old under --fail-on introduced like any other.
func InvalidURLOccurrence(href string) string { return InvalidURLOccurrencePrefix + href }

// AnchorSet turns a list of anchors into the set LinkFindings reads; nil
// stays nil (anchors unknown).
func AnchorSet(anchors []string) map[string]bool {
	if anchors == nil {
		return nil
	}
	set := make(map[string]bool, len(anchors))
	for _, a := range anchors {
		set[a] = true
	}
	return set
}

// VerdictMessage is a finding's message for a check: its reason, else
// the verdict with the HTTP status; then the verdict's FixAdvice, if any.
func VerdictMessage(c *Check) string {
	msg := string(c.Verdict)
	switch {
	case c.Reason != "":
		msg = c.Reason
	case c.Status > 0:
		msg = fmt.Sprintf("%s (HTTP %d)", c.Verdict, c.Status)
	}
	if a := FixAdvice(c.Verdict); a != "" {
		msg += ". Fix: " + a
	}
	return msg
}

// FirstStatus is the status of a check's first response: the first
// redirect hop's, else the final one's.
func FirstStatus(c *Check) int {
	if len(c.Redirects) > 0 {
		return c.Redirects[0].Status
	}
	return c.Status
}

// CheckCounts is what the summary of a run's checking counts.
type CheckCounts struct {
	// Targets is the number of unique targets; Fetched those checked with
	// requests of this run, FromCrawl those judged from the crawl's
	// response (pages of the site), Reused those whose earlier result was
	// reused (--max-age).
	Targets, Fetched, FromCrawl, Reused int
	// Verdicts counts targets by verdict, plus fragment-missing findings
	// (a verdict of links, not of targets).
	Verdicts map[Verdict]int
	// Findings and Fixes are the findings and link-maintenance records
	// derived; Fragments the fragment-missing findings among Findings,
	// InvalidURLs the invalid-url ones.
	Findings, Fixes, Fragments, InvalidURLs int
}

// Tally counts one check into the summary.
func (s *CheckCounts) Tally(c *Check) {
	s.Targets++
	switch {
	case c.Reused:
		s.Reused++
	case c.FromCrawl:
		s.FromCrawl++
	default:
		s.Fetched++
	}
}

// WithVerdicts returns the counts with the verdict counts of the run's
// targets, adding fragment-missing and invalid-url findings as their own
// verdicts (so that the summary and --fail-on count them). byTarget is not
// modified.
func (s CheckCounts) WithVerdicts(byTarget map[Verdict]int) CheckCounts {
	s.Verdicts = maps.Clone(byTarget)
	if s.Verdicts == nil {
		s.Verdicts = map[Verdict]int{}
	}
	if s.Fragments > 0 {
		s.Verdicts[VerdictFragmentMissing] += s.Fragments
	}
	if s.InvalidURLs > 0 {
		s.Verdicts[VerdictInvalidURL] += s.InvalidURLs
	}
	return s
}

// Failing counts what --fail-on fails on: the targets (and fragment
// findings) whose verdict is in set.
func (s CheckCounts) Failing(set map[Verdict]bool) int {
	n := 0
	for v, c := range s.Verdicts {
		if set[v] {
			n += c
		}
	}
	return n
}
