//go:build unix

package campaign

import (
	"context"
	"runtime"
	"runtime/metrics"
	"syscall"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/faults"
)

// cpuTime is the process's user and system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// sweepOnce runs a reference sweep of n seeds with every fault kind (as
// `leasecheck run --seeds n --timeout 0` does) and returns its wall time,
// its CPU time and the peak live heap sampled every 1000 seeds.
func sweepOnce(b *testing.B, n int) (wall, cpu time.Duration, heap uint64) {
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
	start, startCPU := time.Now(), cpuTime()
	s, err := Run(context.Background(), cfg)
	if err != nil || s.Seeds != n || s.Violated() {
		b.Fatalf("sweep of %d seeds: %v (%d seeds, %d failed)", n, err, s.Seeds, s.Failed)
	}
	return time.Since(start), cpuTime() - startCPU, peak
}

// BenchmarkSweepFlat measures the sweep's scaling targets in one run: the
// per-seed cost of a sweep of 2·10^4 seeds (the floor) and of 2·10^5 seeds
// must be within 10% (ratio <= 1.10), and the peak live heap must not grow
// with the number of seeds. The ratio is of CPU time per seed, which other
// processes on a shared machine disturb far less than wall time (both are
// reported). Run with -benchtime 1x (make bench).
func BenchmarkSweepFlat(b *testing.B) {
	for range b.N {
		wallS, cpuS, heapS := sweepOnce(b, 20_000)
		wallL, cpuL, heapL := sweepOnce(b, 200_000)
		per := func(d time.Duration, n int) float64 { return float64(d.Nanoseconds()) / float64(n) / 1e3 }
		b.ReportMetric(per(cpuS, 20_000), "cpu-µs/seed@2e4")
		b.ReportMetric(per(cpuL, 200_000), "cpu-µs/seed@2e5")
		b.ReportMetric(per(cpuL, 200_000)/per(cpuS, 20_000), "ratio")
		b.ReportMetric(per(wallS, 20_000), "wall-µs/seed@2e4")
		b.ReportMetric(per(wallL, 200_000), "wall-µs/seed@2e5")
		b.ReportMetric(float64(heapS)/(1<<20), "heapMB@2e4")
		b.ReportMetric(float64(heapL)/(1<<20), "heapMB@2e5")
	}
}
