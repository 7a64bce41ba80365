// Package reportcompare compares two linkrot JSON reports for behaviour:
// the same pages, targets, verdicts, links and findings, ignoring what
// legitimately differs between two runs of the same audit (times, ids,
// durations, the generator's version) and the order of list entries.
//
// It backs scripts/compare-reports.sh, which audits the same sites with
// the binary of an earlier commit and with the current one: a
// restructuring that claims to change no behaviour is held to it.
package reportcompare

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// ignoredKey reports whether a JSON object key holds a value that differs
// between two runs of the same audit: timestamps, durations, row ids,
// run ids and the generator's version.
func ignoredKey(k string) bool {
	switch k {
	case "id", "run", "run_id", "generator", "version", "generated_at", "runs", "since_last_run", "elapsed", "duration",
		"probe_url", // the soft-404 probe's path is random
		"attempts",  // how many tries a transient failure took depends on timing (retry budget, pauses)
		"depth":     // a page's depth is that of the first page found linking it, which concurrency orders
		return true
	}
	for _, suf := range []string{"_at", "_id", "_ms", "_seconds", "_ns", "_time"} {
		if strings.HasSuffix(k, suf) {
			return true
		}
	}
	return false
}

// Normalize decodes a JSON report and returns it with ignored keys removed,
// timestamps (RFC 3339 strings) masked
// and every list sorted by the canonical encoding of its entries, so that
// two reports of the same behaviour are equal values.
func Normalize(r io.Reader) (any, error) {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("decode report: %w", err)
	}
	return normalize(v), nil
}

func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if ignoredKey(k) {
				continue
			}
			out[k] = normalize(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		keys := make([]string, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		idx := make([]int, len(x))
		for i := range out {
			idx[i] = i
			keys[i] = canonical(out[i])
		}
		sort.SliceStable(idx, func(a, b int) bool { return keys[idx[a]] < keys[idx[b]] })
		sorted := make([]any, len(x))
		for i, j := range idx {
			sorted[i] = out[j]
		}
		return sorted
	case string:
		if _, err := time.Parse(time.RFC3339, x); err == nil {
			return "<time>"
		}
		return v
	default:
		return v
	}
}

// canonical is the JSON encoding of v with object keys sorted (as
// encoding/json writes maps).
func canonical(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

// Difference is one place where two normalized reports differ.
type Difference struct {
	Path   string // e.g. "targets" or "summary.broken_targets"
	Before string // canonical JSON, empty when absent
	After  string
}

// Diff returns where a and b (normalized reports) differ. Lists are
// compared as multisets of entries; each entry only in one of them is a
// Difference at the list's path.
func Diff(a, b any) []Difference {
	var out []Difference
	diff("", a, b, &out)
	return out
}

func diff(path string, a, b any, out *[]Difference) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			*out = append(*out, Difference{path, canonical(a), canonical(b)})
			return
		}
		keys := map[string]bool{}
		for k := range x {
			keys[k] = true
		}
		for k := range y {
			keys[k] = true
		}
		names := make([]string, 0, len(keys))
		for k := range keys {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			p := k
			if path != "" {
				p = path + "." + k
			}
			ea, okA := x[k]
			eb, okB := y[k]
			switch {
			case !okA:
				*out = append(*out, Difference{p, "", canonical(eb)})
			case !okB:
				*out = append(*out, Difference{p, canonical(ea), ""})
			default:
				diff(p, ea, eb, out)
			}
		}
	case []any:
		y, ok := b.([]any)
		if !ok {
			*out = append(*out, Difference{path, canonical(a), canonical(b)})
			return
		}
		count := map[string]int{}
		for _, e := range x {
			count[canonical(e)]++
		}
		for _, e := range y {
			count[canonical(e)]--
		}
		keys := make([]string, 0, len(count))
		for k, n := range count {
			if n != 0 {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		var gone, came []any
		for _, k := range keys {
			var e any
			_ = json.Unmarshal([]byte(k), &e)
			for n := count[k]; n > 0; n-- {
				gone = append(gone, e)
			}
			for n := count[k]; n < 0; n++ {
				came = append(came, e)
			}
		}
		// Pair each entry only in a with the entry only in b that shares
		// the most fields, and report the fields that differ: a changed
		// verdict reads as one field, not as a lost and a new target.
		used := make([]bool, len(came))
		for _, e := range gone {
			best, bestScore := -1, 0
			for j, f := range came {
				if used[j] {
					continue
				}
				if sc := shared(e, f); sc > bestScore {
					best, bestScore = j, sc
				}
			}
			if best < 0 {
				*out = append(*out, Difference{path, canonical(e), ""})
				continue
			}
			used[best] = true
			diff(path+"["+label(e)+"]", e, came[best], out)
		}
		for j, f := range came {
			if !used[j] {
				*out = append(*out, Difference{path, "", canonical(f)})
			}
		}
	default:
		if canonical(a) != canonical(b) {
			*out = append(*out, Difference{path, canonical(a), canonical(b)})
		}
	}
}

// shared counts the top-level fields two objects have equal.
func shared(a, b any) int {
	x, ok1 := a.(map[string]any)
	y, ok2 := b.(map[string]any)
	if !ok1 || !ok2 {
		return 0
	}
	n := 0
	for k, v := range x {
		if w, ok := y[k]; ok && canonical(v) == canonical(w) {
			n++
		}
	}
	return n
}

// label names a list entry in a Difference's path by its URL-like field.
func label(e any) string {
	if m, ok := e.(map[string]any); ok {
		for _, k := range []string{"url", "target", "target_url", "page", "page_url", "href"} {
			if s, ok := m[k].(string); ok {
				return s
			}
		}
	}
	return "…"
}
