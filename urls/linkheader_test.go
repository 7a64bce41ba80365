package urls

import (
	"bufio"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"runtime/debug"
	"strings"
	"testing"
)

// RFC 7089 figures, copied from the RFC text (Figures 12, 14, 28, 30, 31).
// For header figures the string is the field value after "Link: ", with the
// continuation lines and their indentation as printed. The notes in
// /work/shared/notes/archive-protocols.md quote Figures 12 and 28 with their
// own line breaks (and cut Figure 28 with "…"); those variants are kept too.
const (
	rfc7089Fig12 = `<http://a.example.org/>; rel="original",
    <http://arxiv.example.net/timemap/http://a.example.org/>
      ; rel="timemap"; type="application/link-format"
      ; from="Tue, 15 Sep 2000 11:28:26 GMT"
      ; until="Wed, 20 Jan 2010 09:34:33 GMT"`

	notesFig12 = `<http://a.example.org/>; rel="original",
 <http://arxiv.example.net/timemap/http://a.example.org/>
   ; rel="timemap"; type="application/link-format"
   ; from="Tue, 15 Sep 2000 11:28:26 GMT"; until="Wed, 20 Jan 2010 09:34:33 GMT"`

	rfc7089Fig14 = `<http://a.example.org/>; rel="original",
    <http://arxiv.example.net/timemap/http://a.example.org/>
      ; rel="timemap"; type="application/link-format",
    <http://arxiv.example.net/timegate/http://a.example.org/>
      ; rel="timegate"`

	// Figure 28 is the body of a TimeMap; the RFC ends it with "..." to say
	// that more mementos follow.
	rfc7089Fig28Links = `    <http://a.example.org>;rel="original",
    <http://arxiv.example.net/timemap/http://a.example.org>
      ; rel="self";type="application/link-format"
      ; from="Tue, 20 Jun 2000 18:02:59 GMT"
      ; until="Wed, 09 Apr 2008 20:30:51 GMT",
    <http://arxiv.example.net/timegate/http://a.example.org>
      ; rel="timegate",
    <http://arxiv.example.net/web/20000620180259/http://a.example.org>
      ; rel="first memento";datetime="Tue, 20 Jun 2000 18:02:59 GMT"
      ; license="http://creativecommons.org/publicdomain/zero/1.0/",
    <http://arxiv.example.net/web/20091027204954/http://a.example.org>
       ; rel="last memento";datetime="Tue, 27 Oct 2009 20:49:54 GMT"
       ; license="http://creativecommons.org/publicdomain/zero/1.0/",
    <http://arxiv.example.net/web/20000621011731/http://a.example.org>
      ; rel="memento";datetime="Wed, 21 Jun 2000 01:17:31 GMT"
      ; license="http://creativecommons.org/publicdomain/zero/1.0/",
    <http://arxiv.example.net/web/20000621044156/http://a.example.org>
      ; rel="memento";datetime="Wed, 21 Jun 2000 04:41:56 GMT"
      ; license="http://creativecommons.org/publicdomain/zero/1.0/",
`
	rfc7089Fig28 = rfc7089Fig28Links + "    ...\n"

	notesFig28 = `<http://a.example.org>;rel="original",
<http://arxiv.example.net/timemap/http://a.example.org>
  ; rel="self";type="application/link-format"
  ; from="Tue, 20 Jun 2000 18:02:59 GMT"; until="Wed, 09 Apr 2008 20:30:51 GMT",
<http://arxiv.example.net/timegate/http://a.example.org>; rel="timegate",
<http://arxiv.example.net/web/20000620180259/http://a.example.org>
  ; rel="first memento";datetime="Tue, 20 Jun 2000 18:02:59 GMT"
  ; license="http://creativecommons.org/publicdomain/zero/1.0/",
…`

	// Figure 30 (paging TimeMap) as printed in the RFC: the comma after the
	// third "timemap" link is missing.
	rfc7089Fig30 = `   <http://a.example.org>;rel="original",
    <http://arxiv.example.net/timegate/http://a.example.org>
      ; rel="timegate",
    <http://arxiv.example.net/timemap/1/http://a.example.org>
      ; rel="self";type="application/link-format"
      ; from="Tue, 20 Jun 2000 18:02:59 GMT"
      ; until="Wed, 09 Apr 2008 20:30:51 GMT",
    <http://arxiv.example.net/timemap/2/http://a.example.org>
      ; rel="timemap";type="application/link-format"
      ; from="Thu, 10 Apr 2008 20:30:51 GMT"
      ; until="Tue, 27 Oct 2009 20:49:54 GMT",
    <http://arxiv.example.net/timemap/3/http://a.example.org>
      ; rel="timemap";type="application/link-format"
      ; from="Thu, 29 Oct 2009 20:30:51 GMT"
      ; until="Fri, 31 Aug 2012 12:22:34 GMT"
    <http://arxiv.example.net/web/20000620180259/http://a.example.org>
      ; rel="memento";datetime="Tue, 20 Jun 2000 18:02:59 GMT",
    <http://arxiv.example.net/web/20000621011731/http://a.example.org>
      ; rel="memento";datetime="Wed, 21 Jun 2000 01:17:31 GMT",
    <http://arxiv.example.net/web/20000621044156/http://a.example.org>
      ; rel="memento";datetime="Wed, 21 Jun 2000 04:41:56 GMT",
    ...`

	rfc7089Fig31 = `<http://arxiv.example.net/timemap/http://a.example.org>
             ; anchor="http://a.example.org"; rel="timemap"
             ; type="application/link-format"`
)

