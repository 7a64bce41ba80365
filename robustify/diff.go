package robustify

import (
	"bytes"
	"fmt"
	"strings"
)

// op is one line of a diff: ' ' kept, '-' removed, '+' added.
type op struct {
	kind byte
	line string
}

// splitLines splits b into lines, each keeping its "\n" (the last may
// have none).
func splitLines(b []byte) []string {
	var out []string
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, string(b))
			break
		}
		out = append(out, string(b[:i+1]))
		b = b[i+1:]
	}
	return out
}

// lineOps aligns two versions of a file that differ in a few places (the
// edits of robustify): equal lines are kept, and at each difference the
// nearest resynchronisation point (an equal line, or the ends) within a
// window is found. Any alignment gives a correct diff; this one is
// minimal for edits within lines.
func lineOps(a, b []string) []op {
	const window = 400
	var ops []op
	i, j := 0, 0
	same := func(x, y int) bool {
		if x >= len(a) || y >= len(b) {
			return x >= len(a) && y >= len(b)
		}
		return a[x] == b[y]
	}
	for i < len(a) || j < len(b) {
		if i < len(a) && j < len(b) && a[i] == b[j] {
			ops = append(ops, op{' ', a[i]})
			i, j = i+1, j+1
			continue
		}
		bx, by := len(a)-i, len(b)-j // default: everything left differs
		found := false
		for d := 1; d <= 2*window && !found; d++ {
			for x := max(0, d-window); x <= min(d, window); x++ {
				y := d - x
				if i+x <= len(a) && j+y <= len(b) && same(i+x, j+y) {
					bx, by, found = x, y, true
					break
				}
			}
		}
		for k := 0; k < bx; k++ {
			ops = append(ops, op{'-', a[i+k]})
		}
		for k := 0; k < by; k++ {
			ops = append(ops, op{'+', b[j+k]})
		}
		i, j = i+bx, j+by
	}
	return ops
}

// UnifiedDiff returns the unified diff (3 lines of context) of a file
// named name from a to b, "" when they are equal.
func UnifiedDiff(name string, a, b []byte) string {
	if bytes.Equal(a, b) {
		return ""
	}
	ops := lineOps(splitLines(a), splitLines(b))
	var out strings.Builder
	fmt.Fprintf(&out, "--- a/%s\n+++ b/%s\n", name, name)
	const ctx = 3
	n := len(ops)
	k := 0
	for k < n {
		// Find the next change.
		for k < n && ops[k].kind == ' ' {
			k++
		}
		if k >= n {
			break
		}
		start := max(0, k-ctx)
		end := k
		// Extend while changes are within 2*ctx lines of each other.
		for end < n {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < n && ops[run].kind == ' ' {
				run++
			}
			if run < n && run-end <= 2*ctx {
				end = run
				continue
			}
			end = min(n, end+ctx)
			break
		}
		// Line numbers of the hunk.
		aLine, bLine := 1, 1
		for _, o := range ops[:start] {
			if o.kind != '+' {
				aLine++
			}
			if o.kind != '-' {
				bLine++
			}
		}
		aN, bN := 0, 0
		for _, o := range ops[start:end] {
			if o.kind != '+' {
				aN++
			}
			if o.kind != '-' {
				bN++
			}
		}
		fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@\n", aLine, aN, bLine, bN)
		for _, o := range ops[start:end] {
			out.WriteByte(o.kind)
			out.WriteString(o.line)
			if !strings.HasSuffix(o.line, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
		k = end
	}
	return out.String()
}
