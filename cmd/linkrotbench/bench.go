package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// externalPattern matches the URLs of hosts with a letter in their name:
// with -dir, every checker skips them (only the site's own URLs are
// checked; the served web is all on loopback).
const externalPattern = `^https?://[^/:]*[a-zA-Z]`

// bench runs the checkers in rounds on a served web.
type bench struct {
	w            *web
	out, stderr  io.Writer
	tmp          string // the runs' files
	seed         string
	skipExternal bool // -dir: check only the site's own URLs
	workers      int
	perHost      int
	self         string // this program, run as "plain"
	linkrot      string
	muffet       string // "" when not timed
	report       bool
}

// checker is one checker's run in a round: it prints its row and returns
// its result, broken URLs included.
type checker struct {
	name string
	run  func(round int) (result, error)
}

// checkers returns the checkers the bench times: the plain checker,
// linkrot and, with -muffet, muffet, in that order.
func (b *bench) checkers() []checker {
	cs := []checker{{"plain", b.runPlain}, {"linkrot", b.runLinkrot}}
	if b.muffet != "" {
		cs = append(cs, checker{"muffet", b.runMuffet})
	}
	return cs
}

func (b *bench) runPlain(r int) (result, error) {
	out := filepath.Join(b.tmp, fmt.Sprintf("plain-%d.txt", r))
	args := []string{"plain", "-workers", fmt.Sprint(b.workers), "-per-host", fmt.Sprint(b.perHost), "-out", out, b.seed}
	res, err := b.w.measure(b.self, args, nil, b.stderr)
	if err != nil {
		return res, err
	}
	if res.broken, err = readLines(out); err != nil {
		return res, fmt.Errorf("the plain checker's broken URLs: %w", err)
	}
	res.print(b.out, r, "plain")
	return res, nil
}

func (b *bench) runLinkrot(r int) (result, error) {
	db := filepath.Join(b.tmp, fmt.Sprintf("linkrot-%d.db", r))
	args := []string{"audit", b.seed, "--db", db, "--no-archives", "--no-report", "--fail-on", "none",
		"--workers", fmt.Sprint(b.workers), "--per-host", fmt.Sprint(b.perHost), "--quiet",
		"--allow-private"} // the external hosts are on loopback too
	if b.skipExternal {
		// Only the site's own URLs, as the plain checker.
		args = append(args, "--skip", externalPattern)
	}
	res, err := b.w.measure(b.linkrot, args, nil, b.stderr)
	if err != nil {
		return res, err
	}
	if res.broken, err = brokenIn(db); err != nil {
		return res, err
	}
	if st, err := os.Stat(db); err == nil {
		res.dbBytes = st.Size()
	}
	res.print(b.out, r, "linkrot")
	if b.report {
		for _, format := range []string{"html", "json"} {
			out := filepath.Join(b.tmp, fmt.Sprintf("report-%d.%s", r, format))
			rep, err := b.w.measure(b.linkrot, []string{"report", "--db", db, "--format", format, "--out", out}, nil, b.stderr)
			if err != nil {
				return res, err
			}
			fmt.Fprintf(b.out, "       linkrot report --format %s: %.2f s wall, %.2f s CPU, peak RSS %.0f MB, %.1f MB written\n",
				format, rep.wall.Seconds(), rep.cpu.Seconds(), float64(rep.rssKB)/1024, float64(treeSize(out))/1e6)
		}
	}
	return res, nil
}

// muffetArgs are muffet's arguments: the bench's connection limits
// (-c is muffet's limit over all hosts), the plain checker's timeout,
// JSON output and, with -dir, the external URLs excluded.
func muffetArgs(seed string, workers, perHost, timeoutS int, skipExternal bool) []string {
	args := []string{"--max-connections", fmt.Sprint(workers), "--max-connections-per-host", fmt.Sprint(perHost),
		"--timeout", fmt.Sprint(timeoutS), "--format", "json"}
	if skipExternal {
		args = append(args, "--exclude", externalPattern)
	}
	return append(args, seed)
}

