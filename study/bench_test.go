package study

import (
	"runtime"
	"testing"
	"time"
)

// BenchmarkWriteDir100k writes the outputs of 100,000 references (about
// 40,000 URLs, two waves) and reports the heap in use after the write: it
// stays near the summary and the rows index.html shows, not the rows.
func BenchmarkWriteDir100k(b *testing.B) {
	w := newWorld(40000, 1)
	for len(w.refs) < 100000 {
		w.refs = append(w.refs, w.refs[:min(len(w.refs), 100000-len(w.refs))]...)
	}
	in := &Input{Name: "bench.csv", Format: FormatCSV, References: w.refs}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		if err := WriteDir(dir, &Study{Input: in, Waves: w.waves, Params: Params{Created: time.Unix(0, 0)}}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	b.ReportMetric(float64(m.HeapInuse)/(1<<20), "heap-MB")
	b.ReportMetric(float64(len(w.refs)), "refs")
}
