// Package drift measures content drift: how far the main text of a live
// page moved from a reference state of it (a memento near the date the
// page was linked, or the fingerprint linkrot stored when it first saw the
// page), and sorts the result into bands: unchanged, minor, major and
// off-topic.
//
// The measures are the published ones the web-archiving literature uses to
// compare mementos (AlNoamany, Weigle and Nelson 2016, "Detecting off-topic
// pages within TimeMaps in Web archives"; Jones, Weigle and Nelson 2018,
// "The Off-Topic Memento Toolkit"):
//
//   - SimHash Hamming distance of 64-bit Charikar fingerprints of all words
//     (textsim.SimHash, the fingerprint the live checker stores);
//   - Jaccard and Sørensen–Dice similarity of the sets of word shingles
//     (Broder's w-shingling; w = Options.Shingle, default 1: word sets, as
//     the Off-Topic Memento Toolkit compares token sets);
//   - cosine similarity of term-frequency vectors;
//   - relative word-count change, (live - reference) / reference.
//
// Shingles and term frequencies are taken over content words: words with a
// short list of English function words removed (the Toolkit removes English
// stop words too; it also stems, which linkrot does not). Word counts and
// SimHash use every word, so that they compare with the fingerprints the
// checker stores.
//
// The off-topic band uses the Toolkit's default thresholds
// (otmt/timemap_measures.py, supported_timemap_measures): cosine < 0.12,
// Jaccard distance > 0.96, Sørensen distance > 0.93, word count change
// < -0.70, and SimHash Hamming > 34, the threshold of its tf_simhash
// (SimHash of the term frequencies of the boilerplate-free text, which is
// what linkrot's SimHash is), not of its raw_simhash (38, on raw content
// including markup). Minor and major are linkrot's own split, documented
// on Thresholds. Everything is configurable.
package drift