// runMuffet runs muffet, which exits 1 when it found broken links, and
// reads its JSON (see parseMuffet).
func (b *bench) runMuffet(r int) (result, error) {
	path := filepath.Join(b.tmp, fmt.Sprintf("muffet-%d.json", r))
	out, err := os.Create(path)
	if err != nil {
		return result{}, fmt.Errorf("muffet's output: %w", err)
	}
	defer out.Close()
	res, err := b.w.measure(b.muffet, muffetArgs(b.seed, b.workers, b.perHost, int(plainTimeout/time.Second), b.skipExternal), out, b.stderr, 1)
	if err != nil {
		return res, err
	}
	if _, err := out.Seek(0, io.SeekStart); err != nil {
		return res, fmt.Errorf("muffet's output: %w", err)
	}
	m, err := parseMuffet(out)
	if err != nil {
		return res, fmt.Errorf("muffet's output %s (a failing muffet prints its error on standard error, above): %w", path, err)
	}
	res.broken, res.muffet = m.broken, m
	res.print(b.out, r, "muffet")
	return res, nil
}

// rotation returns the order in which round r runs n checkers: rotated
// by one each round, so that each goes first in turn (with two, they
// alternate).
func rotation(n, r int) []int {
	order := make([]int, n)
	for i := range n {
		order[i] = (r + i) % n
	}
	return order
}

// summary is what the rounds measured, one value a round.
type summary struct {
	lrPlain, lrMuffet                 []float64 // wall ratios
	lrRequests, muffetRequests        []float64 // requests / minimum
	plainCPU, plainWall, lrWall       []float64 // seconds
	muffetWall                        []float64
	brokenAgree, brokenDisagreeRounds int
}

// rounds runs the checkers (the plain checker first, linkrot second,
// muffet optional third) n times, rotating their order, and prints each
// round's comparison and the medians.
func (b *bench) rounds(n int, cs []checker) (summary, error) {
	var sum summary
	fmt.Fprintf(b.out, "%-6s %-8s %9s %9s %10s %9s %10s %8s\n", "round", "checker", "wall s", "cpu s", "peak RSS", "requests", "unique", "broken")
	for r := range n {
		res := make([]result, len(cs))
		for _, i := range rotation(len(cs), r) {
			var err error
			if res[i], err = cs[i].run(r); err != nil {
				return sum, fmt.Errorf("round %d, %s: %w", r, cs[i].name, err)
			}
		}
		plainRes, lrRes := res[0], res[1]
		minimum := plainRes.unique
		ratio := lrRes.wall.Seconds() / plainRes.wall.Seconds()
		reqRatio := float64(lrRes.requests) / float64(minimum)
		sum.lrPlain = append(sum.lrPlain, ratio)
		sum.lrRequests = append(sum.lrRequests, reqRatio)
		sum.plainCPU = append(sum.plainCPU, plainRes.cpu.Seconds())
		sum.plainWall = append(sum.plainWall, plainRes.wall.Seconds())
		sum.lrWall = append(sum.lrWall, lrRes.wall.Seconds())
		if len(cs) == 2 {
			missing, extra := diff(plainRes.broken, lrRes.broken)
			fmt.Fprintf(b.out, "       wall linkrot/plain %.2f×; requests linkrot/minimum %d/%d = %.3f×; database %.1f MB; broken: %d both, %d only plain, %d only linkrot\n",
				ratio, lrRes.requests, minimum, reqRatio, float64(lrRes.dbBytes)/1e6, len(plainRes.broken)-len(missing), len(missing), len(extra))
			printSome(b.out, "only plain", missing)
			printSome(b.out, "only linkrot", extra)
			continue
		}
		mRes := res[2]
		lrMuffet := lrRes.wall.Seconds() / mRes.wall.Seconds()
		mReq := float64(mRes.requests) / float64(minimum)
		sum.lrMuffet = append(sum.lrMuffet, lrMuffet)
		sum.muffetRequests = append(sum.muffetRequests, mReq)
		sum.muffetWall = append(sum.muffetWall, mRes.wall.Seconds())
		fmt.Fprintf(b.out, "       wall linkrot/plain %.2f×, linkrot/muffet %.2f×; requests/minimum linkrot %d/%d = %.3f×, muffet %d/%d = %.3f×; database %.1f MB\n",
			ratio, lrMuffet, lrRes.requests, minimum, reqRatio, mRes.requests, minimum, mReq, float64(lrRes.dbBytes)/1e6)
		cmp := compareBroken([]string{"plain", "linkrot", "muffet"}, [][]string{plainRes.broken, lrRes.broken, mRes.broken})
		cmp.print(b.out)
		if cmp.agree() {
			sum.brokenAgree++
		} else {
			sum.brokenDisagreeRounds++
		}
		if mRes.muffet.anchors > 0 || mRes.muffet.unparsable > 0 {
			fmt.Fprintf(b.out, "       muffet also reported %s to a missing id and %s it could not parse (not compared: the others report neither)\n",
				links(mRes.muffet.anchors), links(mRes.muffet.unparsable))
		}
	}
	if len(cs) == 2 {
		fmt.Fprintf(b.out, "median wall ratio %.2f×, median request ratio %.3f×\n", median(sum.lrPlain), median(sum.lrRequests))
	} else {
		fmt.Fprintf(b.out, "median wall linkrot/plain %.2f×, linkrot/muffet %.2f× (plain %.2f s, linkrot %.2f s, muffet %.2f s); median requests/minimum linkrot %.3f×, muffet %.3f×; broken the same in %d of %d rounds\n",
			median(sum.lrPlain), median(sum.lrMuffet), median(sum.plainWall), median(sum.lrWall), median(sum.muffetWall),
			median(sum.lrRequests), median(sum.muffetRequests), sum.brokenAgree, n)
	}
	return sum, nil
}

