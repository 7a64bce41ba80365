// Package audit holds linkrot's domain: runs, pages, links and their
// robustness data (Robust Links, mset, rel="identifier", pwid), the
// diagnostics raised while reading them, and the Store interface through
// which every stage hands its results to the next.
//
// Package audit imports no other package of linkrot. Concrete storage lives
// in store/sqlite; crawling in crawler; rendering in report.
package audit
