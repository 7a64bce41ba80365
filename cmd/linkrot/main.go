// Command linkrot audits a web site for link rot and content drift and
// records every finding in SQLite. See README.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/linkrot/linkrot/internal/gctune"
	"github.com/linkrot/linkrot/internal/profiling"
)

// defaultMemoryLimit is the soft limit on the Go heap of every command
// (runtime/debug.SetMemoryLimit) unless GOMEMLIMIT is set.
const defaultMemoryLimit = 300 << 20

// heapFloor is the size the Go heap may reach before it is collected
// while what is live is small (internal/gctune), unless GOGC is set.
const heapFloor = 64 << 20

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// Profiles of the whole command for `go tool pprof` (docs/performance.md): LINKROT_CPUPROFILE, LINKROT_HEAPPROFILE near the
	// peak of the live heap, and LINKROT_TRACE (an execution trace). A profile that cannot be written is one line
	// on stderr; the command runs anyway.
	stopProfiles, err := profiling.Start(os.Getenv("LINKROT_CPUPROFILE"), os.Getenv("LINKROT_HEAPPROFILE"), nil)
	if err != nil {
		fmt.Fprintf(os.Stderr, "linkrot: %v\n", err)
		stopProfiles = func() error { return nil }
	}
	stopTrace, err := profiling.StartTrace(os.Getenv("LINKROT_TRACE"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "linkrot: %v\n", err)
		stopTrace = func() error { return nil }
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// A soft limit on the Go heap: near it the collector works harder
		// instead of letting the heap double (GOGC's default), so that a
		// report of a million links stays under 400 MB of RSS (docs/performance.md). A live heap beyond it still grows: it is not a
		// cap. GOMEMLIMIT overrides it.
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
	if os.Getenv("GOGC") == "" {
		// An audit allocates fast and keeps little (a page's tree, its
		// links and response live until the writer has them): at Go's
		// default the collector ran every few tens of megabytes and took
		// about a sixth of the CPU of a 5,000-page audit. The heap may
		// now reach heapFloor first; bigger live heaps are collected as
		// by default (docs/performance.md). GOGC overrides it.
		gctune.Start(heapFloor, 100) // for the life of the command
	}
	code := Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	for _, stop := range []func() error{stopTrace, stopProfiles} {
		if err := stop(); err != nil {
			fmt.Fprintf(os.Stderr, "linkrot: %v\n", err)
		}
	}
	stop()
	os.Exit(code)
}
