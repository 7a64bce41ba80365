package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ciDataset is fullDataset audited from a local directory: pages have
// source files, links positions, and a baseline marks the first
// occurrence of the gone target as old (its history is in fullDataset).
func ciDataset() *Dataset {
	ds := fullDataset()
	ds.Run.Mode = "dir"
	ds.Pages[0].File = "docs/index.md"
	ds.Pages[1].File = "docs/refs, notes: 100%.md" // ',' ':' '%' escaped in properties
	for i := range ds.Links {
		l := &ds.Links[i]
		l.Line, l.Column = int(l.ID)*2+1, int(l.ID)+4
	}
	ds.Findings[2].Message = "no answer in 30s\r\nafter 3 attempts" // CR LF escaped in messages
	ds.Baseline = &Baseline{Ref: "git origin/main", Old: map[int64]bool{2: true}}
	return ds
}

func TestWriteGitHub_Golden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteGitHub(&buf, ciDataset()); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("..", "testdata", "golden", "dataset.github")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("output differs from %s; run go test ./report -run GitHub -update and review the diff:\n%s", golden, buf.String())
	}
	// Every command is one line: messages and properties escaped.
	for _, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		if !strings.HasPrefix(line, "::error ") && !strings.HasPrefix(line, "::warning ") && !strings.HasPrefix(line, "::notice ") {
			t.Errorf("not a workflow command: %q", line)
		}
	}
}

func TestEscapeWorkflowCommand(t *testing.T) {
	for _, tt := range []struct{ in, data, prop string }{
		{"plain", "plain", "plain"},
		{"100%", "100%25", "100%25"},
		{"a\r\nb", "a%0D%0Ab", "a%0D%0Ab"},
		{"x: y, z", "x: y, z", "x%3A y%2C z"},
		{"%0A", "%250A", "%250A"}, // an escape in the input stays text
		{"::error::x", "::error::x", "%3A%3Aerror%3A%3Ax"},
	} {
		if got := escapeData(tt.in); got != tt.data {
			t.Errorf("escapeData(%q) = %q, want %q", tt.in, got, tt.data)
		}
		if got := escapeProperty(tt.in); got != tt.prop {
			t.Errorf("escapeProperty(%q) = %q, want %q", tt.in, got, tt.prop)
		}
	}
}

// TestWriteSARIF_Schema validates SARIF output against the OASIS SARIF
// 2.1.0 JSON schema (vendored from github.com/oasis-tcs/sarif-spec with
// its licence in testdata/sarif), with positions and without.
func TestWriteSARIF_Schema(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "sarif", "sarif-schema-2.1.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	const id = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
	if err := c.AddResource(id, doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile(id)
	if err != nil {
		t.Fatal(err)
	}
	for name, ds := range map[string]*Dataset{"Positions": ciDataset(), "Web": fullDataset(), "Empty": {}} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteSARIF(&buf, ds); err != nil {
				t.Fatal(err)
			}
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if err := schema.Validate(inst); err != nil {
				t.Errorf("SARIF does not validate: %v", err)
			}
		})
	}
	// A schema violation is caught: the test can fail.
	bad, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x"}},"columnKind":"bytes"}]}`))
	if schema.Validate(bad) == nil {
		t.Error("invalid columnKind validated")
	}
}

