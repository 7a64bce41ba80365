package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/internal/demo"
)

// runDemo serves the built-in demo site and archive (testdata/demo) on
// loopback, audits the site twice through the same code as linkrot audit
// (the site as it was, then as it is, so the report has a history), and
// writes the report.
func runDemo(ctx context.Context, e *env, args []string) error {
	flags := newFlagSet(e, "demo", "[--out DIR]")
	out := flags.String("out", "linkrot-demo", "`directory` for the demo's database (linkrot.db) and report (index.html)")
	pos, err := parseInterleaved(flags, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%v", err)
	}
	if len(pos) != 0 {
		return usagef("demo takes no arguments")
	}
	dbPath, err := demo.FreshDatabase(*out)
	if err != nil {
		return err
	}
	files, err := fs.Sub(linkrot.DemoFiles, "testdata/demo")
	if err != nil {
		return fmt.Errorf("demo files: %w", err)
	}
	d, err := demo.Start(files)
	if err != nil {
		return err
	}
	defer d.Close()
	fmt.Fprintf(e.stdout, "Demo site:    %s\nDemo archive: %s (both on loopback, stopped when the demo ends)\n", d.SiteURL()+"/", d.Archive.URL+"/")

	base := []string{d.SiteURL() + "/", "--db", dbPath, "--fail-on", "none", "--timeout", "5s", "--retries", "0", "--quiet"}
	if auditHasFlag(ctx, "archive") {
		base = append(base, "--archive", d.Archive.Flag("demo", "6000/min"))
		if auditHasFlag(ctx, "fetch-rate") {
			// Everything is on loopback: no need for the politeness
			// budget of real sites.
			base = append(base, "--fetch-rate", "6000/min")
		}
	} else {
		fmt.Fprintln(e.stdout, "This build of linkrot has no archive stage: the demo archive is served but not consulted.")
	}
	fmt.Fprintln(e.stdout, "\n== Run 1: the site as it was")
	d.SetPhase(demo.Then)
	if err := runAudit(ctx, e, append(append([]string{}, base...), "--no-report")); err != nil {
		return fmt.Errorf("demo run 1: %w", err)
	}
	fmt.Fprintln(e.stdout, "\n== Run 2: the site today")
	d.SetPhase(demo.Now)
	if err := runAudit(ctx, e, append(append([]string{}, base...), "--report", *out)); err != nil {
		return fmt.Errorf("demo run 2: %w", err)
	}
	abs, err := filepath.Abs(filepath.Join(*out, "index.html"))
	if err != nil {
		abs = filepath.Join(*out, "index.html")
	}
	fmt.Fprintf(e.stdout, "\nOpen the report in a browser: file://%s\n", filepath.ToSlash(abs))
	fmt.Fprintf(e.stdout, "Rebuild it, or get JSON, CSV, JUnit, Markdown or SARIF: linkrot report --db %s [--format json]\n", dbPath)
	return nil
}

// auditHasFlag reports whether linkrot audit accepts --name (a string
// flag): it parses "--name=x -h" without running anything.
func auditHasFlag(ctx context.Context, name string) bool {
	probe := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}
	return errors.Is(runAudit(ctx, probe, []string{"--" + name + "=x", "-h"}), flag.ErrHelp)
}
