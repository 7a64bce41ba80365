package extract

import (
	"bytes"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/linkrot/linkrot/audit"
)

// locateFragments are pieces of HTML that the documents of
// TestLocateMatchesReference are made of: links of every element, markup
// the tokenizer and the tree builder read differently, text before links
// that is not one code unit per byte.
var locateFragments = []string{
	`<a href="/x">x</a>`, `<a href=/y>y</a>`, `<A HREF = '/Z'>z</A>`, `<a href="/p" href="/q">dup</a>`,
	`<a HREF=/p2 href=/q2>dup</a>`, `<a href="/a?x=1&amp;y=2">amp</a>`, `<a href="&copy=1">copy</a>`,
	`<a href="?a=1&b=2&lt;">raw amp</a>`, "<a href=\"/nul\x00\">nul</a>", `<a href="https://user:pw@h.example/">pw</a>`,
	`<a name=x>no href</a>`, `<area href=/m>`, `<img src="/i.png" alt="é">`, `<script src=/s.js></script>`,
	`<link rel=stylesheet href=/c.css/>`, `<iframe src=/f></iframe>`, `<video><source src=/v></video>`,
	`<table><tr><td>x</td></tr><a href=/foster>f</a></table>`,
	`<table><a href=/f1>1</a><tr><td><a href=/t1>t</a></td></tr><a href=/f2>2</a></table>`,
	`<table><a href=/dup>f</a><tr><td><a href=/dup>t</a></td></tr></table>`,
	"<p>é中😀𐍈</p>", "😀", "é", "\uFEFF", "\xff\xfe", "\xe4\xb8", "\xf0\x9f\x98", "&eacute;&#x1F600;",
	`<!-- <a href=/comment> -->`, `<script>var s = "<a href=/no>";</script>`, `<style>a{}</style>`,
	"<a\nhref\n=\n\"/nl\">nl</a>", "<a title=\"a\r\nb\" href=\"/t\">t</a>", "<lin\u212a href=/kelvin>", `<link href=/kelvin>`,
	`<a href=/dup>1</a>`, `<textarea><a href=/ta></textarea>`, `<title><a href=/title></title>`, `<a href>empty</a>`,
	`<a href="">empty</a>`, `<a href='/unterminated`, `<svg><a href=/svg></a></svg>`, `<template><a href=/tpl></a></template>`,
	`<a href=/outer><a href=/inner>nested</a></a>`, `<noscript><a href=/ns></a></noscript>`, `<a/href=/slash>`,
	`<a =x href=/eq>`, `<a href = "/spaced" >`, `<a href=/x>x</a>`, "<p>\t  words and more words  </p>",
	`<img srcset="/a.png 1x, /b.png 2x" src=/c.png>`, "<img SRCSET='/a,b.png 100w,\n /c.png 200w'>", `<img srcset="/a.png 2y, /d.png">`,
	`<img srcset="/q?a=1&amp;b=2 1x, /r&#44;s.png 2x">`, `<source srcset="/s.webp" src=/s.mp4>`, `<img srcset=", ,">`,
	`<video src=/v.mp4 poster=/p.png><track src=/t.vtt></video>`, `<audio src=/a.ogg></audio>`, `<embed src=/e>`,
	`<object data=/o.pdf></object>`, `<input type=image src=/i.png>`, `<input type=text src=/i.png>`, `<input TYPE=Image src=/i.png>`,
	`<meta http-equiv=refresh content="0; url=/r">`, `<meta http-equiv=Refresh content="5, '/r2'">`, `<meta content="1;URL=&quot;/r3&quot;" http-equiv="refresh">`,
	`<meta http-equiv=refresh content="url=/bad">`, `<meta name=refresh content="0;url=/r">`, `<blockquote cite=/bq>q</blockquote>`,
	`<q cite="/q">q</q>`, `<del cite=/d>d</del><ins cite=/i>i</ins>`, `<video poster="">`, `<link rel=preconnect href=https://h.example>`,
}

var locateSeparators = []string{"", "", "", "\n", "\r\n", "\r", " ", "\n\n", "\r\r\n"}