// printSome prints up to five of urls, each after label.
func printSome(w io.Writer, label string, urls []string) {
	for i, u := range urls {
		if i == 5 {
			fmt.Fprintf(w, "         %s: ... %d in all\n", label, len(urls))
			break
		}
		fmt.Fprintf(w, "         %s: %s\n", label, u)
	}
}

// brokenComparison is which checkers found each broken URL.
type brokenComparison struct {
	names []string
	// groups maps a set of checkers (bit i: names[i]) to the URLs exactly
	// those checkers found, sorted.
	groups map[uint][]string
}

// compareBroken compares the broken URLs each checker found (sets[i] by
// names[i]; at most 8 checkers).
func compareBroken(names []string, sets [][]string) brokenComparison {
	found := map[string]uint{}
	for i, set := range sets {
		for _, u := range set {
			found[u] |= 1 << i
		}
	}
	c := brokenComparison{names: names, groups: map[uint][]string{}}
	for u, mask := range found {
		c.groups[mask] = append(c.groups[mask], u)
	}
	for _, g := range c.groups {
		slices.Sort(g)
	}
	return c
}

func (c brokenComparison) all() uint { return 1<<len(c.names) - 1 }

// agree reports whether every checker found the same broken URLs.
func (c brokenComparison) agree() bool {
	for mask := range c.groups {
		if mask != c.all() {
			return false
		}
	}
	return true
}

// label names a group: "only X" for one checker, "all but X" for all but
// one, else the checkers joined with "+".
func (c brokenComparison) label(mask uint) string {
	var in, out []string
	for i, n := range c.names {
		if mask&(1<<i) != 0 {
			in = append(in, n)
		} else {
			out = append(out, n)
		}
	}
	switch {
	case len(in) == 1:
		return "only " + in[0]
	case len(out) == 1:
		return "all but " + out[0]
	}
	return strings.Join(in, "+")
}

// print writes "broken: N in all three, N only X (each checker), N all but
// X (where any)" and up to five URLs of each group not found by all.
func (c brokenComparison) print(w io.Writer) {
	var parts []string
	parts = append(parts, fmt.Sprintf("%d in all %s", len(c.groups[c.all()]), countWord(len(c.names))))
	for i := range c.names {
		parts = append(parts, fmt.Sprintf("%d %s", len(c.groups[1<<i]), c.label(1<<i)))
	}
	var others []uint
	for mask := range c.groups {
		if mask != c.all() && mask&(mask-1) != 0 {
			others = append(others, mask)
		}
	}
	slices.Sort(others)
	for _, mask := range others {
		parts = append(parts, fmt.Sprintf("%d %s", len(c.groups[mask]), c.label(mask)))
	}
	fmt.Fprintf(w, "       broken: %s\n", strings.Join(parts, ", "))
	for i := range c.names {
		printSome(w, c.label(1<<i), c.groups[1<<i])
	}
	for _, mask := range others {
		printSome(w, c.label(mask), c.groups[mask])
	}
}

// links is "1 link" or "n links".
func links(n int) string {
	if n == 1 {
		return "1 link"
	}
	return fmt.Sprintf("%d links", n)
}

func countWord(n int) string {
	if n >= 0 && n < 10 {
		return []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}[n]
	}
	return fmt.Sprint(n)
}