// wl builds an expected WebLink. rel lists the expected relation types
// separated by spaces ("" for none); kv are parameter name/value pairs.
func wl(uri, rel string, kv ...string) WebLink {
	l := WebLink{URI: uri, Rel: strings.Fields(rel)}
	if len(l.Rel) == 0 {
		l.Rel = nil
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if l.Params == nil {
			l.Params = map[string]string{}
		}
		l.Params[kv[i]] = kv[i+1]
	}
	return l
}

const cc0 = "http://creativecommons.org/publicdomain/zero/1.0/"

var (
	fig12Want = []WebLink{
		wl("http://a.example.org/", "original"),
		wl("http://arxiv.example.net/timemap/http://a.example.org/", "timemap",
			"type", "application/link-format",
			"from", "Tue, 15 Sep 2000 11:28:26 GMT",
			"until", "Wed, 20 Jan 2010 09:34:33 GMT"),
	}
	fig28Want = []WebLink{
		wl("http://a.example.org", "original"),
		wl("http://arxiv.example.net/timemap/http://a.example.org", "self",
			"type", "application/link-format",
			"from", "Tue, 20 Jun 2000 18:02:59 GMT",
			"until", "Wed, 09 Apr 2008 20:30:51 GMT"),
		wl("http://arxiv.example.net/timegate/http://a.example.org", "timegate"),
		wl("http://arxiv.example.net/web/20000620180259/http://a.example.org", "first memento",
			"datetime", "Tue, 20 Jun 2000 18:02:59 GMT", "license", cc0),
		wl("http://arxiv.example.net/web/20091027204954/http://a.example.org", "last memento",
			"datetime", "Tue, 27 Oct 2009 20:49:54 GMT", "license", cc0),
		wl("http://arxiv.example.net/web/20000621011731/http://a.example.org", "memento",
			"datetime", "Wed, 21 Jun 2000 01:17:31 GMT", "license", cc0),
		wl("http://arxiv.example.net/web/20000621044156/http://a.example.org", "memento",
			"datetime", "Wed, 21 Jun 2000 04:41:56 GMT", "license", cc0),
	}
)

type linkHeaderCase struct {
	name   string
	fields []string
	want   []WebLink
	// wantErrs holds, in order, a substring of the Reason of each expected
	// *linkHeaderError; nil means ParseLinkHeader must return a nil error.
	wantErrs []string
}

