package maintain

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/linkrot/linkrot/audit"
)

// FixFormats are the formats WriteFixes writes.
var FixFormats = []string{"text", "json", "unlinkr"}

// WriteFixes writes the link-maintenance proposals of run runID (what
// linkrot fixes prints): fixes are the links to update, held the links to
// identifiers that redirect elsewhere and are never replaced (Proposals).
// "text" lists both for a person, grouped by page; "json" writes only the
// fixes, so a consumer applying the list never sees an identifier, and
// "unlinkr" the fixes as UNLINKR lines of the HTTP link-maintenance
// protocol; both note each held link on notes instead. Any other format
// is an error.
func WriteFixes(w, notes io.Writer, format string, runID int64, fixes, held []Proposal) error {
	switch format {
	case "json", "unlinkr":
		for _, r := range held {
			fmt.Fprintf(notes, "linkrot: not proposed: %s on %s (%s)\n", r.Target, r.Source, r.Evidence)
		}
		if format == "json" {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			return enc.Encode(fixes)
		}
		for _, r := range fixes {
			fmt.Fprintf(w, "UNLINKR %s %s %s\n", r.Source, r.Target, r.Replacement)
		}
		return nil
	case "text":
	default:
		return fmt.Errorf("unknown fixes format %q (text, json or unlinkr)", format)
	}
	if len(fixes) == 0 {
		fmt.Fprintf(w, "Run %d: no links to moved resources.\n", runID)
	} else {
		fmt.Fprintf(w, "Run %d: %d links to update.\n", runID, len(fixes))
	}
	last := ""
	for _, r := range fixes {
		if r.Source != last {
			fmt.Fprintf(w, "\n%s\n", r.Source)
			last = r.Source
		}
		fmt.Fprintf(w, "  %s\n    → %s  (%d)\n    evidence: %s\n", r.Target, r.Replacement, r.Status, r.Evidence)
		if r.Claimant != "" {
			fmt.Fprintf(w, "    UNLINKR from %s: %s\n", Printable(r.Claimant), Printable(r.ClaimNote))
		}
	}
	if len(held) > 0 {
		fmt.Fprintf(w, "\n%d links to identifiers redirect elsewhere; an identifier is never replaced by a location (check them by hand):\n", len(held))
		for _, r := range held {
			fmt.Fprintf(w, "  %s on %s\n    redirects to %s  (%d)\n    why kept: %s\n", r.Target, r.Source, r.Replacement, r.Status, r.Evidence)
		}
	}
	return nil
}

// WriteOpenClaims lists the UNLINKR claims linkrot serve received that the
// run's checks did not bear out (not Confirmed): never proposed as fixes.
// Every string came from a notification and is written Printable.
func WriteOpenClaims(w io.Writer, claims []audit.Claim) {
	var open []audit.Claim
	for _, c := range claims {
		if !c.Confirmed {
			open = append(open, c)
		}
	}
	if len(open) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%d UNLINKR claims received by linkrot serve that its checks did not bear out (not proposed):\n", len(open))
	for _, c := range open {
		fmt.Fprintf(w, "  %s on %s\n", Printable(c.Target), Printable(c.Source))
		if c.Replacement != "" {
			fmt.Fprintf(w, "    claimed replacement %s\n", Printable(c.Replacement))
		}
		fmt.Fprintf(w, "    from %s at %s: %s\n", Printable(c.Claimant), c.ClaimedAt.Format("2006-01-02 15:04"), Printable(c.Note))
	}
}
