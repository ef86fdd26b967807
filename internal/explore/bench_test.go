package explore_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/explore"
)

// BenchmarkStates measures distinct states explored per second on one core
// (the aim: 10^6), on the default bounds of leasecheck explore on the
// reference: every fault kind striking at most once, one message off its
// shortest delay, 2 holders.
func BenchmarkStates(b *testing.B) {
	sc := explore.Space(explore.Bounds{Faults: faults.AllKinds, MaxFaults: 1, Deviations: 1})
	var states int64
	for i := 0; i < b.N; i++ {
		r, err := explore.Explore(sc, explore.Options{})
		if err != nil || !r.Complete || r.Counterexample != nil {
			b.Fatalf("%v %+v", err, r)
		}
		states += r.DistinctStates
	}
	b.ReportMetric(float64(states)/b.Elapsed().Seconds(), "states/s")
	b.ReportMetric(float64(states)/float64(b.N), "states/op")
}

// BenchmarkStatesAuto is BenchmarkStates with the command's default
// strategy, auto: the space decided depth-first (the same distinct
// states, TestDepthFirstUnderTheDepthBound).
func BenchmarkStatesAuto(b *testing.B) {
	sc := explore.Space(explore.Bounds{Faults: faults.AllKinds, MaxFaults: 1, Deviations: 1})
	var states int64
	for i := 0; i < b.N; i++ {
		r, err := explore.Explore(sc, explore.Options{Strategy: explore.Auto})
		if err != nil || !r.Complete || r.Counterexample != nil {
			b.Fatalf("%v %+v", err, r)
		}
		states += r.DistinctStates
	}
	b.ReportMetric(float64(states)/b.Elapsed().Seconds(), "states/s")
	b.ReportMetric(float64(states)/float64(b.N), "states/op")
}

// BenchmarkPlan measures the default plan of leasecheck explore
// (DefaultPlan: thirteen spaces, the adversary and the fenced resource
// included) on the reference, on one core: distinct states per second and
// the peak heap per distinct state (the visited set and the frontier),
// breadth-first (the library's default) and with the command's default,
// auto (decided depth-first).
func BenchmarkPlan(b *testing.B) {
	for _, st := range []explore.Strategy{explore.BFS, explore.Auto} {
		b.Run(string(st), func(b *testing.B) {
			var states int64
			var r *explore.Report
			for i := 0; i < b.N; i++ {
				var err error
				r, _, err = explore.ExplorePlan(explore.DefaultPlan(), explore.Options{Strategy: st})
				if err != nil || !r.Complete || r.Counterexample != nil {
					b.Fatalf("%v %+v", err, r)
				}
				states += r.DistinctStates
			}
			b.ReportMetric(float64(states)/b.Elapsed().Seconds(), "states/s")
			b.ReportMetric(float64(r.DistinctStates), "distinct")
			b.ReportMetric(float64(r.PeakHeap)/float64(r.DistinctStates), "B/state")
		})
	}
}

// BenchmarkReductions shows what state hashing and the partial-order
// reduction (sleep sets) each save on a 2-holder, 2-fault scenario (two
// crashes striking anywhere, paths of at most 40 moves): the states reached
// with both, without the reduction, without hashing, without either. Every
// variant explores the whole space and finds no violation.
func BenchmarkReductions(b *testing.B) {
	sc := explore.Space(explore.Bounds{Faults: []faults.Kind{faults.Crash}, MaxFaults: 2})
	for _, v := range []struct {
		name string
		o    explore.Options
	}{
		{"hash+por", explore.Options{}},
		{"hash", explore.Options{NoPOR: true}},
		{"por", explore.Options{NoHash: true}},
		{"none", explore.Options{NoHash: true, NoPOR: true}},
	} {
		b.Run(v.name, func(b *testing.B) {
			v.o.MaxDepth, v.o.MaxStates = 40, 5_000_000
			var r *explore.Report
			for i := 0; i < b.N; i++ {
				var err error
				if r, err = explore.Explore(sc, v.o); err != nil || !r.Complete || r.Counterexample != nil {
					b.Fatalf("%v %+v", err, r)
				}
			}
			b.ReportMetric(float64(r.States), "states")
			b.ReportMetric(float64(r.DistinctStates), "distinct")
			b.ReportMetric(float64(r.DistinctStates)/b.Elapsed().Seconds()*float64(b.N), "states/s")
		})
	}
}