// linkHeaderCases is shared with FuzzParseLinkHeader as its seed corpus.
var linkHeaderCases = []linkHeaderCase{
	{
		name:   "single link",
		fields: []string{`<http://ex.org/>; rel="original"`},
		want:   []WebLink{wl("http://ex.org/", "original")},
	},
	{
		name:   "several links per field",
		fields: []string{`<http://ex.org/1>; rel="prev", <http://ex.org/3>; rel="next"`},
		want:   []WebLink{wl("http://ex.org/1", "prev"), wl("http://ex.org/3", "next")},
	},
	{
		name:   "several fields",
		fields: []string{`<http://ex.org/a>; rel="original"`, `<http://ex.org/b>; rel="timegate", <http://ex.org/c>; rel="timemap"`},
		want:   []WebLink{wl("http://ex.org/a", "original"), wl("http://ex.org/b", "timegate"), wl("http://ex.org/c", "timemap")},
	},
	{
		name:   "quoted params with escaped quotes, backslashes, commas and semicolons",
		fields: []string{`<http://ex.org/>; title="say \"hi\", then; leave \\ \q"; rel="x", <http://ex.org/2>; rel="y"`},
		want: []WebLink{
			wl("http://ex.org/", "x", "title", `say "hi", then; leave \ q`),
			wl("http://ex.org/2", "y"),
		},
	},
	{
		name:   "unquoted token params and a valueless param",
		fields: []string{`<http://ex.org/>; rel=next; ct=40; crossorigin; hreflang=en-GB`},
		want:   []WebLink{wl("http://ex.org/", "next", "ct", "40", "crossorigin", "", "hreflang", "en-GB")},
	},
	{
		name:   "unquoted non-token values (media type, URI) are accepted",
		fields: []string{`<http://ex.org/tm>; rel=timemap; type=application/link-format; anchor=http://ex.org/`},
		want:   []WebLink{wl("http://ex.org/tm", "timemap", "type", "application/link-format", "anchor", "http://ex.org/")},
	},
	{
		name: "multi-token rel in any order",
		fields: []string{`<http://ex.org/m1>; rel="first last memento", <http://ex.org/m2>; rel="memento last first",` +
			` <http://ex.org/m3>; rel="prev first memento", <http://ex.org/m4>; rel="next last memento"`},
		want: []WebLink{
			wl("http://ex.org/m1", "first last memento"),
			wl("http://ex.org/m2", "memento last first"),
			wl("http://ex.org/m3", "prev first memento"),
			wl("http://ex.org/m4", "next last memento"),
		},
	},
	{
		name:   "rel given twice: first wins",
		fields: []string{`<http://ex.org/>; rel="original"; rel="memento"`},
		want:   []WebLink{wl("http://ex.org/", "original")},
	},
	{
		name:   "empty rel still counts as the first rel",
		fields: []string{`<http://ex.org/>; rel=""; rel="memento"`},
		want:   []WebLink{wl("http://ex.org/", "")},
	},
	{
		name:   "other params: first occurrence wins, names case-insensitive",
		fields: []string{`<http://ex.org/>; title="one"; TITLE="two"; Type="text/html"`},
		want:   []WebLink{wl("http://ex.org/", "", "title", "one", "type", "text/html")},
	},
	{
		name:   "uppercase REL and relation types",
		fields: []string{`<http://ex.org/>; REL="Memento FIRST"`},
		want:   []WebLink{wl("http://ex.org/", "memento first")},
	},
	{
		name:   "duplicate relation types removed",
		fields: []string{`<http://ex.org/>; rel="next NEXT  next	prev"`},
		want:   []WebLink{wl("http://ex.org/", "next prev")},
	},
	{
		name:   "extension relation types keep their case",
		fields: []string{`<http://ex.org/>; rel="http://Example.org/Rel/Foo Next http://example.org/rel/foo"`},
		want:   []WebLink{wl("http://ex.org/", "http://Example.org/Rel/Foo next")},
	},
	{
		name:   "rel=identifier unquoted",
		fields: []string{`<https://doi.org/10.1234/x>; rel=identifier`},
		want:   []WebLink{wl("https://doi.org/10.1234/x", "identifier")},
	},
	{
		name:   "rel-identifier draft example",
		fields: []string{`<https://doi.org/10.1234/x> ; rel="identifier"`},
		want:   []WebLink{wl("https://doi.org/10.1234/x", "identifier")},
	},
	{
		name:   "cite-as (RFC 8574)",
		fields: []string{`<https://doi.org/10.5555/12345680> ; rel="cite-as", <https://example.org/paper.pdf>; rel="item"; type="application/pdf"`},
		want: []WebLink{
			wl("https://doi.org/10.5555/12345680", "cite-as"),
			wl("https://example.org/paper.pdf", "item", "type", "application/pdf"),
		},
	},
	{
		name:   "spaces, tabs and newlines around ; , =",
		fields: []string{"\r\n\t<http://ex.org/a>\t;\n rel \t=\r\n \"original\" \n,\n\t<http://ex.org/b>  ;rel=timegate ; title = \"t\"\t\n"},
		want:   []WebLink{wl("http://ex.org/a", "original"), wl("http://ex.org/b", "timegate", "title", "t")},
	},
	{
		name:   "commas and semicolons inside <...>",
		fields: []string{`<http://ex.org/a,b;c=d>; rel="x", <http://ex.org/c>; rel="y"`},
		want:   []WebLink{wl("http://ex.org/a,b;c=d", "x"), wl("http://ex.org/c", "y")},
	},
	{
		name:   "datetime with a comma",
		fields: []string{`<http://arxiv.example.net/web/20010911203626/http://a.example.org/>; rel="memento"; datetime="Tue, 11 Sep 2001 20:36:26 GMT", <http://a.example.org/>; rel="original"`},
		want: []WebLink{
			wl("http://arxiv.example.net/web/20010911203626/http://a.example.org/", "memento", "datetime", "Tue, 11 Sep 2001 20:36:26 GMT"),
			wl("http://a.example.org/", "original"),
		},
	},
	{
		name:   "title* RFC 8187 ext-value decoded",
		fields: []string{`<http://ex.org/>; title*=UTF-8''%e2%82%ac%20rates; rel="x"`},
		want:   []WebLink{wl("http://ex.org/", "x", "title*", "€ rates")},
	},
	{
		name:   "title* with language, ISO-8859-1, quoted, next to title",
		fields: []string{`<http://ex.org/1>; title="EUR rates"; title*=utf-8'en'%e2%82%ac%20rates, <http://ex.org/2>; title*=iso-8859-1'en'%A3%20rates, <http://ex.org/3>; title*="UTF-8''%c2%a3"`},
		want: []WebLink{
			wl("http://ex.org/1", "", "title", "EUR rates", "title*", "€ rates"),
			wl("http://ex.org/2", "", "title*", "£ rates"),
			wl("http://ex.org/3", "", "title*", "£"),
		},
	},
	{
		name:     "invalid ext-values: parameter dropped, link kept",
		fields:   []string{`<http://ex.org/1>; title*=UTF-8''%zz; rel=a, <http://ex.org/2>; title*=KOI8-R''%c1; rel=b, <http://ex.org/3>; title*=UTF-8''%ff; rel=c`},
		want:     []WebLink{wl("http://ex.org/1", "a"), wl("http://ex.org/2", "b"), wl("http://ex.org/3", "c")},
		wantErrs: []string{"percent-encoding", "unsupported charset", "not valid UTF-8"},
	},
	{
		name:   "empty field",
		fields: []string{""},
	},
	{
		name:   "no fields",
		fields: nil,
	},
	{
		name:   "blank field and empty list elements",
		fields: []string{" \t\r\n", ",, ,", ""},
	},
	{
		name:     "garbage between links",
		fields:   []string{`<a>; rel=x, garbage, <b>; rel=y`},
		want:     []WebLink{wl("a", "x"), wl("b", "y")},
		wantErrs: []string{"expected '<'"},
	},
	{
		name:     "garbage with a quoted comma between links",
		fields:   []string{`<a>; rel=x, garbage "with, comma" here, <b>; rel=y`},
		want:     []WebLink{wl("a", "x"), wl("b", "y")},
		wantErrs: []string{"expected '<'"},
	},
	{
		name:     "missing >",
		fields:   []string{`<http://ex.org/a; rel="x", <http://ex.org/b>; rel="y"`},
		want:     []WebLink{wl("http://ex.org/b", "y")},
		wantErrs: []string{"missing '>'"},
	},
	{
		name:     "missing > at the end",
		fields:   []string{`<http://ex.org/b>; rel="y", <http://ex.org/a; rel="x"`},
		want:     []WebLink{wl("http://ex.org/b", "y")},
		wantErrs: []string{"missing '>'"},
	},
	{
		name:     "missing > before a line break (TimeMap)",
		fields:   []string{"<http://ex.org/a\n ; rel=\"memento\"; datetime=\"Tue, 11 Sep 2001 20:36:26 GMT\",\n<http://ex.org/b>; rel=\"memento\""},
		want:     []WebLink{wl("http://ex.org/b", "memento")},
		wantErrs: []string{"missing '>'"},
	},
	{
		name:     "missing <",
		fields:   []string{`http://ex.org/a>; rel="x", <http://ex.org/b>; rel="y"`},
		want:     []WebLink{wl("http://ex.org/b", "y")},
		wantErrs: []string{"expected '<'"},
	},
	{
		name:   "trailing comma, leading comma, trailing semicolon",
		fields: []string{`, <http://ex.org/a>; rel="x";, <http://ex.org/b>;,`},
		want:   []WebLink{wl("http://ex.org/a", "x"), wl("http://ex.org/b", "")},
	},
	{
		name:   "rel-less links",
		fields: []string{`<http://ex.org/a>; type="text/html", <http://ex.org/b>`},
		want:   []WebLink{wl("http://ex.org/a", "", "type", "text/html"), wl("http://ex.org/b", "")},
	},
	{
		name:   "empty target",
		fields: []string{`<>; rel="self"`},
		want:   []WebLink{wl("", "self")},
	},
	{
		name:     "missing comma between links: both kept",
		fields:   []string{`<http://ex.org/a>; rel=x <http://ex.org/b>; rel="y"`},
		want:     []WebLink{wl("http://ex.org/a", "x"), wl("http://ex.org/b", "y")},
		wantErrs: []string{"missing ','"},
	},
	{
		name:     "unexpected text after the target",
		fields:   []string{`<http://ex.org/a> rel="x", <http://ex.org/b>; rel="y"`},
		want:     []WebLink{wl("http://ex.org/b", "y")},
		wantErrs: []string{"unexpected character"},
	},
	{
		name:     "unquoted value with a space",
		fields:   []string{`<http://ex.org/a>; rel=first memento, <http://ex.org/b>; rel="y"`},
		want:     []WebLink{wl("http://ex.org/b", "y")},
		wantErrs: []string{"unexpected character"},
	},
	{
		name:     "invalid parameter name",
		fields:   []string{`<http://ex.org/a>; "rel"="x", <http://ex.org/b>; rel="y"`},
		want:     []WebLink{wl("http://ex.org/b", "y")},
		wantErrs: []string{"invalid parameter name"},
	},
	{
		name:     "unterminated quoted string",
		fields:   []string{`<http://ex.org/a>; title="oops, <http://ex.org/b>; rel=y`},
		want:     []WebLink{wl("http://ex.org/b", "y")},
		wantErrs: []string{"unterminated quoted string"},
	},
	{
		// A stray quote pairs with the next quote: the value swallows the
		// next link and the rest is garbage. Both links are lost, but the
		// error says where.
		name:     "stray quote pairs with the next link's quote",
		fields:   []string{`<http://ex.org/a>; title="oops, <http://ex.org/b>; rel="y"`},
		wantErrs: []string{"unexpected character"},
	},
	{
		name: "quotes out of step in a TimeMap: recover at the next line",
		fields: []string{"<http://ex.org/a>; rel=\"memento; datetime=\"Tue, 11 Sep 2001 20:36:26 GMT\",\n" +
			"<http://ex.org/b>; rel=\"memento\"; datetime=\"Wed, 12 Sep 2001 20:36:26 GMT\""},
		want:     []WebLink{wl("http://ex.org/b", "memento", "datetime", "Wed, 12 Sep 2001 20:36:26 GMT")},
		wantErrs: []string{"unexpected character", "expected '<'"},
	},
	{
		name:     "several fields: a broken field does not affect the next",
		fields:   []string{`<http://ex.org/a>; title="unterminated`, `<http://ex.org/b>; rel="y"`},
		want:     []WebLink{wl("http://ex.org/b", "y")},
		wantErrs: []string{"unterminated quoted string"},
	},
	{
		name:   "RFC 7089 Fig. 12 (302 TimeGate response)",
		fields: []string{rfc7089Fig12},
		want:   fig12Want,
	},
	{
		name:   "RFC 7089 Fig. 12 as quoted in the notes",
		fields: []string{notesFig12},
		want:   fig12Want,
	},
	{
		name:   "RFC 7089 Fig. 12 unfolded into one line",
		fields: []string{unfold(rfc7089Fig12)},
		want:   fig12Want,
	},
	{
		name:   "RFC 7089 Fig. 14 (memento response)",
		fields: []string{rfc7089Fig14},
		want: []WebLink{
			wl("http://a.example.org/", "original"),
			wl("http://arxiv.example.net/timemap/http://a.example.org/", "timemap", "type", "application/link-format"),
			wl("http://arxiv.example.net/timegate/http://a.example.org/", "timegate"),
		},
	},
	{
		name:   "RFC 7089 Fig. 28 TimeMap body",
		fields: []string{rfc7089Fig28Links},
		want:   fig28Want,
	},
	{
		name:     "RFC 7089 Fig. 28 verbatim, with its '...' elision",
		fields:   []string{rfc7089Fig28},
		want:     fig28Want,
		wantErrs: []string{"expected '<'"},
	},
	{
		name:     "RFC 7089 Fig. 28 as quoted in the notes, with '…'",
		fields:   []string{notesFig28},
		want:     fig28Want[:4],
		wantErrs: []string{"expected '<'"},
	},
	{
		name:   "RFC 7089 Fig. 30 paging TimeMap, missing comma as printed",
		fields: []string{rfc7089Fig30},
		want: []WebLink{
			wl("http://a.example.org", "original"),
			wl("http://arxiv.example.net/timegate/http://a.example.org", "timegate"),
			wl("http://arxiv.example.net/timemap/1/http://a.example.org", "self", "type", "application/link-format",
				"from", "Tue, 20 Jun 2000 18:02:59 GMT", "until", "Wed, 09 Apr 2008 20:30:51 GMT"),
			wl("http://arxiv.example.net/timemap/2/http://a.example.org", "timemap", "type", "application/link-format",
				"from", "Thu, 10 Apr 2008 20:30:51 GMT", "until", "Tue, 27 Oct 2009 20:49:54 GMT"),
			wl("http://arxiv.example.net/timemap/3/http://a.example.org", "timemap", "type", "application/link-format",
				"from", "Thu, 29 Oct 2009 20:30:51 GMT", "until", "Fri, 31 Aug 2012 12:22:34 GMT"),
			wl("http://arxiv.example.net/web/20000620180259/http://a.example.org", "memento", "datetime", "Tue, 20 Jun 2000 18:02:59 GMT"),
			wl("http://arxiv.example.net/web/20000621011731/http://a.example.org", "memento", "datetime", "Wed, 21 Jun 2000 01:17:31 GMT"),
			wl("http://arxiv.example.net/web/20000621044156/http://a.example.org", "memento", "datetime", "Wed, 21 Jun 2000 04:41:56 GMT"),
		},
		wantErrs: []string{"missing ','", "expected '<'"},
	},
	{
		name:   "RFC 7089 Fig. 31 (anchor)",
		fields: []string{rfc7089Fig31},
		want: []WebLink{wl("http://arxiv.example.net/timemap/http://a.example.org", "timemap",
			"anchor", "http://a.example.org", "type", "application/link-format")},
	},
	{
		name: "RFC 7089 Fig. 18 pattern: lone memento",
		fields: []string{`<http://a.example.org/>; rel="original", ` +
			`<http://arxiv.example.net/web/20010321203610/http://a.example.org/>; rel="first last memento"; datetime="Wed, 21 Mar 2001 20:36:10 GMT"`},
		want: []WebLink{
			wl("http://a.example.org/", "original"),
			wl("http://arxiv.example.net/web/20010321203610/http://a.example.org/", "first last memento", "datetime", "Wed, 21 Mar 2001 20:36:10 GMT"),
		},
	},
	{
		name:   "non-ASCII bytes in target and quoted value pass through",
		fields: []string{"<http://ex.org/caf\xc3\xa9>; title=\"caf\xc3\xa9 \xff\""},
		want:   []WebLink{wl("http://ex.org/caf\xc3\xa9", "", "title", "caf\xc3\xa9 \xff")},
	},
}

