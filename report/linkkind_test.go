package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
)

// TestFindings_ElementAndAttribute: every output names the element and
// attribute of a broken link that is not a hyperlink (here an image
// candidate of a srcset), so an image is told from a link.
func TestFindings_ElementAndAttribute(t *testing.T) {
	ds := ciDataset()
	for i := range ds.Links {
		if ds.Links[i].ID == 7 {
			ds.Links[i].Attr = "srcset"
		}
	}
	out := map[Format]string{}
	for _, f := range Formats {
		var b bytes.Buffer
		if err := Write(&b, f, ds); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[f] = b.String()
	}
	var gh bytes.Buffer
	if err := WriteGitHub(&gh, ds); err != nil {
		t.Fatal(err)
	}

	// JSON: the finding and the link carry element, attribute and kind.
	var doc struct {
		Findings []jsonFinding `json:"findings"`
		Links    []jsonLink    `json:"links"`
	}
	if err := json.Unmarshal([]byte(out[JSON]), &doc); err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, f := range doc.Findings {
		if f.LinkID != nil && *f.LinkID == 7 {
			found++
			if f.Element != "img" || f.Attr != "srcset" || f.Kind != "resource" {
				t.Errorf("json finding of link 7: %+v", f)
			}
		} else if f.LinkID != nil && (f.Element != "a" || f.Attr != "href" || f.Kind != "navigation") {
			t.Errorf("json finding of link %d: %+v", *f.LinkID, f)
		}
	}
	if found != 1 {
		t.Errorf("%d json findings of link 7, want 1", found)
	}
	for _, l := range doc.Links {
		if l.ID == 7 && (l.Element != "img" || l.Attr != "srcset" || l.Kind != "resource") {
			t.Errorf("json link 7: %+v", l)
		}
	}

	// SARIF: the result's properties and message.
	var sarif sarifLog
	if err := json.Unmarshal([]byte(out[SARIF]), &sarif); err != nil {
		t.Fatal(err)
	}
	found = 0
	for _, r := range sarif.Runs[0].Results {
		if r.Properties["target"] == "https://cdn.example/logo.png" {
			found++
			if r.Properties["element"] != "img" || r.Properties["attr"] != "srcset" || r.Properties["kind"] != "resource" ||
				!strings.HasPrefix(r.Message.Text, "<img srcset> https://cdn.example/logo.png is broken") {
				t.Errorf("sarif result %+v", r)
			}
		}
	}
	if found != 1 {
		t.Errorf("%d sarif results of the image, want 1", found)
	}

	// GitHub annotations and the Markdown-free terminal lines.
	if !strings.Contains(gh.String(), "::<img srcset> https://cdn.example/logo.png is broken") {
		t.Errorf("github annotations lack the element:\n%s", gh.String())
	}
	if !strings.Contains(gh.String(), "::Link to https://ext.example/gone is broken") {
		t.Errorf("github annotations of hyperlinks changed:\n%s", gh.String())
	}

	// CSV: the attr column.
	rows, err := csv.NewReader(strings.NewReader(out[CSV])).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	for _, r := range rows[1:] {
		if r[col["link_id"]] == "7" && (r[col["element"]] != "img" || r[col["attr"]] != "srcset") {
			t.Errorf("csv row of link 7: element %q attr %q", r[col["element"]], r[col["attr"]])
		}
		if r[col["link_id"]] == "1" && r[col["attr"]] != "href" {
			t.Errorf("csv row of link 1: attr %q", r[col["attr"]])
		}
	}

	// HTML: the element badge says which attribute.
	if !strings.Contains(out[HTML], `"img srcset"`) {
		t.Error("html report data lacks the element label \"img srcset\"")
	}
}

func TestElementLabel(t *testing.T) {
	for _, tt := range []struct{ element, attr, want string }{
		{"a", "href", "a"}, {"img", "src", "img"}, {"img", "srcset", "img srcset"}, {"video", "src", "video"},
		{"video", "poster", "video poster"}, {"meta", "content", "meta"}, {"q", "cite", "q"}, {"link", "", "link"},
		{"frame", "src", "frame src"},
	} {
		if got := elementLabel(tt.element, tt.attr); got != tt.want {
			t.Errorf("elementLabel(%q, %q) = %q, want %q", tt.element, tt.attr, got, tt.want)
		}
	}
}
