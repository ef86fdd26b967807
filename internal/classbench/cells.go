package classbench

import (
	"github.com/leasecheck/leasecheck/internal/classgen"
	"github.com/leasecheck/leasecheck/model"
)

// IssueRows are the rows the class was first measured by (the "issue"
// cells, docs/benchmarks.md), regenerated: one key or
// ten, 8 processes, 5-10% unanswered, exact and interval, and the
// simulator-like history of 183 ops with TTL 33 and clock uncertainty 174
// (about 5 TTLs); then the wrong interval history (one write's outcome
// flipped) that must be reported as linearizable violated.
func IssueRows() []classgen.Params {
	return []classgen.Params{
		{Ops: 10_000, Keys: 1, Procs: 8, Unanswered: 0.05, Seed: 1},
		{Ops: 50_000, Keys: 10, Procs: 8, Unanswered: 0.05, Seed: 1},
		{Ops: 10_000, Keys: 1, Procs: 8, Unanswered: 0.05, Interval: true, Seed: 1},
		{Ops: 5_000, Keys: 1, Procs: 8, Unanswered: 0.05, Interval: true, Seed: 1},
		{Ops: 3_000, Keys: 1, Procs: 8, Unanswered: 0.10, Interval: true, Seed: 1},
		{Ops: 2_000, Keys: 1, Procs: 8, Unanswered: 0.05, Interval: true, Seed: 1},
		{Ops: 183, Keys: 1, Procs: 3, Unanswered: 0.05, Interval: true, TTL: 33, Uncertainty: 174, Seed: 1},
		{Ops: 10_000, Keys: 1, Procs: 8, Unanswered: 0.05, Interval: true, Uncertainty: 1000, Seed: 1},
		{Ops: 10_000, Keys: 1, Procs: 8, Unanswered: 0.05, Interval: true, Plant: classgen.PlantLinearizable, Seed: 1},
	}
}

// Matrix is the benchmark matrix: every axis of the class at a few
// values, each correct and with each plant, plus the issue's rows and the
// long cells (10^5 and 10^6 ops).
func Matrix() []classgen.Params {
	cells := IssueRows()
	seed := uint64(100)
	for _, interval := range []bool{false, true} {
		for _, u := range []int64{0, 100, 1000} { // 0, 1 and 10 TTLs
			for _, shape := range []struct {
				keys, procs int
				unans       float64
				noRetry     bool
				sem         model.Semantics
				fenceLess   bool
			}{
				{1, 2, 0.02, false, model.Seed, false},
				{1, 8, 0.05, false, model.Seed, false},
				{10, 8, 0.10, true, model.FencedStorage, false},
				{100, 16, 0.20, false, model.Seed, true},
			} {
				for _, plant := range classgen.Plants() {
					seed++
					cells = append(cells, classgen.Params{Ops: 5000, Keys: shape.keys, Procs: shape.procs, Unanswered: shape.unans,
						Interval: interval, Uncertainty: u, NoRetry: shape.noRetry, Semantics: shape.sem, FenceLess: shape.fenceLess,
						Plant: plant, Seed: seed})
				}
			}
		}
	}
	for _, ops := range []int{100_000, 1_000_000} {
		cells = append(cells,
			classgen.Params{Ops: ops, Keys: 100, Procs: 16, Unanswered: 0.05, Seed: 7},
			classgen.Params{Ops: ops, Keys: 100, Procs: 16, Unanswered: 0.05, Plant: classgen.PlantLinearizable, Seed: 7},
			classgen.Params{Ops: ops, Keys: 10, Procs: 8, Unanswered: 0.05, Interval: true, Seed: 7},
		)
	}
	return cells
}

// Sample is the fixed, seeded sample of the matrix that the regression
// check runs in CI: a few seconds in all, a cell of each kind of shape
// the previous releases decide (correct and wrong, exact and interval,
// one key and many, uncertainty up to 10 TTLs).
func Sample() []classgen.Params {
	return []classgen.Params{
		{Ops: 2_000, Keys: 1, Procs: 8, Unanswered: 0.05, Seed: 1},
		{Ops: 5_000, Keys: 10, Procs: 8, Unanswered: 0.05, Seed: 1},
		{Ops: 2_000, Keys: 1, Procs: 8, Unanswered: 0.05, Interval: true, Seed: 1},
		{Ops: 183, Keys: 1, Procs: 3, Unanswered: 0.05, Interval: true, TTL: 33, Uncertainty: 174, Seed: 1},
		{Ops: 2_000, Keys: 3, Procs: 4, Unanswered: 0.10, Interval: true, Uncertainty: 1000, Seed: 2},
		{Ops: 2_000, Keys: 1, Procs: 8, Unanswered: 0.05, Interval: true, Plant: classgen.PlantLinearizable, Seed: 1},
		{Ops: 2_000, Keys: 1, Procs: 8, Unanswered: 0.05, Plant: classgen.PlantFenceMonotonic, Seed: 1},
		{Ops: 2_000, Keys: 1, Procs: 8, Unanswered: 0.05, Semantics: model.FencedStorage, Plant: classgen.PlantSingleWriter, Seed: 1},
		{Ops: 2_000, Keys: 1, Procs: 8, Unanswered: 0.05, FenceLess: true, Plant: classgen.PlantStopOnRenew, Seed: 1},
	}
}