// unfold joins continuation lines the way net/textproto does for obs-fold.
func unfold(s string) string {
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, " ")
}

// linkHeaderErrors returns the *linkHeaderError values joined in err.
func linkHeaderErrors(t *testing.T, err error) []*linkHeaderError {
	t.Helper()
	if err == nil {
		return nil
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("error %v (%T) is not an errors.Join", err, err)
	}
	var out []*linkHeaderError
	for _, e := range joined.Unwrap() {
		var le *linkHeaderError
		if !errors.As(e, &le) {
			t.Fatalf("joined error %v (%T) is not a *linkHeaderError", e, e)
		}
		out = append(out, le)
	}
	return out
}

func TestParseLinkHeader(t *testing.T) {
	for _, tc := range linkHeaderCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseLinkHeader(tc.fields...)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("links:\n got %s\nwant %s", fmtLinks(got), fmtLinks(tc.want))
			}
			errs := linkHeaderErrors(t, err)
			if len(errs) != len(tc.wantErrs) {
				t.Fatalf("got %d errors, want %d: %v", len(errs), len(tc.wantErrs), err)
			}
			for i, e := range errs {
				if !strings.Contains(e.Reason, tc.wantErrs[i]) {
					t.Errorf("error %d = %q, want reason containing %q", i, e.Error(), tc.wantErrs[i])
				}
			}
		})
	}
}

