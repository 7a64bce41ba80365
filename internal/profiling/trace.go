package profiling

import (
	"fmt"
	"os"
	"runtime/trace"
)

// StartTrace writes an execution trace of the process to path until stop
// (`go tool trace`; `go tool trace -pprof=sync|sched|net` turns it into
// profiles of where goroutines waited). It is what showed that the crawl
// of a documentation tree waited on the run's single writer, which
// a CPU profile cannot show. path "" writes nothing.
func StartTrace(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	if err := trace.Start(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("trace: %w", err)
	}
	return func() error {
		trace.Stop()
		if err := f.Close(); err != nil {
			return fmt.Errorf("trace: %w", err)
		}
		return nil
	}, nil
}
