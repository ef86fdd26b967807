package campaign

import (
	"context"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/faults"
)

// sweepOnce runs a reference sweep of n seeds with every fault kind (as
// `leasecheck run --seeds n --timeout 0` does) and returns its wall time
// and the peak live heap sampled every 1000 seeds.
func sweepOnce(b *testing.B, n int) (time.Duration, uint64) {
	tg := Reference()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak uint64
	cfg := Config{Target: tg, Scenario: tg.Generator(faults.AllKinds), Kinds: faults.AllKinds, First: 1, Seeds: n,
		Judge: JudgeOptions{Budget: -1},
		OnOutcome: func(seed uint64, _ *Outcome) error {
			if seed%1000 == 0 {
				metrics.Read(sample)
				peak = max(peak, sample[0].Value.Uint64())
			}
			return nil
		}}
	runtime.GC()
	start := time.Now()
	s, err := Run(context.Background(), cfg)
	if err != nil || s.Seeds != n || s.Violated() {
		b.Fatalf("sweep of %d seeds: %v (%d seeds, %d failed)", n, err, s.Seeds, s.Failed)
	}
	return time.Since(start), peak
}

// BenchmarkSweepFlat measures issue 10's scaling targets in one run: the
// per-seed wall time of a sweep of 2·10^4 seeds (the floor) and of 2·10^5
// seeds must be within 10% (ratio <= 1.10), and the peak live heap must not
// grow with the number of seeds. Run with -benchtime 1x (make bench); on a
// machine shared with other work, read ratio with that noise in mind.
func BenchmarkSweepFlat(b *testing.B) {
	for range b.N {
		small, heapSmall := sweepOnce(b, 20_000)
		large, heapLarge := sweepOnce(b, 200_000)
		perSmall := float64(small.Nanoseconds()) / 20_000
		perLarge := float64(large.Nanoseconds()) / 200_000
		b.ReportMetric(perSmall/1e3, "µs/seed@2e4")
		b.ReportMetric(perLarge/1e3, "µs/seed@2e5")
		b.ReportMetric(perLarge/perSmall, "ratio")
		b.ReportMetric(float64(heapSmall)/(1<<20), "heapMB@2e4")
		b.ReportMetric(float64(heapLarge)/(1<<20), "heapMB@2e5")
	}
}
