package realrun

import (
	"testing"

	"github.com/leasecheck/leasecheck/model"
)

// A pause ended by a crash read on a clock taken before the kernel
// reported the process stopped (the pause's start) ends where it began,
// never before: the checker refuses a record that ends before it starts
// (seen in a verify sweep with every fault, pause and crash striking in
// one step). An end after the start is kept as given.
func TestEndedNeverBeforeStart(t *testing.T) {
	r := &runner{records: []model.FaultRecord{{Kind: "pause", Start: 10_921_676}, {Kind: "pause", Start: 100}}}
	r.ended(0, 10_921_423)
	if got := r.records[0]; !got.HasEnd || got.End != got.Start {
		t.Errorf("a pause ended 253µs before its start: end %d, want its start %d", got.End, got.Start)
	}
	r.ended(1, 5_000)
	if got := r.records[1]; got.End != 5_000 {
		t.Errorf("a pause ended after its start: end %d, want 5000", got.End)
	}
}
