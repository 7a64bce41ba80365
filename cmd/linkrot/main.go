// Command linkrot audits a web site for link rot and content drift and
// records every finding in SQLite. See README.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopProfile := startProfile(os.Getenv("LINKROT_CPUPROFILE"), os.Stderr)
	code := Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stopProfile()
	stop()
	os.Exit(code)
}

// startProfile writes a CPU profile of the whole command to path (the
// LINKROT_CPUPROFILE variable; empty: none), for `go tool pprof`. The
// returned function ends it. A file that cannot be written is one line on
// stderr, and the command runs anyway.
func startProfile(path string, stderr *os.File) func() {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(stderr, "linkrot: cpu profile: %v\n", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(stderr, "linkrot: cpu profile: %v\n", err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(stderr, "linkrot: cpu profile: %v\n", err)
		}
	}
}
