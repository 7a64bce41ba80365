// Package archtest holds the import rules of the module as a test: which
// package may import which, written as data below so that a rule changes
// in one place, with its reason.
package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

const module = "github.com/linkrot/linkrot"

// Layers, lowest first. A package imports packages of lower layers, and of
// its own layer only where the rules below allow it: no edge goes up.
const (
	layerLeaf     = iota // shared by everything, imports no stage
	layerStage           // one step of the pipeline
	layerPipeline        // assembles a run from the stages
	layerFrontEnd        // what users run: the CLI, servers, scale-out
)

var layerNames = []string{"leaf", "stage", "pipeline", "front end"}

// layers maps a package (relative to the module, "" for the root) or a
// folder ending in "/..." to its layer. The longest match wins. A package
// matched by none fails the test: every new package gets a place.
var layers = map[string]int{
	"audit":        layerLeaf, // the domain types
	"urls":         layerLeaf, // the URL model, Link headers, redaction
	"httpx":        layerLeaf, // HTTP plumbing: guarded transport, body caps
	"netguard":     layerLeaf, // the SSRF policy
	"politeness":   layerLeaf, // the per-host budget every fetching stage shares
	"internal/...": layerLeaf,

	"crawler/...":  layerStage,
	"check":        layerStage,
	"drift/...":    layerStage,
	"archives/...": layerStage,
	"store/...":    layerStage,

	"": layerPipeline,

	"actions":        layerFrontEnd,
	"dashboard":      layerFrontEnd,
	"maintain":       layerFrontEnd,
	"report":         layerFrontEnd,
	"robustify":      layerFrontEnd,
	"scaleout":       layerFrontEnd,
	"study":          layerFrontEnd, // reference rot of a reference list: a researcher's front end
	"study/studyrun": layerFrontEnd, // the run side of linkrot study: its links, archives stage and waves
	"cmd/...":        layerFrontEnd,
	// The demo site and archive of linkrot demo, and the tool comparing
	// two binaries' reports, run whole audits.
	"internal/demo":              layerFrontEnd,
	"internal/reportcompare/...": layerFrontEnd,
}

// sameLayer lists the imports allowed between two packages of the same
// layer but different components (a component is a package's first path
// element: crawler/extract belongs to crawler). Leaves may import leaves
// and front ends front ends, acyclically (Go sees to that); among stages,
// a stage imports another only when it feeds on it.
var sameLayer = map[int]func(from, to string) bool{
	layerLeaf:     func(from, to string) bool { return true },
	layerFrontEnd: func(from, to string) bool { return true },
	layerStage: func(from, to string) bool {
		return slices.Contains(stageFeeds[component(from)], component(to))
	},
}

// stageFeeds lists, per stage, the other stages it may import. drift is
// the content-drift measure: the checker (parked-domain comparison) and
// the archives stage (live page against its snapshot) call it on what they
// fetched.
var stageFeeds = map[string][]string{
	"check":    {"drift"},
	"archives": {"drift"},
}

// nothingOfOurs lists packages that import no package of the module.
var nothingOfOurs = []string{"audit", "politeness", "urls", "netguard"}

// onlyImports lists, for some packages, the only packages of the module
// they may import.
var onlyImports = map[string][]string{
	"httpx": {"netguard", "urls"},
}

// exclusive lists imports no single package may hold together: each
// database has its own adapter.
var exclusive = [][2]string{
	{"modernc.org/sqlite", "github.com/jackc/pgx/..."},
}

// wiringOnly names, for a package, the one file allowed to import a set
// of packages: the CLI opens the store adapters in its wiring file only.
var wiringOnly = []struct {
	pkg, file string
	imports   []string
}{
	{"cmd/linkrot", "store.go", []string{"store/sqlite", "store/postgres", "store/engines", "store/sqlstore"}},
}

type pkg struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	CgoFiles   []string
	Imports    []string
	Error      *struct{ Err string }
}

var list = sync.OnceValues(func() ([]pkg, error) {
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Dir,GoFiles,CgoFiles,Imports,Error", module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w: %s", err, stderr.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
})

func packages(t *testing.T) []pkg {
	t.Helper()
	pkgs, err := list()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkgs {
		if p.Error != nil {
			t.Fatalf("%s: %s", p.ImportPath, p.Error.Err)
		}
	}
	return pkgs
}

// rel returns the path of an import inside the module ("" for the root),
// false for another module's.
func rel(importPath string) (string, bool) {
	if importPath == module {
		return "", true
	}
	r, ok := strings.CutPrefix(importPath, module+"/")
	return r, ok
}

func component(rel string) string {
	c, _, _ := strings.Cut(rel, "/")
	return c
}

// matches reports whether rel is pattern, or under it for "dir/...".
func matches(pattern, rel string) bool {
	if dir, ok := strings.CutSuffix(pattern, "/..."); ok {
		return rel == dir || strings.HasPrefix(rel, dir+"/")
	}
	return rel == pattern
}

func layerOf(rel string) (int, bool) {
	best, layer := -1, 0
	for pattern, l := range layers {
		if matches(pattern, rel) && len(pattern) > best {
			best, layer = len(pattern), l
		}
	}
	return layer, best >= 0
}

func name(rel string) string {
	if rel == "" {
		return "(root)"
	}
	return rel
}

// ours returns the module's packages p imports (non-test files).
func ours(p pkg) []string {
	var out []string
	for _, imp := range p.Imports {
		if r, ok := rel(imp); ok {
			out = append(out, r)
		}
	}
	return out
}

