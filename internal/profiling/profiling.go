// Package profiling writes the CPU profile of a whole process and a heap
// profile near its peak, for `go tool pprof`: what the linkrot command does
// with LINKROT_CPUPROFILE and LINKROT_HEAPPROFILE, and the benchmarks with
// their own variables.
package profiling

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"time"
)

// Start begins the profiles asked for (an empty path: that profile is not
// written) and returns the function that ends them and reports what went
// wrong writing them. The CPU profile covers everything until stop. The
// heap profile is written again each time the live heap, sampled every 100
// ms, passes its peak by a tenth, so that the file ends up holding the
// profile nearest the process's peak: what made the memory grow. peakMB
// (when not nil) receives that peak at stop.
func Start(cpuPath, heapPath string, peakMB *uint64) (stop func() error, err error) {
	var stops []func() error
	if cpuPath != "" {
		stop, err := startToFile(cpuPath, "cpu profile", pprof.StartCPUProfile, pprof.StopCPUProfile)
		if err != nil {
			return nil, err
		}
		stops = append(stops, stop)
	}
	if heapPath != "" {
		done, finished := make(chan struct{}), make(chan struct{})
		var (
			peak     uint64
			writeErr error
		)
		go func() {
			defer close(finished)
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-tick.C:
				}
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				if ms.HeapAlloc < peak+peak/10 {
					continue
				}
				peak = ms.HeapAlloc
				if writeErr = writeHeap(heapPath); writeErr != nil {
					return
				}
			}
		}()
		stops = append(stops, func() error {
			close(done)
			<-finished
			if peakMB != nil {
				*peakMB = peak >> 20
			}
			return writeErr
		})
	}
	return func() error {
		var errs []error
		for _, s := range stops {
			errs = append(errs, s())
		}
		return errors.Join(errs...)
	}, nil
}

// writeHeap writes the heap profile of the live objects (after a
// collection) to path.
func writeHeap(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("heap profile: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	return nil
}

// startToFile creates path, starts writing to it (start) and returns the
// function that stops (stop) and closes it; what names it in errors.
func startToFile(path, what string, start func(io.Writer) error, stop func()) (func() error, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := start(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return func() error {
		stop()
		if err := f.Close(); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	}, nil
}
