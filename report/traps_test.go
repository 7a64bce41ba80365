package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

// trapDataset is fullDataset with two crawl traps: one whose example is
// a link of its page (/refs, link 1 on the home page), one on a page
// without a matching link (its first link stands in).
func trapDataset() *Dataset {
	ds := fullDataset()
	ds.CrawlTraps = []audit.CrawlTrap{
		{RunID: ds.Run.ID, Kind: audit.TrapQueryVariants, Pattern: "https://site.example/refs?…", PageURL: "https://site.example/",
			Example: "https://site.example/refs", Cut: 412, Limit: 100},
		{RunID: ds.Run.ID, Kind: audit.TrapRepeatedSegments, Pattern: "https://site.example/(more/){3,}", PageURL: "https://site.example/refs",
			Example: "https://site.example/more/more/more/", Cut: 3, Limit: 2},
	}
	return ds
}

func TestCrawlTraps_EveryOutput(t *testing.T) {
	ds := trapDataset()
	out := map[Format]string{}
	for _, f := range Formats {
		var b bytes.Buffer
		if err := Write(&b, f, ds); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[f] = b.String()
	}
	for _, f := range Formats {
		want := "(more/){3,}"
		if f == Markdown {
			want = `\(more/\)\{3,\}` // Markdown escapes
		}
		if !strings.Contains(out[f], want) || !strings.Contains(out[f], "412") {
			t.Errorf("%s output lacks the crawl traps", f)
		}
	}
	// JSON: the crawl_traps array, tied to the link that hit the guard.
	var doc struct {
		Traps []jsonTrap `json:"crawl_traps"`
	}
	if err := json.Unmarshal([]byte(out[JSON]), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Traps) != 2 || doc.Traps[0].Kind != "crawl-trap" || doc.Traps[0].Trap != "query-variants" ||
		doc.Traps[0].LinkID == nil || *doc.Traps[0].LinkID != 1 || doc.Traps[1].LinkID == nil || *doc.Traps[1].LinkID != 3 {
		t.Errorf("json crawl_traps = %+v", doc.Traps)
	}
	// CSV: the finding in the findings cell of link 1.
	rows, err := csv.NewReader(strings.NewReader(out[CSV])).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := len(rows[0]) - 1
	if rows[0][col] != "findings" || !strings.Contains(rows[1][col], "crawl-trap: crawl trap: more than 100 query variants of one path; 412 URLs not crawled") {
		t.Errorf("csv link 1 findings = %q", rows[1][col])
	}
	// SARIF: a warning of rule crawl-trap on the page.
	var sarif sarifLog
	if err := json.Unmarshal([]byte(out[SARIF]), &sarif); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range sarif.Runs[0].Results {
		if r.RuleID == "crawl-trap" {
			n++
			rule := sarif.Runs[0].Tool.Driver.Rules[r.RuleIndex]
			if rule.ID != "crawl-trap" || r.Level != "warning" || r.Locations[0].PhysicalLocation.ArtifactLocation.URI == "" {
				t.Errorf("sarif result %+v (rule %+v)", r, rule)
			}
		}
	}
	if n != 2 {
		t.Errorf("%d sarif crawl-trap results, want 2", n)
	}
	if !strings.Contains(out[JUnit], `classname="crawl-trap"`) || !strings.Contains(out[Markdown], "### Crawl traps") ||
		!strings.Contains(out[HTML], `id="crawl-traps"`) {
		t.Errorf("junit, markdown or html lacks the crawl traps section")
	}
}

// TestCrawlTraps_Schema: the JSON output with traps validates (strictly)
// against the schema.
func TestCrawlTraps_Schema(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "report.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, trapDataset()); err != nil {
		t.Fatal(err)
	}
	var data any
	dec := json.NewDecoder(&buf)
	dec.UseNumber()
	if err := dec.Decode(&data); err != nil {
		t.Fatal(err)
	}
	v := &validator{root: schema, strict: true}
	for _, e := range v.validate("$", data, schema) {
		t.Error(e)
	}
}

// TestCrawlTraps_HostileHTML: a trap's pattern and page are crawled data,
// escaped in the HTML report; a javascript: page URL does not become a
// link.
func TestCrawlTraps_HostileHTML(t *testing.T) {
	ds := trapDataset()
	ds.CrawlTraps[0].Pattern = `https://site.example/<script>alert(1)</script>?…`
	ds.CrawlTraps[0].PageURL = "javascript:alert(1)"
	var b bytes.Buffer
	if err := WriteHTML(&b, ds); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if strings.Contains(s, "<script>alert(1)") || strings.Contains(s, `href="javascript:`) {
		t.Errorf("hostile trap data rendered unescaped")
	}
}