func fmtLinks(links []WebLink) string {
	if links == nil {
		return "nil"
	}
	var b strings.Builder
	for _, l := range links {
		fmt.Fprintf(&b, "\n  %q rel=%q params=%q", l.URI, l.Rel, l.Params)
	}
	return b.String()
}

// TestParseLinkHeaderRoundTrip checks that String output parses back to the
// same links, for every table case.
func TestParseLinkHeaderRoundTrip(t *testing.T) {
	for _, tc := range linkHeaderCases {
		links, _ := ParseLinkHeader(tc.fields...)
		s := joinLinks(links)
		again, err := ParseLinkHeader(s)
		if err != nil {
			t.Errorf("%s: re-parse of %q: %v", tc.name, s, err)
		}
		if !reflect.DeepEqual(again, links) {
			t.Errorf("%s: round trip via %q:\n got %s\nwant %s", tc.name, s, fmtLinks(again), fmtLinks(links))
		}
	}
}

func joinLinks(links []WebLink) string {
	parts := make([]string, len(links))
	for i, l := range links {
		parts[i] = l.String()
	}
	return strings.Join(parts, ", ")
}

func TestWebLinkString(t *testing.T) {
	tests := []struct {
		link WebLink
		want string
	}{
		{wl("http://ex.org/", ""), `<http://ex.org/>`},
		{wl("http://ex.org/", "original"), `<http://ex.org/>; rel="original"`},
		{
			wl("http://ex.org/a,b", "first memento",
				"datetime", "Tue, 11 Sep 2001 20:36:26 GMT",
				"title", `say "hi" \ bye`,
				"title*", "€ rates",
				"crossorigin", ""),
			`<http://ex.org/a,b>; rel="first memento"; crossorigin; datetime="Tue, 11 Sep 2001 20:36:26 GMT"; ` +
				`title="say \"hi\" \\ bye"; title*=UTF-8''%E2%82%AC%20rates`,
		},
		// Not produced by the parser, but String must still write something
		// that parses: '<', '>' and controls in the target are encoded.
		{wl("http://ex.org/<x>\r\n", ""), `<http://ex.org/%3Cx%3E%0D%0A>`},
	}
	for _, tc := range tests {
		if got := tc.link.String(); got != tc.want {
			t.Errorf("String() =\n %s\nwant\n %s", got, tc.want)
		}
	}
}

