package markdown

import (
	"fmt"
	"reflect"
	"testing"
)

// TestParse_RawHTMLLinkKinds: HTML written in Markdown yields every URL
// attribute the HTML extractor reads, each at its own position in the
// Markdown (a srcset candidate at its URL).
func TestParse_RawHTMLLinkKinds(t *testing.T) {
	src := "# T\n\n<video src=\"v.mp4\" poster=\"p.jpg\"></video>\n\n<img srcset=\"x1.png 1x,\n  x2.png 2x\">\n\n" +
		"<blockquote cite=\"/src\">\nquoted\n</blockquote>\n\n<link rel=preconnect href=\"https://cdn.example\">\n"
	d := parse(t, src)
	var got []string
	for _, l := range d.Extraction.Links {
		got = append(got, fmt.Sprintf("%s %s %s %d:%d %v", l.Element, l.Attr, l.Href, l.Line, l.Column, l.Checked()))
	}
	want := []string{
		"video src https://ex.org/docs/v.mp4 3:13 true",
		"video poster https://ex.org/docs/p.jpg 3:28 true",
		"img srcset https://ex.org/docs/x1.png 5:14 true",
		"img srcset https://ex.org/docs/x2.png 6:3 true",
		"blockquote cite https://ex.org/src 8:19 true",
		"link href https://cdn.example/ 12:28 false",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("links:\n got %q\nwant %q", got, want)
	}
}
