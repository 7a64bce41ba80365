// Command archstats prints the module's shape, package by package: lines of
// code and of tests, exported names, and the arrows (imports) between the
// module's own packages. Run it from the module root:
//
//	go run ./internal/archstats
//
// It reads the source with go/parser, so it works on any checkout (the
// consolidation's before/after figures in docs/architecture.md were taken
// with it on both commits).
package main

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

type pkgStats struct {
	code, tests, exported int
	imports               map[string]bool
}

func main() {
	mod, err := modulePath("go.mod")
	if err != nil {
		fmt.Fprintln(os.Stderr, "archstats:", err)
		os.Exit(2)
	}
	pkgs := map[string]*pkgStats{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		p := pkgs[dir]
		if p == nil {
			p = &pkgStats{imports: map[string]bool{}}
			pkgs[dir] = p
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		lines := strings.Count(string(src), "\n")
		if strings.HasSuffix(path, "_test.go") {
			p.tests += lines
			return nil
		}
		p.code += lines
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, im := range f.Imports {
			ip, _ := strconv.Unquote(im.Path.Value)
			if ip == mod || strings.HasPrefix(ip, mod+"/") {
				rel := strings.TrimPrefix(strings.TrimPrefix(ip, mod), "/")
				if rel == "" {
					rel = "."
				}
				p.imports[rel] = true
			}
		}
		p.exported += exportedNames(f)
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "archstats:", err)
		os.Exit(2)
	}
	names := make([]string, 0, len(pkgs))
	for n := range pkgs {
		names = append(names, n)
	}
	sort.Strings(names)
	var code, tests, exported, arrows int
	fmt.Printf("%-32s %7s %7s %8s  %s\n", "package", "code", "tests", "exported", "imports (of this module)")
	for _, n := range names {
		p := pkgs[n]
		imps := make([]string, 0, len(p.imports))
		for i := range p.imports {
			imps = append(imps, i)
		}
		sort.Strings(imps)
		fmt.Printf("%-32s %7d %7d %8d  %s\n", n, p.code, p.tests, p.exported, strings.Join(imps, " "))
		code += p.code
		tests += p.tests
		exported += p.exported
		arrows += len(imps)
	}
	fmt.Printf("%-32s %7d %7d %8d  %d arrows between %d packages\n", "total", code, tests, exported, arrows, len(names))
}

// exportedNames counts a file's exported top-level names: functions, types,
// variables, constants, and methods of exported types.
func exportedNames(f *ast.File) int {
	n := 0
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv != nil && len(d.Recv.List) == 1 && !ast.IsExported(recvType(d.Recv.List[0].Type)) {
				continue
			}
			n++
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						n++
					}
				case *ast.ValueSpec:
					for _, id := range s.Names {
						if id.IsExported() {
							n++
						}
					}
				}
			}
		}
	}
	return n
}

func recvType(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvType(t.X)
	case *ast.IndexExpr:
		return recvType(t.X)
	case *ast.IndexListExpr:
		return recvType(t.X)
	case *ast.Ident:
		return t.Name
	}
	return ""
}

func modulePath(gomod string) (string, error) {
	f, err := os.Open(gomod)
	if err != nil {
		return "", fmt.Errorf("run from the module root: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.TrimSpace(m), nil
		}
	}
	return "", fmt.Errorf("%s: no module line", gomod)
}
