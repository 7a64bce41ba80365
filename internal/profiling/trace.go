package profiling

import "runtime/trace"

// StartTrace writes an execution trace of the process to path until stop
// (`go tool trace`; `go tool trace -pprof=sync|sched|net` turns it into
// profiles of where goroutines waited): it shows goroutines waiting on one
// another, such as the crawl on the run's single writer, which a CPU
// profile cannot show. path "" writes nothing.
func StartTrace(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	return startToFile(path, "trace", trace.Start, trace.Stop)
}