// BenchmarkWorkers measures the default space's distinct states per second
// with 1 worker and with one per core (GOMAXPROCS): the speedup from 1 to
// all cores. The counts are the same for both (TestWorkersIdentical).
func BenchmarkWorkers(b *testing.B) {
	sc := explore.Space(explore.Bounds{Faults: faults.AllKinds, MaxFaults: 1, Deviations: 1})
	for _, w := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			var states int64
			for i := 0; i < b.N; i++ {
				r, err := explore.Explore(sc, explore.Options{Workers: w})
				if err != nil || !r.Complete || r.Counterexample != nil {
					b.Fatalf("%v %+v", err, r)
				}
				states += r.DistinctStates
			}
			b.ReportMetric(float64(states)/b.Elapsed().Seconds(), "states/s")
		})
	}
}

// BenchmarkFrontierMemory measures the live heap per distinct state on the
// 3-holder, 2-fault, fenced-storage, one-adversary space (breadth-first, cut
// at 300,000 distinct states, where the frontier is most of the heap): with
// every waiting state keeping its own world (as before the budget), and
// re-running from the root's world (past half of --max-memory). The live
// heap is read after a collection, once 290,000 states are distinct.
func BenchmarkFrontierMemory(b *testing.B) {
	sc := explore.Space(explore.Bounds{Holders: 3, Faults: faults.AllKinds, MaxFaults: 2, Deviations: 1, Adversary: 1, Semantics: "fenced-storage"})
	for _, v := range []struct {
		name  string
		reuse int
	}{{"own-worlds", -1}, {"from-root", 1 << 30}} {
		b.Run(v.name, func(b *testing.B) {
			var live, at, states uint64
			for i := 0; i < b.N; i++ {
				o := explore.Options{MaxStates: 300_000}
				explore.ReuseDistance(&o, v.reuse)
				o.Progress = func(p explore.Progress) {
					if at == 0 && p.Distinct >= 290_000 {
						runtime.GC()
						var ms runtime.MemStats
						runtime.ReadMemStats(&ms)
						live, at = ms.HeapAlloc, uint64(p.Distinct)
					}
				}
				r, err := explore.Explore(sc, o)
				if err != nil || r.Counterexample != nil || at == 0 {
					b.Fatalf("%v %+v", err, r)
				}
				states += uint64(r.DistinctStates)
			}
			b.ReportMetric(float64(live)/float64(at), "B/state")
			b.ReportMetric(float64(states)/b.Elapsed().Seconds(), "states/s")
		})
	}
}

// BenchmarkReductions3Holder shows what each reduction saves on the
// 3-holder, 2-fault, fenced-storage, one-adversary space, with the holders
// started together (Stagger -1, so h2 and h3 are interchangeable and the
// symmetry reduction applies), explored completely to depth 5: the
// distinct states with sleep sets (the default), without them, and with
// holder symmetry (which turns sleep sets off where it applies:
// symmetry.go). Every variant must find no violation.
func BenchmarkReductions3Holder(b *testing.B) {
	sc := explore.Space(explore.Bounds{Holders: 3, Faults: faults.AllKinds, MaxFaults: 2, Deviations: 1, Adversary: 1,
		Semantics: "fenced-storage", Stagger: -1})
	for _, v := range []struct {
		name string
		o    explore.Options
	}{
		{"sleep-sets", explore.Options{}},
		{"no-por", explore.Options{NoPOR: true}},
		{"symmetry", explore.Options{Symmetry: true}},
	} {
		b.Run(v.name, func(b *testing.B) {
			v.o.MaxDepth = 5
			var r *explore.Report
			for i := 0; i < b.N; i++ {
				var err error
				if r, err = explore.Explore(sc, v.o); err != nil || r.Counterexample != nil {
					b.Fatalf("%v %+v", err, r)
				}
			}
			b.ReportMetric(float64(r.DistinctStates), "distinct")
			b.ReportMetric(float64(r.DistinctStates)/b.Elapsed().Seconds()*float64(b.N), "states/s")
		})
	}
}
