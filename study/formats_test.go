package study

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The same references written in the four input formats, each with one
// malformed entry, must give the same references and the same outputs.

func formatRefs(t *testing.T) []Reference {
	refs := newWorld(300, 99).refs
	extra := []struct{ id, url, at, group, title string }{
		{"yearonly", "https://extra.test/y", "2014", "Journal A", "A year & nothing more"},
		{"monthonly", "https://extra.test/m", "2013-05", "", "<script>window.__xss=1</script> <b>bold</b>"},
		{"dayref", "https://extra.test/d?a=1&b=2", "2012-02-29", "Court of =Appeals", "=HYPERLINK(\"https://evil.test\")"},
	}
	for _, e := range extra {
		at, err := ParseCitedAt(e.at)
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, Reference{ID: e.id, URL: e.url, CitedAt: at, Group: e.group, Title: e.title})
	}
	return refs
}

func asCSV(refs []Reference) []byte {
	var b bytes.Buffer
	b.WriteString("title,id,url,cited_at,group,notes\n")
	for i, r := range refs {
		q := func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
		fmt.Fprintf(&b, "%s,%s,%s,%s,%s,x\n", q(r.Title), q(r.ID), q(r.URL), r.CitedAt, q(r.Group))
		if i == 10 {
			b.WriteString("bad,row,not-a-url,2014-01-01,,\n")
		}
	}
	return b.Bytes()
}

func asJSONL(refs []Reference) []byte {
	var b bytes.Buffer
	for i, r := range refs {
		m := map[string]string{"url": r.URL, "cited_at": r.CitedAt.String(), "id": r.ID, "title": r.Title}
		if r.Group != "" {
			m["Group"] = r.Group
		}
		js, _ := json.Marshal(m)
		b.Write(js)
		b.WriteByte('\n')
		if i == 10 {
			b.WriteString("{\"url\": \"https://x.test/\"\n")
		}
	}
	return b.Bytes()
}

func asBibTeX(refs []Reference) []byte {
	var b bytes.Buffer
	b.WriteString("% Zotero-like export\n")
	for i, r := range refs {
		fmt.Fprintf(&b, "@misc{%s,\n  title = {%s},\n  url = {%s},\n", r.ID, r.Title, r.URL)
		switch r.CitedAt.Precision {
		case Day:
			fmt.Fprintf(&b, "  urldate = {%s},\n  year = {1999},\n", r.CitedAt)
		case Month:
			fmt.Fprintf(&b, "  year = %d,\n  month = %s,\n", r.CitedAt.Year(), strings.ToLower(r.CitedAt.From.Format("Jan")))
		default:
			fmt.Fprintf(&b, "  year = {%d},\n", r.CitedAt.Year())
		}
		if r.Group != "" {
			fmt.Fprintf(&b, "  group = {%s},\n", r.Group)
		}
		b.WriteString("}\n\n")
		if i == 10 {
			b.WriteString("@misc{broken, url = {https://x.test/}, year = {twenty}}\n\n")
		}
	}
	return b.Bytes()
}

func asCSLJSON(refs []Reference) []byte {
	var items []map[string]any
	for i, r := range refs {
		y, m, d := r.CitedAt.From.Date()
		parts := []int{y}
		if r.CitedAt.Precision <= Month {
			parts = append(parts, int(m))
		}
		if r.CitedAt.Precision <= Day {
			parts = append(parts, d)
		}
		it := map[string]any{"id": r.ID, "type": "webpage", "URL": r.URL, "title": r.Title}
		if r.CitedAt.Precision == Day {
			it["accessed"] = map[string]any{"date-parts": [][]int{parts}}
			it["issued"] = map[string]any{"date-parts": [][]int{{1999}}}
		} else {
			it["issued"] = map[string]any{"date-parts": [][]int{parts}}
		}
		if r.Group != "" {
			it["group"] = r.Group
		}
		items = append(items, it)
		if i == 10 {
			items = append(items, map[string]any{"id": "broken", "URL": "https://x.test/"})
		}
	}
	js, _ := json.MarshalIndent(items, "", "  ")
	return js
}

func TestFormatsGiveTheSameStudy(t *testing.T) {
	refs := formatRefs(t)
	w := newWorld(300, 99)
	files := map[Format][]byte{
		FormatCSV: asCSV(refs), FormatJSONL: asJSONL(refs), FormatBibTeX: asBibTeX(refs), FormatCSLJSON: asCSLJSON(refs),
	}
	names := map[Format]string{FormatCSV: "refs.csv", FormatJSONL: "refs.jsonl", FormatBibTeX: "refs.bib", FormatCSLJSON: "refs.json"}
	outs := map[Format]map[string]string{}
	for f, b := range files {
		in, err := Parse(b, names[f], "")
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if in.Format != f {
			t.Errorf("%s detected as %s", names[f], in.Format)
		}
		if len(in.Errors) != 1 || in.Errors[0].Line < 10 {
			t.Errorf("%s: errors %v, want the one malformed entry", f, in.Errors)
		}
		if len(in.References) != len(refs) {
			t.Fatalf("%s: %d references, want %d", f, len(in.References), len(refs))
		}
		for i, r := range in.References {
			if refKey(r) != refKey(refs[i]) || r.CitedAt != refs[i].CitedAt {
				t.Fatalf("%s: reference %d = %q, want %q", f, i, refKey(r), refKey(refs[i]))
			}
		}
		dir := t.TempDir()
		s := &Study{Input: in, Waves: w.waves, Params: Params{Archives: []string{"archive.test"}, Version: "test", Created: time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)}}
		if err := WriteDir(dir, s); err != nil {
			t.Fatal(err)
		}
		outs[f] = map[string]string{}
		for _, name := range []string{"references.csv", "summary.csv", "index.html", "study.json"} {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			text := string(b)
			// What legitimately differs: the input's name, format, digest,
			// and the malformed entry's line and reason.
			text = strings.NewReplacer(in.Name, "NAME", in.Digest, "DIGEST", "("+string(in.Format)+",", "(FORMAT,", "("+string(in.Format)+")", "(FORMAT)").Replace(text)
			text = regexp.MustCompile(`(?s)<ul id="malformed">.*?</ul>`).ReplaceAllString(text, "")
			if name == "study.json" {
				var m Meta
				if err := json.Unmarshal(b, &m); err != nil {
					t.Fatal(err)
				}
				m.Input.Name, m.Input.Format, m.Input.SHA256, m.Malformed = "", "", "", nil
				js, _ := json.Marshal(m)
				text = string(js)
			}
			outs[f][name] = text
		}
	}
	for _, f := range []Format{FormatJSONL, FormatBibTeX, FormatCSLJSON} {
		for name, text := range outs[FormatCSV] {
			if outs[f][name] != text {
				t.Errorf("%s differs between csv and %s", name, f)
			}
		}
	}
	if !strings.Contains(outs[FormatCSV]["references.csv"], `'=HYPERLINK(""https://evil.test"")`) {
		t.Errorf("a formula title is not made safe in references.csv")
	}
}