// locateDocuments returns hand-written documents and n random ones made
// of locateFragments.
func locateDocuments(n int) []string {
	docs := []string{
		"", "\uFEFF", "\uFEFF<a href=/bom>b</a>", "\uFEFF\r\n<a href=/bom>b</a>", "\r\n\r\n", "\r", "\n\r",
		"é<a href=/x>1</a>😀<a href=/y>2</a>\xe4\xb8<a href=/z>3</a>",
		strings.Repeat("😀é中 <a href=/same>s</a> ", 50),
		strings.Repeat("<table><tr><td><a href=/t>t</a></td></tr><a href=/f>f</a></table>", 20),
		strings.Repeat("line\r\n", 10) + strings.Repeat("<a href=/l>l</a>", 30) + "\r" + strings.Repeat("x<a href=/m>m</a>", 30),
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range n {
		var sb strings.Builder
		if r.IntN(4) == 0 {
			sb.WriteString("\uFEFF")
		}
		for range 1 + r.IntN(30) {
			sb.WriteString(locateFragments[r.IntN(len(locateFragments))])
			sb.WriteString(locateSeparators[r.IntN(len(locateSeparators))])
		}
		docs = append(docs, sb.String())
	}
	return docs
}

func TestLocateMatchesReference(t *testing.T) {
	for _, doc := range locateDocuments(1500) {
		compareLocate(t, []byte(doc))
		if t.Failed() {
			t.Fatalf("document %q", doc)
		}
	}
}

// compareLocate checks Offsets, Locate and LineIndex against the reference
// implementation on the links of src, and LineIndex on offsets in order,
// in reverse and shuffled.
func compareLocate(t *testing.T, src []byte) {
	t.Helper()
	root, err := html.Parse(bytes.NewReader(src))
	if err != nil {
		return
	}
	links := Page(root, &url.URL{Scheme: "https", Host: "ex.org", Path: "/"}, nil, Options{}).Links
	want := refOffsets(src, links)
	got := Offsets(src, links)
	for i := range links {
		if got[i] != want[i] {
			t.Errorf("link %d (%s %q): offset %d, reference %d", i, links[i].Element, links[i].RawHref, got[i], want[i])
		}
	}
	a, b := append([]audit.Link(nil), links...), append([]audit.Link(nil), links...)
	Locate(src, a)
	refLocate(src, b)
	for i := range a {
		if a[i].Line != b[i].Line || a[i].Column != b[i].Column || a[i].LineHash != b[i].LineHash {
			t.Errorf("link %d (%s %q): %d:%d %s, reference %d:%d %s", i, a[i].Element, a[i].RawHref,
				a[i].Line, a[i].Column, a[i].LineHash, b[i].Line, b[i].Column, b[i].LineHash)
		}
	}

	// Offsets of every byte (of some when the document is long), the
	// links' offsets, and out of the document.
	step := 1 + len(src)/256
	var offs []int
	for off := -1; off <= len(src)+1; off += step {
		offs = append(offs, off)
	}
	offs = append(offs, len(src))
	for _, o := range want {
		if o >= 0 {
			offs = append(offs, o)
		}
	}
	rev := make([]int, len(offs))
	for i, o := range offs {
		rev[len(offs)-1-i] = o
	}
	shuffled := append([]int(nil), offs...)
	rand.New(rand.NewPCG(uint64(len(src)), 3)).Shuffle(len(shuffled), func(i, j int) {
		shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
	})
	// One index for all three sequences: its cursor and memo carry over.
	ix, ref := NewLineIndex(src), refNewLineIndex(src)
	for _, seq := range [][]int{offs, rev, shuffled} {
		for _, off := range seq {
			var l, m audit.Link
			ix.Place(&l, off)
			ref.Place(&m, off)
			if l.Line != m.Line || l.Column != m.Column || l.LineHash != m.LineHash {
				t.Errorf("Place(%d) = %d:%d %s, reference %d:%d %s", off, l.Line, l.Column, l.LineHash, m.Line, m.Column, m.LineHash)
				return
			}
			if line, col := ix.Position(off); line != m.Line || col != m.Column {
				t.Errorf("Position(%d) = %d:%d, reference %d:%d", off, line, col, m.Line, m.Column)
				return
			}
		}
	}
	if len(ix.starts) != len(ref.starts) {
		t.Errorf("%d lines, reference %d", len(ix.starts), len(ref.starts))
	}
	for line := 0; line <= len(ref.starts)+1; line++ {
		if !bytes.Equal(ix.LineText(line), ref.LineText(line)) {
			t.Errorf("LineText(%d) = %q, reference %q", line, ix.LineText(line), ref.LineText(line))
		}
	}
}

func TestCollapseBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	pieces := []string{" ", "\t", "\n", "\r\n", "\u00a0", "\u2003", "\u0085", "a", "é", "中", "😀", "\xff", "\xe4\xb8", "word", "  "}
	for range 5000 {
		var sb strings.Builder
		for range r.IntN(20) {
			sb.WriteString(pieces[r.IntN(len(pieces))])
		}
		s := sb.String()
		for _, max := range []int{1, 3, 300} {
			if got, want := collapseBytes([]byte(s), max), collapse(s, max); got != want {
				t.Fatalf("collapseBytes(%q, %d) = %q, collapse %q", s, max, got, want)
			}
		}
	}
}
