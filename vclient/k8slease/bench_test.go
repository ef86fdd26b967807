package k8slease

import (
	"context"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/internal/k8ssweep"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/vclient"
)

// election is a 3-candidate election at client-go's default timing
// (LeaseDuration 15 s, RenewDeadline 10 s, RetryPeriod 2 s), no fault,
// the leader writing once a second, for horizon ms of virtual time.
func election(seed uint64, horizon int64) *scenario.Scenario {
	sc := &scenario.Scenario{Version: scenario.Version, Seed: seed, Semantics: "seed", Key: "lease", TTL: 15000, Horizon: horizon,
		Network: scenario.Network{MaxDelay: 2}, Implementation: k8ssweep.Unfenced}
	for _, n := range []string{"h1", "h2", "h3"} {
		sc.Holders = append(sc.Holders, scenario.Process{Name: n, Timeout: 10000, RenewEvery: 2000, RetryMax: k8ssweep.RetryBound(2000, 2),
			Work: []holder.Item{{Work: 1000, Writes: 1}}})
	}
	return sc
}

// BenchmarkElection measures simulated seconds per wall second of a
// 3-candidate election at client-go's default timing, recorded (the
// judging is not timed). A synctest bubble needs a *testing.T: each run is
// a test of its own (testing.RunTests), inside the benchmark.
func BenchmarkElection(b *testing.B) {
	const horizon = 600_000 // ten minutes of leases per run
	tg, err := target(nil, k8ssweep.Unfenced)
	if err != nil {
		b.Fatal(err)
	}
	ops := 0
	b.ResetTimer()
	began := time.Now()
	for i := range b.N {
		sc := election(uint64(i+1), horizon)
		ok := testing.RunTests(func(string, string) (bool, error) { return true, nil }, []testing.InternalTest{{Name: "election", F: func(t *testing.T) {
			run := &vclient.Target{T: t, Name: tg.Name, Client: tg.Client, Options: tg.Options}
			e, err := run.Run(context.Background(), sc)
			if err != nil {
				t.Fatal(err)
			}
			ops += len(e.History.Ops)
		}}})
		if !ok {
			b.Fatal("the run failed")
		}
	}
	wall := time.Since(began).Seconds()
	b.ReportMetric(float64(b.N)*horizon/1000/wall, "sim-s/s")
	b.ReportMetric(float64(ops)/float64(b.N), "ops/run")
}

// BenchmarkElectionJudged is BenchmarkElection with every run judged as a
// sweep judges it (campaign.Judge: the checker on the clients' view and on
// the stores' log, and the run properties), timed with the run.
func BenchmarkElectionJudged(b *testing.B) {
	const horizon = 600_000
	ops := 0
	b.ResetTimer()
	began := time.Now()
	for i := range b.N {
		sc := election(uint64(i+1), horizon)
		ok := testing.RunTests(func(string, string) (bool, error) { return true, nil }, []testing.InternalTest{{Name: "election", F: func(t *testing.T) {
			tg, err := target(t, k8ssweep.Unfenced)
			if err != nil {
				t.Fatal(err)
			}
			o, err := campaign.Judge(context.Background(), tg, sc, campaign.JudgeOptions{Budget: -1})
			if err != nil {
				t.Fatal(err)
			}
			if o.Violated() || o.Undecided() {
				t.Fatalf("seed %d: %v", sc.Seed, o.Failed())
			}
			ops += len(o.History.Ops)
		}}})
		if !ok {
			b.Fatal("the run failed")
		}
	}
	wall := time.Since(began).Seconds()
	b.ReportMetric(float64(b.N)*horizon/1000/wall, "sim-s/s")
	b.ReportMetric(float64(ops)/float64(b.N), "ops/run")
}
