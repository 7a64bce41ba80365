package report

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

// parkedDataset is fullDataset with the essay's domain parked: its check,
// and the finding the findings rule makes of it.
func parkedDataset() *Dataset {
	ds := fullDataset()
	for i := range ds.Checks {
		c := &ds.Checks[i]
		if c.URL == "https://ext.example/essay" {
			c.Verdict = audit.VerdictParked
			c.Reason = "parked domain (score 2.40 ≥ 1; parking service, for sale): parked (html): parking code from sedoparking.com +0.80"
			c.Soft404 = &audit.Soft404Evidence{Parked: 2.4, Signals: []audit.Soft404Signal{
				{Name: "parked", Where: "html", Score: 0.8, Match: "parking code from sedoparking.com"}}}
			ds.Findings = append(ds.Findings, audit.Finding{RunID: 3, PageURL: "https://site.example/refs", LinkID: 5,
				Target: c.URL, Verdict: c.Verdict, Message: audit.VerdictMessage(c)})
		}
	}
	return ds
}

// TestReport_ParkedAdvice: the reports say what to do about a parked
// domain, which is not what to do about a page missing from a live site.
func TestReport_ParkedAdvice(t *testing.T) {
	ds := parkedDataset()
	advice := audit.FixAdvice(audit.VerdictParked)

	var md bytes.Buffer
	if err := WriteMarkdown(&md, ds); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| parked (200) | 1 | https://ext.example/essay |") ||
		!strings.Contains(md.String(), "**parked**: "+mdEscape(advice)) {
		t.Errorf("markdown lacks the parked target or its fix:\n%s", md.String())
	}
	if strings.Count(md.String(), "will not come back") != 1 {
		t.Errorf("the fix is not said once:\n%s", md.String())
	}

	var gh bytes.Buffer
	if err := WriteGitHub(&gh, ds); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(gh.String(), "https://ext.example/essay") || !strings.Contains(gh.String(), "Link the archived copy") {
		t.Errorf("annotations lack the fix:\n%s", gh.String())
	}

	// The HTML report's data gives the advice with the verdict, for the
	// fix of every parked target; other verdicts have none.
	var h bytes.Buffer
	if err := WriteHTML(&h, ds); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)<script type="application/json" id="report-data">(.*?)</script>`).FindStringSubmatch(h.String())
	if m == nil {
		t.Fatal("no data island")
	}
	var data struct {
		Verdicts [][]any `json:"verdicts"`
	}
	if err := json.Unmarshal([]byte(m[1]), &data); err != nil {
		t.Fatal(err)
	}
	for _, v := range data.Verdicts {
		name, _ := v[0].(string)
		switch {
		case name == string(audit.VerdictParked):
			if len(v) != 4 || v[3] != advice {
				t.Errorf("parked in the data: %v", v)
			}
		case len(v) != 3:
			t.Errorf("%s has advice in the data: %v", name, v)
		}
	}
	if !strings.Contains(h.String(), "V[r[2]][3]") {
		t.Error("the report's script does not show the advice")
	}
}