func TestWriteSARIF_Regions(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSARIF(&buf, ciDataset()); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Runs []struct {
			ColumnKind string `json:"columnKind"`
			Results    []struct {
				RuleID    string `json:"ruleId"`
				Level     string `json:"level"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI, URIBaseID string }
						Region           *struct{ StartLine, StartColumn int }
					}
				}
				Properties map[string]any
			}
		}
	}
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	run := log.Runs[0]
	if run.ColumnKind != "utf16CodeUnits" {
		t.Errorf("columnKind %q", run.ColumnKind)
	}
	r := run.Results[0] // gone, link 2 on docs/index.md, old
	pl := r.Locations[0].PhysicalLocation
	if pl.ArtifactLocation.URI != "docs/index.md" || pl.ArtifactLocation.URIBaseID != "%SRCROOT%" || pl.Region == nil ||
		pl.Region.StartLine != 5 || pl.Region.StartColumn != 6 || r.Level != "warning" || r.Properties["baseline"] != "old" {
		t.Errorf("first result: %+v", r)
	}
	r = run.Results[1] // gone, link 3, introduced
	if u := r.Locations[0].PhysicalLocation.ArtifactLocation.URI; u != "docs/refs%2C%20notes:%20100%25.md" && u != "docs/refs%2C%20notes%3A%20100%25.md" {
		t.Errorf("escaped URI %q", u)
	}
	if r.Level != "error" || r.Properties["baseline"] != "introduced" {
		t.Errorf("second result: %+v", r)
	}
}

func TestWriteJUnit_Positions(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, ciDataset()); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Cases []struct {
				Name string `xml:"name,attr"`
				File string `xml:"file,attr"`
				Line int    `xml:"line,attr"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range doc.Suites[0].Cases {
		if c.Name == "https://ext.example/gone" {
			found = c.File == "docs/index.md" && c.Line == 5
		}
	}
	if !found || !strings.Contains(buf.String(), "docs/refs, notes: 100%.md:7:7") {
		t.Errorf("junit lacks file/line:\n%s", buf.String())
	}
}

func TestWriteMarkdown_Locations(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, ciDataset()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"Compared with git origin/main: **3 introduced by this change**, 1 old (warnings).",
		"| `docs/refs, notes: 100%.md:7:7` | gone | https://ext.example/gone | **introduced** |",
		"| `docs/index.md:5:6` | gone | https://ext.example/gone | old: broken since 2024-05-01 \\(run 2\\), 2 consecutive failed runs |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
}

// TestRepoPaths_Annotations: a page file recorded with an absolute path
// (an audited directory named by its absolute path) is annotated and
// located relative to the root of its git repository (a .git directory,
// or a .git file as in a worktree); outside any repository, relative to
// the working directory when under it, else absolute; a relative path
// stays as it is. GitHub annotations and SARIF agree.
func TestRepoPaths_Annotations(t *testing.T) {
	tmp := t.TempDir()
	repo := filepath.Join(tmp, "repo")
	worktree := filepath.Join(tmp, "wt")
	plain := filepath.Join(tmp, "plain")
	elsewhere := t.TempDir()
	for _, d := range []string{filepath.Join(repo, ".git"), filepath.Join(repo, "docs"), filepath.Join(worktree, "site"), filepath.Join(plain, "site")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(worktree, ".git"), []byte("gitdir: /elsewhere/.git/worktrees/wt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(plain)
	tests := []struct {
		file, want string
	}{
		{filepath.ToSlash(filepath.Join(repo, "docs", "page.html")), "docs/page.html"},
		{filepath.ToSlash(filepath.Join(worktree, "site", "index.html")), "site/index.html"},
		{filepath.ToSlash(filepath.Join(plain, "site", "a.html")), "site/a.html"},
		{filepath.ToSlash(filepath.Join(elsewhere, "b.html")), filepath.ToSlash(filepath.Join(elsewhere, "b.html"))},
		{"docs/rel.md", "docs/rel.md"},
	}
	for _, tt := range tests {
		ds := ciDataset()
		ds.Pages[0].File = tt.file
		ds.Pages[1].File = tt.file
		var gh, sarif bytes.Buffer
		if err := WriteGitHub(&gh, ds); err != nil {
			t.Fatal(err)
		}
		if err := WriteSARIF(&sarif, ds); err != nil {
			t.Fatal(err)
		}
		prop := strings.NewReplacer(":", "%3A", ",", "%2C").Replace(tt.want)
		if !strings.Contains(gh.String(), "::error file="+prop+",line=") {
			t.Errorf("%s: annotations lack file=%s:\n%s", tt.file, prop, gh.String())
		}
		if n := strings.Count(gh.String(), "file="); n != strings.Count(gh.String(), "file="+prop+",") {
			t.Errorf("%s: not every annotation has file=%s:\n%s", tt.file, prop, gh.String())
		}
		var log struct {
			Runs []struct {
				Results []struct {
					Locations []struct {
						PhysicalLocation struct {
							ArtifactLocation struct{ URI, URIBaseID string }
						}
					}
				}
			}
		}
		if err := json.Unmarshal(sarif.Bytes(), &log); err != nil {
			t.Fatal(err)
		}
		wantURI, wantBase := tt.want, "%SRCROOT%"
		if filepath.IsAbs(filepath.FromSlash(tt.want)) {
			wantURI, wantBase = "file://"+tt.want, ""
		}
		al := log.Runs[0].Results[0].Locations[0].PhysicalLocation.ArtifactLocation
		if al.URI != wantURI || al.URIBaseID != wantBase {
			t.Errorf("%s: SARIF location %+v, want %s against %q", tt.file, al, wantURI, wantBase)
		}
	}
}
