package sim_test

import (
	"context"
	"testing"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/internal/sim"
)

func benchScenarios(n int, wellBehaved bool) []*scenario.Scenario {
	out := make([]*scenario.Scenario, n)
	for i := range out {
		out[i] = scenario.FromSeed(uint64(i+1), scenario.Options{Kinds: faults.AllKinds, WellBehaved: wellBehaved})
	}
	return out
}

// BenchmarkEvents measures simulated events per second on one core (the
// loop, the network, the clocks, the machines and the history recording).
func BenchmarkEvents(b *testing.B) { benchEvents(b, false) }

// BenchmarkEventsWellBehaved is BenchmarkEvents on the old workload
// (no adversarial clients, fixed protocol parameters): the same
// scenarios as the earlier simulator's BenchmarkEvents, to compare with it.
func BenchmarkEventsWellBehaved(b *testing.B) { benchEvents(b, true) }

func benchEvents(b *testing.B, wellBehaved bool) {
	scs := benchScenarios(256, wellBehaved)
	opts := &sim.Options{NoTrace: true}
	var events, simMs int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := sim.Run(scs[i%len(scs)], opts)
		if err != nil {
			b.Fatal(err)
		}
		events += r.Stats.Events
		simMs += r.Stats.End
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(events)/sec, "events/s")
	b.ReportMetric(float64(simMs)/1000/sec, "sim-s/s")
	b.ReportMetric(float64(b.N)/sec, "scenarios/s")
}

// BenchmarkScenarioChecked measures scenarios generated, run and checked
// (all six history properties) per second on one core.
func BenchmarkScenarioChecked(b *testing.B) {
	var ops int
	for i := 0; i < b.N; i++ {
		sc := scenario.FromSeed(uint64(i%1000+1), scenario.Options{Kinds: faults.AllKinds})
		r, err := sim.Run(sc, nil)
		if err != nil {
			b.Fatal(err)
		}
		res, err := checker.Check(context.Background(), r.History, checker.Options{Workers: 1})
		if err != nil {
			b.Fatal(err)
		}
		if !res.OK() {
			b.Fatalf("seed %d failed", sc.Seed)
		}
		ops += len(r.History.Ops)
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N)/sec, "scenarios/s")
	b.ReportMetric(float64(ops)/sec, "ops/s")
}

// BenchmarkLongRun is one long scenario: simulated seconds per wall second
// when the run is dominated by the steady state (renewals, reads).
func BenchmarkLongRun(b *testing.B) {
	sc := scenario.FromSeed(42, scenario.Options{Kinds: nil})
	sc.ReadEvery = 5
	for i := range sc.Holders {
		for j := range sc.Holders[i].Work {
			sc.Holders[i].Work[j].Work = 200 * sc.TTL
		}
	}
	sc.Horizon = 1_000_000
	var events, simMs int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := sim.Run(sc, &sim.Options{NoTrace: true})
		if err != nil {
			b.Fatal(err)
		}
		events += r.Stats.Events
		simMs += r.Stats.End
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(events)/sec, "events/s")
	b.ReportMetric(float64(simMs)/1000/sec, "sim-s/s")
}

// BenchmarkStateHash measures one state digest (World.StateHash, the
// explorer's visited-set key) of worlds stopped along random walks of the
// enumerable space, the machines' kept digests warm: the part of a digest
// a state pays for whatever its move changed.
func BenchmarkStateHash(b *testing.B) {
	var ws []*sim.World
	for seed := uint64(1); seed <= 64; seed++ {
		w, _ := walk(b, seed, func(n int) int { return n / 2 }, true)
		w.StateHash()
		ws = append(ws, w)
	}
	b.ResetTimer()
	var s uint64
	for i := 0; i < b.N; i++ {
		s += ws[i%len(ws)].StateHash()
	}
	_ = s
}
