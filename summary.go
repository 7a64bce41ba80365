package linkrot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/linkrot/linkrot/archives"
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/crawler"
)

// The summary lines linkrot audit, crawl and check print when a run ends.

// plural returns "n word" with word made plural (an s) unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// WriteCrawlSummary writes the crawl line: the pages of the site (pc, see
// SitePages), and what the run stored of their links (s).
func WriteCrawlSummary(w io.Writer, s *audit.RunStats, pc PageCount) {
	fmt.Fprintf(w, "Crawled %s (%d failed) with %s to %s. "+
		"Robustness data: %d links with Robust Links attributes, %d with mset, %d snapshots declared, "+
		"%d identifiers (rel=identifier/cite-as), %d pwid URIs. %d diagnostics, %d redirects recorded.\n",
		plural(pc.Pages, "page"), pc.Failed, plural(s.Links, "link"), plural(s.Targets, "unique target"),
		s.RobustLinks, s.MsetLinks, s.Snapshots, s.Identifiers, s.PWIDs, s.Diagnostics, s.Redirects)
}

// NothingToCheck says in plain words why a run had no target to check:
// mode is the run's, s what it stored, pc its pages (SitePages).
func NothingToCheck(mode string, s *audit.RunStats, pc PageCount) string {
	switch {
	case pc.Pages == 0 && mode == string(Directory):
		return "Nothing to check: the directory has no " + crawler.PageTypes + " documents."
	case pc.Pages == 0:
		return "Nothing to check: no page was crawled."
	case pc.Failed == pc.Pages && pc.Pages == 1:
		return "Nothing to check: the page could not be read."
	case pc.Failed == pc.Pages:
		return fmt.Sprintf("Nothing to check: none of the %d pages could be read.", pc.Pages)
	case s.Links == 0 && pc.Pages == 1:
		return "Nothing to check: the page has no links."
	case s.Links == 0:
		return fmt.Sprintf("Nothing to check: the %d pages have no links.", pc.Pages)
	case s.Links == 1:
		return "Nothing to check: the link has no target to check."
	default:
		return fmt.Sprintf("Nothing to check: none of the %d links has a target to check.", s.Links)
	}
}

// WriteRunSummary writes the crawl line of a run (the pages of the site,
// see SitePages) and returns what the check line says when there was
// nothing to check (NothingToCheck).
func WriteRunSummary(ctx context.Context, w io.Writer, store PageLister, run *audit.Run, s *audit.RunStats) (nothing string, err error) {
	pc, err := SitePages(ctx, store, run, s)
	if err != nil {
		return "", err
	}
	WriteCrawlSummary(w, s, pc)
	return NothingToCheck(run.Mode, s, pc), nil
}

// WriteCheckSummary writes the check line of a run and its most linked
// broken targets (top, sorted in place by pages); a run without targets
// gets the line nothing says instead (NothingToCheck; "": a plain one).
func WriteCheckSummary(w io.Writer, r audit.CheckCounts, top []audit.BrokenTarget, nothing string) {
	if r.Targets == 0 {
		if nothing == "" {
			nothing = "Nothing to check: the run has no link targets."
		}
		fmt.Fprintln(w, nothing)
		return
	}
	fmt.Fprintf(w, "Checked %s (%d fetched, %d from the crawl, %d reused from earlier runs): ", plural(r.Targets, "unique target"), r.Fetched, r.FromCrawl, r.Reused)
	var parts []string
	for _, v := range audit.Verdicts {
		if n := r.Verdicts[v]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, v))
		}
	}
	fmt.Fprintf(w, "%s. %d findings, %d link-maintenance records (linkrot fixes).\n", strings.Join(parts, ", "), r.Findings, r.Fixes)
	if len(top) > 0 {
		fmt.Fprintln(w, "Top broken targets:")
		sort.SliceStable(top, func(i, j int) bool { return top[i].Pages > top[j].Pages })
		for _, b := range top {
			fmt.Fprintf(w, "  %-18s %4d pages  %s\n", b.Verdict, b.Pages, b.URL)
		}
	}
}

// WriteArchivesSummary writes the archives stage's summary lines (nothing
// when s is nil). offline (--no-archives) writes the first-seen drift
// line only.
func WriteArchivesSummary(w io.Writer, s *archives.Summary, offline bool) {
	if s == nil {
		return
	}
	bands := func(m map[string]int) string {
		var b []string
		for _, band := range []string{audit.BandUnchanged, audit.BandMinor, audit.BandMajor, audit.BandOffTopic} {
			b = append(b, fmt.Sprintf("%d %s", m[band], band))
		}
		return strings.Join(b, ", ")
	}
	if offline {
		fmt.Fprintf(w, "Drift since first seen: %s (archives not asked: --no-archives).\n", bands(s.FirstSeenBands))
		return
	}
	var parts []string
	for _, v := range []audit.SnapshotVerdict{audit.SnapshotOK, audit.SnapshotMissing, audit.SnapshotError, audit.NotAMemento} {
		parts = append(parts, fmt.Sprintf("%d %s", s.Snapshots[v], strings.TrimPrefix(string(v), "snapshot-")))
	}
	fmt.Fprintf(w, "Snapshots: %s (%d datetime mismatches, %d of another original).\n",
		strings.Join(parts, ", "), s.DatetimeMismatches, s.OriginalMismatches)
	fmt.Fprintf(w, "Mementos: %d links looked up, %d with a memento, %d with a representative memento; %d lookups failed%s; %d answers reused from earlier runs.\n",
		s.LinksLookedUp, s.LinksWithMemento, s.LinksRepresentative, s.LookupErrors, perArchive(s.LookupFailed), s.LookupsReused)
	if s.SnapshotsNotChecked > 0 {
		fmt.Fprintf(w, "Snapshots not checked (over --max-snapshots): %d.\n", s.SnapshotsNotChecked)
	}
	failed := ""
	if s.DriftErrors > 0 {
		failed = fmt.Sprintf("; %d could not be measured", s.DriftErrors)
	}
	if s.DriftNotRaw > 0 {
		failed += fmt.Sprintf("; %d measured on replayed pages (archive without raw form)", s.DriftNotRaw)
	}
	fmt.Fprintf(w, "Drift against mementos: %s%s. Since first seen: %s.\n", bands(s.Bands), failed, bands(s.FirstSeenBands))
	fmt.Fprintf(w, "Identifiers: %d checked, %d do not resolve, %d do not lead back. Suggestions: %d (linkrot suggest).",
		s.Identifiers, s.IdentifiersBroken, s.IdentifiersNoReturn,
		s.Suggestions[archives.ReasonNoRobustData]+s.Suggestions[archives.ReasonBrokenMemento]+s.Suggestions[archives.ReasonUseIdentifier])
	if len(s.Saves) > 0 {
		var sv []string
		for _, k := range sortedKeys(s.Saves) {
			sv = append(sv, fmt.Sprintf("%d %s", s.Saves[k], k))
		}
		fmt.Fprintf(w, " Save requests: %s.", strings.Join(sv, ", "))
	}
	fmt.Fprintln(w)
}

