// Package textsim turns an HTML page into comparable text and measures how
// alike two texts are. It is the heart of linkrot's content checks: the
// soft-404 detector compares a page with the answer to a URL that cannot
// exist, and drift measurement compares a page with its earlier self.
//
// The package is hand-written on purpose, with no similarity library behind
// it, so that every number it produces can be explained from this source:
//
//   - MainText extracts the visible text of a page's main content.
//   - Words splits text into lower-cased Unicode word tokens.
//   - Shingles and Jaccard give the resemblance of two texts (Broder 1997):
//     the Jaccard index of their sets of hashed k-word shingles.
//   - SimHash and Hamming give a 64-bit fingerprint of a text (Charikar 2002)
//     whose Hamming distance to another fingerprint estimates how far apart
//     the two texts are, without keeping the texts.
//
// Hashes are 64-bit FNV-1a, so fingerprints are stable across runs,
// machines and versions of Go. All functions are pure and safe for
// concurrent use.
package textsim
