package report

import (
	"bytes"
	"context"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/model"
)

// The targets: `check --html` on a 100k-op history in
// under 10 s and 500 MB, a page of a few MB. Run with
//
//	go test ./internal/report -run '^$' -bench . -benchtime 3x
//
// page-MB is the page's size; peak-heap-MB the most heap the run held at
// once, sampled every millisecond.

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

var benchHistories = []struct {
	name       string
	ops, procs int
	keys       int
	zombie     bool
	seed       uint64
}{
	{name: "100k-ops-1-key", ops: 100_000, procs: 12, keys: 1, zombie: true, seed: 1},
	{name: "100k-ops-100-keys", ops: 100_000, procs: 30, keys: 100, zombie: true, seed: 2},
}

// BenchmarkWriteTimeline is the page alone, given the checked history.
func BenchmarkWriteTimeline(b *testing.B) {
	for _, bh := range benchHistories {
		b.Run(bh.name, func(b *testing.B) {
			h := genHistory(bh.ops, bh.procs, bh.keys, bh.zombie, bh.seed)
			r := mustCheck(context.Background(), h, checker.Options{})
			in := Input{Title: bh.name, History: h, Check: r}
			var size int64
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				w := &countingWriter{}
				if err := WriteTimeline(w, in, Options{}); err != nil {
					b.Fatal(err)
				}
				size = w.n
			}
			b.ReportMetric(float64(size)/1e6, "page-MB")
		})
	}
}

// BenchmarkCheckHTML is the whole `check --html` path: read the file,
// check it, write the page.
func BenchmarkCheckHTML(b *testing.B) {
	for _, bh := range benchHistories {
		b.Run(bh.name, func(b *testing.B) {
			file := encodeHistory(b, genHistory(bh.ops, bh.procs, bh.keys, bh.zombie, bh.seed))
			runtime.GC()
			stop := samplePeakHeap()
			var size int64
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				h, err := model.ReadHistory(bytes.NewReader(file), "bench.jsonl")
				if err != nil {
					b.Fatal(err)
				}
				r := mustCheck(context.Background(), h, checker.Options{})
				if !r.Violated() {
					b.Fatal("the planted violation was not found")
				}
				w := &countingWriter{}
				if err := WriteTimeline(w, Input{History: h, Check: r}, Options{}); err != nil {
					b.Fatal(err)
				}
				size = w.n
			}
			b.StopTimer()
			b.ReportMetric(float64(size)/1e6, "page-MB")
			b.ReportMetric(float64(stop())/1e6, "peak-heap-MB")
		})
	}
}

// samplePeakHeap samples the live heap every millisecond until the
// returned func is called, which returns the highest sample.
func samplePeakHeap() func() uint64 {
	var peak atomic.Uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		defer close(finished)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		return peak.Load()
	}
}