// perArchive writes " (ia 3, arquivo 1)" for nonzero counts by archive.
func perArchive(m map[string]int) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		if m[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// WriteTrapSummary writes the crawl traps of a run, if any: how many,
// the URLs they cut, and the first ten.
func WriteTrapSummary(w io.Writer, traps []audit.CrawlTrap) {
	if len(traps) == 0 {
		return
	}
	var cut int64
	for _, t := range traps {
		cut += t.Cut
	}
	fmt.Fprintf(w, "Crawl traps: %d found, %d URLs not crawled (raise or turn off a guard with --max-query-variants, --max-path-segments, --max-segment-repeats, --max-url-length, --keep-session-ids):\n", len(traps), cut)
	for i, t := range traps {
		if i == 10 {
			fmt.Fprintf(w, "  … and %d more (see the report)\n", len(traps)-10)
			break
		}
		fmt.Fprintf(w, "  %-18s %6d cut  %s  (starts on %s)\n", t.Kind, t.Cut, strings.ToValidUTF8(t.Pattern, "?"), t.PageURL)
	}
}

// WriteResuming writes which run a --resume continues (or, for a complete
// run whose report was not written, that the report is written now).
func WriteResuming(w io.Writer, run *audit.Run) {
	if run.Status == audit.RunComplete {
		fmt.Fprintf(w, "Run %d is complete but its report was not written: writing it.\n", run.ID)
		return
	}
	fmt.Fprintf(w, "Resuming run %d, started %s.\n", run.ID, run.StartedAt.Local().Format("2006-01-02 15:04:05"))
}

// SinceReader reads what changed since a run's previous run of the site.
type SinceReader interface {
	PreviousRun(ctx context.Context, runID int64) (*audit.Run, error)
	SinceLastRun(ctx context.Context, runID int64) (*audit.RunDiff, error)
}

// WriteSince writes what changed since the previous run of the site in a
// few lines, the newly confirmed broken targets listed (nothing for a
// site's first run, whose diff is not even read).
func WriteSince(ctx context.Context, w io.Writer, store SinceReader, runID int64) error {
	if _, err := store.PreviousRun(ctx, runID); errors.Is(err, audit.ErrNotFound) {
		return nil
	}
	d, err := store.SinceLastRun(ctx, runID)
	if err != nil {
		return err
	}
	if d.From == 0 {
		return nil
	}
	drift := fmt.Sprintf("%d newly drifted", len(d.NewlyDrifted))
	if !d.DriftAvailable {
		drift = "drift not measured"
	}
	fmt.Fprintf(w, "Since run %d: %d newly broken, %d newly confirmed broken, %d recovered, %d newly moved, %s.\n",
		d.From, len(d.NewBroken), len(d.NewlyConfirmed), len(d.Recovered), len(d.NewlyMoved), drift)
	for _, c := range d.NewlyConfirmed {
		fmt.Fprintf(w, "  confirmed  %-18s %s\n", c.Verdict, c.URL)
	}
	return nil
}

// ParseFailOn reads a --fail-on list of verdicts (comma-separated):
// "broken" is every broken verdict, "none" and "" add nothing. An unknown
// verdict is a *SettingsError. "new" and "introduced" are not verdicts:
// callers take them out first.
func ParseFailOn(s string) (map[audit.Verdict]bool, error) {
	out := map[audit.Verdict]bool{}
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		switch p {
		case "", "none":
			continue
		case "broken":
			for _, v := range audit.Verdicts {
				if v.Broken() {
					out[v] = true
				}
			}
			continue
		}
		if !slices.Contains(audit.Verdicts, audit.Verdict(p)) {
			return nil, settingsErrorf("--fail-on: unknown verdict %q", p)
		}
		out[audit.Verdict(p)] = true
	}
	return out, nil
}

// WritePruned writes what linkrot prune removed (or, with dryRun, would
// remove): the runs by ID, their targets' histories being kept.
func WritePruned(w io.Writer, pruned []int64, dryRun bool) {
	if len(pruned) == 0 {
		fmt.Fprintln(w, "No run to remove.")
		return
	}
	verb := "Removed"
	if dryRun {
		verb = "Would remove"
	}
	ids := make([]string, len(pruned))
	for i, id := range pruned {
		ids[i] = strconv.FormatInt(id, 10)
	}
	fmt.Fprintf(w, "%s %d runs: %s. Target histories are kept.\n", verb, len(ids), strings.Join(ids, ", "))
}
