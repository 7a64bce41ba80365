package report

import (
	"strings"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
)

// invalidDataset is a run of one page whose only finding is a link whose
// URL does not parse (no target), beside an ok link.
func invalidDataset() *Dataset {
	t0 := at("2024-06-01T10:00:00Z")
	const href = `http://[::1<script>`
	return &Dataset{
		Run: audit.Run{ID: 1, StartedAt: t0, FinishedAt: t0.Add(time.Second), Status: audit.RunComplete, Mode: "dir",
			Seeds: []string{"docs as http://localhost/"}, Version: "test"},
		Stats: audit.RunStats{Pages: 1, Links: 2, Targets: 1, Diagnostics: 1},
		Pages: []*audit.Page{{Extraction: audit.Extraction{URL: "http://localhost/"}, Status: 200, FetchedAt: t0, File: "docs/index.html"}},
		Links: []Link{
			{ID: 1, Page: 0, Link: audit.Link{Element: "a", Attr: "href", Href: href, RawHref: href, Text: "bad", Line: 7, Column: 3,
				Diagnostics: []audit.Diagnostic{{Field: "href", Code: audit.CodeInvalidURL, Message: `href="` + href + `" is not a valid URL: An IPv6 address is missing the closing U+005D (])`}}}},
			{ID: 2, Page: 0, TargetID: 5, Link: audit.Link{Element: "a", Attr: "href", Href: "http://localhost/", Text: "home", Line: 8, Column: 3}},
		},
		Targets: []Target{{5, "http://localhost/", "localhost"}},
		Checks:  []audit.Check{{RunID: 1, TargetID: 5, URL: "http://localhost/", Verdict: audit.VerdictOK, Status: 200}},
		Findings: []audit.Finding{{RunID: 1, PageURL: "http://localhost/", LinkID: 1, Target: href, Verdict: audit.VerdictInvalidURL,
			Message: "invalid URL: An IPv6 address is missing the closing U+005D (])"}},
		GeneratedAt: t0, Generator: "linkrot test",
	}
}

// TestWrite_InvalidURL: every format shows a link whose URL does not
// parse as a finding on that link, at its position, with the reason, and
// never calls the run clean; the HTML report escapes the URL.
func TestWrite_InvalidURL(t *testing.T) {
	const reason = "invalid URL: An IPv6 address is missing the closing U+005D (])"
	for _, tt := range []struct {
		f    Format
		want []string
		not  []string
	}{
		{HTML, []string{`id="invalid-urls"`, "<code>docs/index.html:7:3</code>", "<code>http://[::1&lt;script&gt;</code>", "invalid URL: An IPv6 address is missing"}, []string{"[::1<script>"}},
		{JSON, []string{`"verdict": "invalid-url"`, `"line": 7`, reason}, nil},
		{CSV, []string{",invalid-url,", "invalid-url: " + reason}, nil},
		{JUnit, []string{`classname="invalid-urls"`, `line="7"`, `type="invalid-url"`, "invalid URL: An IPv6"}, nil},
		{Markdown, []string{"**1 links with an invalid URL**", "invalid-url 1", "`docs/index.html:7:3` | invalid-url", "invalid URL: An IPv6 address is missing"}, []string{"No broken links"}},
		{SARIF, []string{`"ruleId": "invalid-url"`, `"startLine": 7`, "cannot be followed: " + reason}, nil},
		{GitHub, []string{"::error file=", "line=7,col=3,title=linkrot%3A invalid-url::Link http://[::1<script> cannot be followed: " + reason}, nil},
	} {
		var b strings.Builder
		if err := Write(&b, tt.f, invalidDataset()); err != nil {
			t.Fatalf("%s: %v", tt.f, err)
		}
		for _, w := range tt.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s lacks %q:\n%.4000s", tt.f, w, b.String())
			}
		}
		for _, w := range tt.not {
			if strings.Contains(b.String(), w) {
				t.Errorf("%s has %q", tt.f, w)
			}
		}
	}
}