func TestWebLinkHasRel(t *testing.T) {
	links, err := ParseLinkHeader(`<http://ex.org/>; rel="First memento http://Example.org/Rel/X"`)
	if err != nil || len(links) != 1 {
		t.Fatalf("ParseLinkHeader: %v %v", links, err)
	}
	l := links[0]
	for _, rel := range []string{"first", "FIRST", "Memento", "memento", "http://example.org/rel/x", "HTTP://EXAMPLE.ORG/REL/X"} {
		if !l.HasRel(rel) {
			t.Errorf("HasRel(%q) = false, want true", rel)
		}
	}
	for _, rel := range []string{"", "last", "first memento", "mem", "http://example.org/rel"} {
		if l.HasRel(rel) {
			t.Errorf("HasRel(%q) = true, want false", rel)
		}
	}
	if (WebLink{}).HasRel("") {
		t.Error("rel-less link: HasRel(\"\") = true")
	}
}

func TestLinkHeaderErrorOffsets(t *testing.T) {
	f0 := `<http://ex.org/a>; rel="x"`
	f1 := `<http://ex.org/b>; rel="y", garbage, <http://ex.org/c`
	links, err := ParseLinkHeader(f0, f1)
	if len(links) != 2 {
		t.Fatalf("links = %s", fmtLinks(links))
	}
	errs := linkHeaderErrors(t, err)
	if len(errs) != 2 {
		t.Fatalf("errors = %v", err)
	}
	// Offsets are in the fields joined with ", ".
	combined := f0 + ", " + f1
	for i, want := range []struct{ at, excerpt string }{
		{"garbage", "garbage, <http://ex.org/c"},
		{"<http://ex.org/c", "<http://ex.org/c"},
	} {
		if off := strings.Index(combined, want.at); errs[i].Offset != off {
			t.Errorf("error %d: Offset = %d, want %d", i, errs[i].Offset, off)
		}
		if errs[i].Excerpt != want.excerpt {
			t.Errorf("error %d: Excerpt = %q, want %q", i, errs[i].Excerpt, want.excerpt)
		}
	}
	wantMsg := fmt.Sprintf(`link header: offset %d: expected '<' at the start of a link: "garbage, <http://ex.org/c"`, strings.Index(combined, "garbage"))
	if got := errs[0].Error(); got != wantMsg {
		t.Errorf("Error() = %s\nwant      %s", got, wantMsg)
	}
	if !strings.Contains(err.Error(), wantMsg) {
		t.Errorf("joined error %q does not contain %q", err, wantMsg)
	}

	// Excerpts are bounded and do not split a UTF-8 sequence.
	long := "é" + strings.Repeat("€", 30)
	_, err = ParseLinkHeader(long)
	errs = linkHeaderErrors(t, err)
	if len(errs) != 1 || len(errs[0].Excerpt) > linkExcerptLen || !strings.HasPrefix(long, errs[0].Excerpt) || !isValidUTF8(errs[0].Excerpt) {
		t.Errorf("excerpt of %q = %v", long, errs)
	}
}

