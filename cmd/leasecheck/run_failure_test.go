package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/memstore"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/scenario"
	"github.com/leasecheck/leasecheck/sim"
)

// TestSaveFailure: a failing seed is saved as scenario, history, trace and
// HTML; the saved history reads back and fails the same way; the summary
// counts it.
func TestSaveFailure(t *testing.T) {
	// The greedy-grant planted bug, to exercise the failure path.
	opts := &sim.Options{NewCoordinator: func() machine.Coordinator {
		return machine.ClockedCoordinator(memstore.WithBugs(memstore.BugGreedyGrant))
	}}
	var o *seedOutcome
	for seed := uint64(1); seed < 50 && o == nil; seed++ {
		sc := scenario.FromSeed(seed, scenario.Options{})
		r, err := sim.Run(sc, opts)
		if err != nil {
			t.Fatal(err)
		}
		res, err := checker.Check(context.Background(), r.History, checker.Options{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		if res.Violated() {
			o = &seedOutcome{seed: seed, sim: r, check: res}
		}
	}
	if o == nil {
		t.Fatal("the greedy coordinator never failed")
	}
	dir := t.TempDir()
	if err := saveFailure(dir, o); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(dir, "seed-"+strconv.FormatUint(o.seed, 10))
	for _, ext := range []string{".scenario.json", ".history.jsonl", ".trace.txt", ".html"} {
		if st, err := os.Stat(base + ext); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", ext, err)
		}
	}
	h, err := model.ReadHistoryFile(base + ".history.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if res, err := checker.Check(context.Background(), h, checker.Options{}); err != nil || !res.Violated() {
		t.Errorf("the saved history does not fail (%v)", err)
	}
	if _, err := scenario.Load(base + ".scenario.json"); err != nil {
		t.Error(err)
	}
	s := newSummary(faults.AllKinds)
	var ss sampleSet
	s.add(o, &ss)
	if s.violations() == 0 || len(s.FailedSeeds) != 1 || s.FailedSeeds[0] != o.seed {
		t.Errorf("summary: %+v", s)
	}
}

func TestPercentiles(t *testing.T) {
	xs := make([]int64, 100)
	for i := range xs {
		xs[i] = int64(100 - i)
	}
	if got := percentiles(xs); got.P50 != 50 || got.P99 != 99 || got.Max != 100 || got.N != 100 {
		t.Errorf("percentiles(1..100) = %+v", got)
	}
	if got := percentiles(nil); got != (latency{}) {
		t.Errorf("percentiles(nil) = %+v", got)
	}
}
