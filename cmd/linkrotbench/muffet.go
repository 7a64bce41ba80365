package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"slices"
)

// muffetReport is muffet's JSON output, normalised to compare with the
// other checkers.
type muffetReport struct {
	pages      int      // pages listed (those with an error, without --verbose)
	broken     []string // URLs that failed, fragment dropped, sorted, distinct
	anchors    int      // links whose page answered but lacks the fragment's id
	unparsable int      // links muffet could not parse as URLs
}

// muffetPage is one element of muffet's --format json output: a page and
// its links (only the failed ones unless --verbose: those carry "error",
// the others "status").
type muffetPage struct {
	URL   string `json:"url"`
	Links []struct {
		URL   string  `json:"url"`
		Error *string `json:"error"`
	} `json:"links"`
}

// missingID is muffet's error for a link whose page answered but has no
// element with the fragment's id or name.
var missingID = regexp.MustCompile(`^id #.* not found$`)

// parseMuffet reads muffet's JSON output (one array of pages) and
// normalises it to the comparison's terms: a failed link's URL with its
// fragment dropped, each URL once however many pages (or fragments)
// linked to it, as the plain checker and linkrot report a target. Two
// kinds of failure are counted apart, not as broken URLs, because the
// other checkers do not report them: a link whose page answered but
// lacks the fragment's id (muffet checks fragments; the URL itself is not
// broken), and a link muffet could not parse (it reports the raw string
// before filtering, so an excluded external URL can appear; the plain
// checker skips such links).
func parseMuffet(r io.Reader) (muffetReport, error) {
	var m muffetReport
	dec := json.NewDecoder(r)
	var pages []muffetPage
	if err := dec.Decode(&pages); err != nil {
		return m, fmt.Errorf("muffet's JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return m, fmt.Errorf("muffet's JSON: more after the array of pages")
	}
	m.pages = len(pages)
	seen := map[string]bool{}
	for _, p := range pages {
		for _, l := range p.Links {
			if l.Error == nil {
				continue // a link that worked (--verbose)
			}
			u, err := url.Parse(l.URL)
			switch {
			case err != nil:
				m.unparsable++
				continue
			case u.Fragment != "" && missingID.MatchString(*l.Error):
				m.anchors++
				continue
			}
			u.Fragment, u.RawFragment = "", ""
			if s := u.String(); !seen[s] {
				seen[s] = true
				m.broken = append(m.broken, s)
			}
		}
	}
	slices.Sort(m.broken)
	return m, nil
}