func isValidUTF8(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

func TestParseLinkHeaderErrorCap(t *testing.T) {
	in := strings.Repeat("junk, ", 1000) + `<http://ex.org/>; rel="ok"`
	links, err := ParseLinkHeader(in)
	if !reflect.DeepEqual(links, []WebLink{wl("http://ex.org/", "ok")}) {
		t.Errorf("links = %s", fmtLinks(links))
	}
	errs := linkHeaderErrors(t, err)
	if len(errs) != maxLinkHeaderErrors+1 {
		t.Fatalf("got %d errors, want %d", len(errs), maxLinkHeaderErrors+1)
	}
	last := errs[len(errs)-1]
	if want := fmt.Sprintf("%d more problems not listed", 1000-maxLinkHeaderErrors); last.Reason != want {
		t.Errorf("last error reason = %q, want %q", last.Reason, want)
	}
	if want := maxLinkHeaderErrors * len("junk, "); last.Offset != want {
		t.Errorf("last error offset = %d, want %d", last.Offset, want)
	}
}

// TestParseLinkHeaderFromHTTPResponse feeds the RFC 7089 responses, with
// their folded Link lines, through net/http as a client would see them.
func TestParseLinkHeaderFromHTTPResponse(t *testing.T) {
	responses := []struct {
		raw  string
		want []WebLink
	}{
		{
			raw: "HTTP/1.1 302 Found\r\n" +
				"Date: Thu, 21 Jan 2010 00:02:14 GMT\r\n" +
				"Server: Apache\r\n" +
				"Vary: accept-datetime\r\n" +
				"Location:\r\n http://arxiv.example.net/web/20010321203610/http://a.example.org/\r\n" +
				"Link: " + strings.ReplaceAll(rfc7089Fig12, "\n", "\r\n") + "\r\n" +
				"Content-Length: 0\r\n" +
				"Content-Type: text/plain; charset=UTF-8\r\n" +
				"Connection: close\r\n\r\n",
			want: fig12Want,
		},
		{
			raw: "HTTP/1.1 200 OK\r\n" +
				"Memento-Datetime: Wed, 21 Mar 2001 20:36:10 GMT\r\n" +
				"Link: <http://a.example.org/>; rel=\"original\"\r\n" +
				"Link: " + strings.ReplaceAll(rfc7089Fig14[strings.Index(rfc7089Fig14, ",")+2:], "\n", "\r\n") + "\r\n" +
				"Content-Length: 0\r\n\r\n",
			want: []WebLink{
				wl("http://a.example.org/", "original"),
				wl("http://arxiv.example.net/timemap/http://a.example.org/", "timemap", "type", "application/link-format"),
				wl("http://arxiv.example.net/timegate/http://a.example.org/", "timegate"),
			},
		},
	}
	for i, r := range responses {
		resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(r.raw)), nil)
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		resp.Body.Close()
		got, err := ParseLinkHeader(resp.Header.Values("Link")...)
		if err != nil {
			t.Errorf("response %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, r.want) {
			t.Errorf("response %d (Link %q):\n got %s\nwant %s", i, resp.Header.Values("Link"), fmtLinks(got), fmtLinks(r.want))
		}
	}
}

func TestResolveLinks(t *testing.T) {
	base, err := url.Parse("http://example.org/dir/page?q=1#frag")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ uri, want string }{
		{"", "http://example.org/dir/page?q=1"}, // the base, without its fragment
		{"other", "http://example.org/dir/other"},
		{"../up", "http://example.org/up"},
		{"./a/../b", "http://example.org/dir/b"},
		{"/abs", "http://example.org/abs"},
		{"//cdn.example.net/x", "http://cdn.example.net/x"},
		{"?p=2", "http://example.org/dir/page?p=2"},
		{"#sec", "http://example.org/dir/page?q=1#sec"},
		{"https://Other.example/A/./b", "https://Other.example/A/./b"}, // absolute: byte for byte
		{"mailto:a@example.org", "mailto:a@example.org"},
		{"http://[::1", "http://[::1"}, // unparsable: kept
	}
	links := make([]WebLink, len(tests))
	for i, tc := range tests {
		links[i] = wl(tc.uri, "memento", "datetime", "Tue, 11 Sep 2001 20:36:26 GMT")
	}
	got := ResolveLinks(base, links)
	if len(got) != len(tests) {
		t.Fatalf("got %d links", len(got))
	}
	for i, tc := range tests {
		if got[i].URI != tc.want {
			t.Errorf("ResolveLinks(%q) = %q, want %q", tc.uri, got[i].URI, tc.want)
		}
		if !reflect.DeepEqual(got[i].Rel, links[i].Rel) || !reflect.DeepEqual(got[i].Params, links[i].Params) {
			t.Errorf("%q: rel/params changed: %v %v", tc.uri, got[i].Rel, got[i].Params)
		}
	}

	// Copies: changing the result leaves the input alone.
	got[0].Rel[0] = "changed"
	got[0].Params["datetime"] = "changed"
	if links[0].Rel[0] != "memento" || links[0].Params["datetime"] != "Tue, 11 Sep 2001 20:36:26 GMT" {
		t.Errorf("ResolveLinks shares Rel or Params with its input: %+v", links[0])
	}
	if tests[0].uri != links[0].URI {
		t.Errorf("input URI changed to %q", links[0].URI)
	}
	if base.Fragment != "frag" {
		t.Errorf("base changed: %v", base)
	}

	// A nil base gives plain copies; nil links give nil.
	plain := ResolveLinks(nil, links[:2])
	if !reflect.DeepEqual(plain, links[:2]) {
		t.Errorf("ResolveLinks(nil, ...) = %s", fmtLinks(plain))
	}
	if ResolveLinks(base, nil) != nil {
		t.Error("ResolveLinks(base, nil) != nil")
	}
	if r := ResolveLinks(base, []WebLink{{URI: "x"}}); r[0].Rel != nil || r[0].Params != nil {
		t.Errorf("nil Rel/Params not kept nil: %+v", r[0])
	}
}

