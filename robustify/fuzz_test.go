package robustify_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/linkrot/linkrot/robustify"
)

// FuzzInsert: whatever the markup, inserting the attributes into every
// <a>/<area> tag changes nothing else, and the tokenizer then reads them
// on the same tags with the same hrefs.
func FuzzInsert(f *testing.F) {
	for _, p := range []string{"index.html", "sub/page.html", "sub/bom.htm"} {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "sites", "quirky", filepath.FromSlash(p)))
		if err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`<a href=x/><a href="y"/><area href='z'><a`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		var tags []robustify.Tag
		for _, tag := range robustify.Tags(doc) {
			if tag.Insertable() {
				tags = append(tags, tag)
			}
		}
		var edits []robustify.Edit
		for _, tag := range tags {
			edits = append(edits, robustify.InsertAttrs(tag, [][2]string{{robustify.AttrOriginal, "http://o.example/?a=1&b=\"2\""}, {robustify.AttrDate, "2024-03-01"}}))
		}
		out := robustify.Apply(doc, edits)
		// Removing the inserted text gives the document back.
		ins := ` data-originalurl="http://o.example/?a=1&amp;b=&quot;2&quot;" data-versiondate="2024-03-01"`
		if n := bytes.Count(out, []byte(ins)) - bytes.Count(doc, []byte(ins)); n != len(tags) {
			t.Fatalf("%d insertions found, %d tags", n, len(tags))
		}
		var again []robustify.Tag
		for _, tag := range robustify.Tags(out) {
			if tag.Insertable() {
				again = append(again, tag)
			}
		}
		if len(again) != len(tags) {
			t.Fatalf("%d tags after, %d before", len(again), len(tags))
		}
		for i := range tags {
			if again[i].Attrs["href"] != tags[i].Attrs["href"] {
				t.Fatalf("tag %d: href %q became %q", i, tags[i].Attrs["href"], again[i].Attrs["href"])
			}
			if _, had := tags[i].Attrs[robustify.AttrOriginal]; !had && again[i].Attrs[robustify.AttrOriginal] != `http://o.example/?a=1&b="2"` {
				t.Fatalf("tag %d: originalurl %q", i, again[i].Attrs[robustify.AttrOriginal])
			}
		}
		// Replacing an attribute keeps the tag count and the other attributes.
		all := robustify.Tags(out)
		for _, tag := range again {
			if e, ok := robustify.ReplaceAttr(tag, robustify.AttrDate, "2025-01-01"); ok {
				r := robustify.Tags(robustify.Apply(out, []robustify.Edit{e}))
				if len(r) != len(all) {
					t.Fatalf("replace changed the tags: %d, %d", len(r), len(all))
				}
			}
		}
	})
}
