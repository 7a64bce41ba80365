// Package study measures reference rot over a list of references: the
// URLs cited by papers, theses, court opinions or Wikipedia articles, each
// with the date it was cited. It reads the reference list (CSV, JSON
// Lines, BibTeX, CSL-JSON), turns the per-URL results of a run (live
// verdict, the archives' mementos, drift between the live page and a
// memento) into one row per reference, and writes the study's outputs:
// references.csv, summary.csv, index.html and study.json (WriteDir).
//
// The package is pure: it does no HTTP. The `linkrot study` command feeds
// it the results of linkrot's run (check, archives, drift); tests feed it
// results directly.
//
// # Definitions
//
// The definitions are those of the published studies of reference rot:
//
//   - Reference rot is link rot or content drift (Klein et al. 2014,
//     "Scholarly Context Not Found: One in Five Articles Suffers from
//     Reference Rot", PLOS ONE 9(12): e115253; Jones et al.
//     2016, "Scholarly Context Adrift: Three out of Four URI References
//     Lead to Changed Content", PLOS ONE 11(12): e0167475).
//   - Link rot: the cited URL no longer leads to content. Here: every
//     verdict audit.Verdict.Broken reports, soft-404 and parked included,
//     except timeout, which like rate-limited, blocked, skipped and
//     refused is unmeasured (Broken). Zittrain, Albert and Lessig 2014,
//     "Perma: Scoping and Addressing the Problem of Link and Reference Rot
//     in Legal Citations", Harvard Law Review Forum 127: 176, count a
//     link as rotten when it no longer leads to the cited material, which
//     is why soft 404s and parked domains count.
//   - Representative memento: a memento of the URL archived close to the
//     date the reference was made (Klein et al. 2014 and Jones et al. 2016 judge a memento
//     representative when it was captured close to the citing article's
//     date; the window's width is a parameter here). Here: the memento nearest the citation
//     within Params.Window (default 7 days before or after); see
//     Nearest for how distance and ties are decided.
//   - Content drift: the live page against the representative memento,
//     with linkrot's drift measures and bands (package drift; Jones et
//     al. 2016 compare the live page with the representative memento the
//     same way, with text similarity measures). A reference drifts when
//     its band is beyond minor: major or off-topic.
//
// A URL cited many times is judged once: the caller gives one Result per
// distinct URL and every reference to it shares it.
package study
