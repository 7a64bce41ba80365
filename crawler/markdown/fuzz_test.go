package markdown

import (
	"net/url"
	"testing"

	"github.com/linkrot/linkrot/crawler/extract"
)

// FuzzParse feeds arbitrary bytes to the Markdown extractor: it must not
// panic, and every link it places must lie inside the document.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"[a](/b \"t\")\n\n[r]: /r\n[r]\n",
		"# H\n\n<a href=x\r\n data-versiondate=2020>y</a>\n",
		"* ![i](<a b>)\n  > <https://x.y/z> www.x.org\n",
		"<div>\n<img src=1>\n</div>\n\n```\n[no](x)\n```\n",
		"\uFEFF😀 [é](%zz) [x](<>) <foo@bar.baz>",
	} {
		f.Add([]byte(s))
	}
	u, _ := url.Parse("https://ex.org/d/p.md")
	f.Fuzz(func(t *testing.T, src []byte) {
		d := Parse(src, u, extract.Options{MaxLinks: 200})
		lines := 1
		for _, c := range src {
			if c == '\n' || c == '\r' {
				lines++
			}
		}
		for _, l := range d.Extraction.Links {
			if l.Line < 0 || l.Line > lines || (l.Line > 0 && l.Column < 1) {
				t.Fatalf("link %q at %d:%d outside a %d-line document", l.Href, l.Line, l.Column, lines)
			}
		}
		for _, p := range d.Extraction.PWIDs {
			if p.Link >= len(d.Extraction.Links) {
				t.Fatalf("pwid link index %d of %d links", p.Link, len(d.Extraction.Links))
			}
		}
	})
}