func TestLayers(t *testing.T) {
	for _, p := range packages(t) {
		from, _ := rel(p.ImportPath)
		lf, ok := layerOf(from)
		if !ok {
			t.Errorf("%s has no layer: add it to layers", name(from))
			continue
		}
		for _, to := range ours(p) {
			if msg := edgeProblem(from, lf, to); msg != "" {
				t.Error(msg)
			}
		}
	}
}

// edgeProblem says what is wrong with from (of layer lf) importing to, ""
// when nothing is.
func edgeProblem(from string, lf int, to string) string {
	lt, ok := layerOf(to)
	if !ok || component(from) == component(to) && from != "" && to != "" {
		return "" // reported for itself; within one component
	}
	switch {
	case lt > lf:
		return fmt.Sprintf("%s (%s) imports %s (%s): an edge up", name(from), layerNames[lf], name(to), layerNames[lt])
	case lt == lf && !sameLayer[lf](from, to):
		return fmt.Sprintf("%s imports %s: a %s importing a sibling it does not feed", name(from), name(to), layerNames[lf])
	}
	return ""
}

// TestEdgeProblem: the rules catch the edges this layout removed.
func TestEdgeProblem(t *testing.T) {
	tests := []struct {
		from, to string
		bad      bool
	}{
		{"crawler", "check", true},          // a stage importing a sibling it does not feed
		{"archives/memento", "check", true}, // the archive client used the checker's plumbing
		{"politeness", "crawler", true},     // a leaf importing a stage
		{"check", "", true},                 // a stage importing the pipeline
		{"", "scaleout", true},              // the pipeline importing a front end
		{"check", "drift", false},           // check feeds on drift's measure
		{"crawler/baseline", "crawler", false},
		{"httpx", "netguard", false},
		{"cmd/linkrot", "", false},
		{"dashboard", "report", false},
	}
	for _, tt := range tests {
		lf, ok := layerOf(tt.from)
		if !ok {
			t.Fatalf("%s: no layer", tt.from)
		}
		if got := edgeProblem(tt.from, lf, tt.to); (got != "") != tt.bad {
			t.Errorf("%s -> %s: %q, want a problem %v", name(tt.from), name(tt.to), got, tt.bad)
		}
	}
}

func TestImportsNothingOfOurs(t *testing.T) {
	byRel := map[string]pkg{}
	for _, p := range packages(t) {
		r, _ := rel(p.ImportPath)
		byRel[r] = p
	}
	for _, leaf := range nothingOfOurs {
		p, ok := byRel[leaf]
		if !ok {
			t.Errorf("%s: no such package", leaf)
			continue
		}
		if got := ours(p); len(got) > 0 {
			t.Errorf("%s imports %v; it must import nothing of the module", leaf, got)
		}
	}
	for pkgName, allowed := range onlyImports {
		p, ok := byRel[pkgName]
		if !ok {
			t.Errorf("%s: no such package", pkgName)
			continue
		}
		for _, imp := range ours(p) {
			if !slices.Contains(allowed, imp) {
				t.Errorf("%s imports %s; it may import only %v of the module", pkgName, imp, allowed)
			}
		}
	}
}

func importMatches(pattern, imp string) bool {
	if dir, ok := strings.CutSuffix(pattern, "/..."); ok {
		return imp == dir || strings.HasPrefix(imp, dir+"/")
	}
	return imp == pattern
}

func TestExclusiveImports(t *testing.T) {
	for _, p := range packages(t) {
		for _, pair := range exclusive {
			a := slices.ContainsFunc(p.Imports, func(imp string) bool { return importMatches(pair[0], imp) })
			b := slices.ContainsFunc(p.Imports, func(imp string) bool { return importMatches(pair[1], imp) })
			if a && b {
				t.Errorf("%s imports both %s and %s", p.ImportPath, pair[0], pair[1])
			}
		}
	}
}

func TestWiringOnly(t *testing.T) {
	byRel := map[string]pkg{}
	for _, p := range packages(t) {
		r, _ := rel(p.ImportPath)
		byRel[r] = p
	}
	for _, w := range wiringOnly {
		p, ok := byRel[w.pkg]
		if !ok {
			t.Errorf("%s: no such package", w.pkg)
			continue
		}
		fset := token.NewFileSet()
		for _, f := range append(slices.Clone(p.GoFiles), p.CgoFiles...) {
			if f == w.file {
				continue
			}
			file, err := parser.ParseFile(fset, filepath.Join(p.Dir, f), nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, spec := range file.Imports {
				imp, _ := strconv.Unquote(spec.Path.Value)
				if r, ok := rel(imp); ok && slices.Contains(w.imports, r) {
					t.Errorf("%s: %s imports %s; only %s may", w.pkg, f, r, path.Join(w.pkg, w.file))
				}
			}
		}
	}
}

// TestNoCycles: the module's import graph (non-test files) is acyclic.
// The go command refuses a cycle too; this says where one is.
func TestNoCycles(t *testing.T) {
	graph := map[string][]string{}
	for _, p := range packages(t) {
		r, _ := rel(p.ImportPath)
		graph[r] = ours(p)
	}
	const (
		unseen = iota
		open
		done
	)
	state := map[string]int{}
	var stack []string
	var visit func(n string) bool
	visit = func(n string) bool {
		switch state[n] {
		case open:
			i := slices.Index(stack, n)
			t.Errorf("import cycle: %s", strings.Join(append(slices.Clone(stack[i:]), n), " -> "))
			return false
		case done:
			return true
		}
		state[n] = open
		stack = append(stack, n)
		for _, m := range graph[n] {
			if !visit(m) {
				return false
			}
		}
		stack = stack[:len(stack)-1]
		state[n] = done
		return true
	}
	for n := range graph {
		if !visit(n) {
			return
		}
	}
}