// TestParseLinkHeaderLargeInputs parses ~10 MB inputs of the shapes that make
// naive parsers quadratic. There is no timing assertion: a quadratic parser
// would not finish within the test timeout (even at the 1 MB used with -short
// or -race, where 10 MB takes tens of seconds).
func TestParseLinkHeaderLargeInputs(t *testing.T) {
	size := 10 << 20
	if testing.Short() || raceEnabled() {
		size = 1 << 20
	}
	rep := func(unit string) string { return strings.Repeat(unit, size/len(unit)) }
	memento := `<http://arxiv.example.net/web/20010911203626/http://a.example.org/>; rel="memento"; datetime="Tue, 11 Sep 2001 20:36:26 GMT", `
	tests := []struct {
		name      string
		in        string
		wantLinks int
		wantErr   bool
	}{
		{"many links", rep(memento), size / len(memento), false},
		{"one huge quoted value", `<a>; title="` + rep("x") + `"`, 1, false},
		{"one huge escaped quoted value", `<a>; title="` + rep(`\"`) + `"`, 1, false},
		{"unterminated quote then escaped quotes and commas", `<a>; title="` + rep(`\",`), 0, true},
		{"unterminated quote then escaped quotes", `<a>; title="` + rep(`\"`), 0, true},
		{"stray quotes", rep(`x",`), 0, true},
		{"huge rel list, distinct tokens", `<a>; rel="` + rep("r0 r1 r2 r3 r4 r5 r6 r7 r8 r9 ") + `"`, 1, false},
		{"huge rel list, one token", `<a>; rel="` + rep("memento ") + `"`, 1, false},
		{"many params", "<a>" + rep(`; p="v"`), 1, false},
		{"garbage elements", rep("garbage, "), 0, true},
		{"unclosed targets", rep("<a "), 0, true},
		{"target without >", "<" + rep("a"), 0, true},
		{"newlines", rep("\n"), 0, false},
	}
	for _, tc := range tests {
		links, err := ParseLinkHeader(tc.in)
		if len(links) != tc.wantLinks {
			t.Errorf("%s: %d links, want %d", tc.name, len(links), tc.wantLinks)
		}
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: err = %.200v", tc.name, err)
		}
		if err != nil {
			if n := len(linkHeaderErrors(t, err)); n > maxLinkHeaderErrors+1 {
				t.Errorf("%s: %d errors, cap is %d", tc.name, n, maxLinkHeaderErrors+1)
			}
		}
	}
}

func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// timeMapFixture builds an application/link-format TimeMap with n mementos,
// laid out like RFC 7089 Fig. 28.
func timeMapFixture(n int) string {
	var b strings.Builder
	b.WriteString("<http://a.example.org/>;rel=\"original\",\n")
	b.WriteString("<http://arxiv.example.net/timemap/link/http://a.example.org/>\n  ; rel=\"self\";type=\"application/link-format\"\n")
	b.WriteString("  ; from=\"Tue, 20 Jun 2000 18:02:59 GMT\"; until=\"Wed, 09 Apr 2008 20:30:51 GMT\",\n")
	b.WriteString("<http://arxiv.example.net/timegate/http://a.example.org/>; rel=\"timegate\"")
	for i := range n {
		rel := "memento"
		switch i {
		case 0:
			rel = "first memento"
		case n - 1:
			rel = "last memento"
		}
		fmt.Fprintf(&b, ",\n<http://arxiv.example.net/web/2000%010d/http://a.example.org/>\n  ; rel=%q;datetime=\"Tue, 20 Jun 2000 18:02:59 GMT\"\n  ; license=%q", i, rel, cc0)
	}
	b.WriteString("\n")
	return b.String()
}

func TestTimeMapFixture(t *testing.T) {
	links, err := ParseLinkHeader(timeMapFixture(1000))
	if err != nil {
		t.Fatal(err)
	}
	if len(links) != 1003 {
		t.Fatalf("%d links, want 1003", len(links))
	}
	mementos := 0
	for _, l := range links {
		if l.HasRel("memento") {
			mementos++
			if l.Params["datetime"] != "Tue, 20 Jun 2000 18:02:59 GMT" || l.Params["license"] != cc0 {
				t.Fatalf("memento %+v", l)
			}
		}
	}
	if mementos != 1000 || !links[3].HasRel("first") || !links[1002].HasRel("last") {
		t.Errorf("mementos = %d, first = %v, last = %v", mementos, links[3], links[1002])
	}
}

// BenchmarkParseLinkHeader parses a 1,000-memento TimeMap.
func BenchmarkParseLinkHeader(b *testing.B) {
	in := timeMapFixture(1000)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		links, err := ParseLinkHeader(in)
		if err != nil || len(links) != 1003 {
			b.Fatalf("%d links, %v", len(links), err)
		}
	}
}

// BenchmarkParseLinkHeader10MB parses 10 MB Link values (valid links, and
// hostile unterminated quotes), to show the cost stays linear.
func BenchmarkParseLinkHeader10MB(b *testing.B) {
	const size = 10 << 20
	memento := `<http://arxiv.example.net/web/20010911203626/http://a.example.org/>; rel="memento"; datetime="Tue, 11 Sep 2001 20:36:26 GMT", `
	for _, bc := range []struct{ name, in string }{
		{"links", strings.Repeat(memento, size/len(memento))},
		{"unterminated-quotes", `<a>; title="` + strings.Repeat(`\",`, size/3)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.in)))
			for b.Loop() {
				ParseLinkHeader(bc.in)
			}
		})
	}
}
