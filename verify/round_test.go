package verify_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/verify"
)

func openMem(t *testing.T, name string) *verify.Opened {
	t.Helper()
	o, err := memBackend(name).Open(context.Background(), name, "lc-test")
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// RunRound from a test: the reference holds every property under every
// fault that applies, with every property judged and the faults in the
// history; the plain write under a pause is a linearizability violation
// naming its lines. The same round as verify's: the same seed draws the
// same workload.
func TestRunRound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, err := verify.RunRound(ctx, openMem(t, "mem"), verify.RoundOptions{Seed: 3, Duration: 3 * time.Second, TTL: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.History.Ops) < 50 || len(r.History.Faults) == 0 {
		t.Errorf("the reference's round: %d ops, %d faults recorded", len(r.History.Ops), len(r.History.Faults))
	}
	if !r.Check.OK() || len(r.Check.Properties) != len(checker.Properties()) {
		t.Errorf("the reference's round: OK %v, %d properties judged: %+v", r.Check.OK(), len(r.Check.Properties), r.Check.Violations)
	}
	for _, p := range r.Check.Properties {
		if p.Verdict != checker.Holds {
			t.Errorf("%s: %v on the reference", p.Name, p.Verdict)
		}
	}

	r, err = verify.RunRound(ctx, openMem(t, "mem-unfenced"), verify.RoundOptions{Duration: 3 * time.Second, TTL: 300 * time.Millisecond, Faults: []faults.Kind{faults.Pause}})
	if err != nil {
		t.Fatal(err)
	}
	if v := r.Check.Verdict("linearizable"); v != checker.Violated {
		t.Fatalf("a plain write under a pause: linearizable %v, want violated", v)
	}
	if len(r.Check.Violations) == 0 || len(r.Check.Violations[0].Lines) == 0 {
		t.Errorf("the violation names no history lines: %+v", r.Check.Violations)
	}
	if len(r.History.Faults) != 1 || r.History.Faults[0].Kind != string(faults.Pause) {
		t.Errorf("fault records %+v, want the one pause", r.History.Faults)
	}
}

// What RunRound refuses or cannot finish: an undeclared Info, a fault the
// backend cannot take, and a backend that stops answering (an error, with
// the partial history).
func TestRunRoundErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	if _, err := verify.RunRound(ctx, openMem(t, "mem-undeclared"), verify.RoundOptions{}); err == nil {
		t.Error("an Info without Writes was run")
	}
	if _, err := verify.RunRound(ctx, openMem(t, "mem"), verify.RoundOptions{Faults: []faults.Kind{faults.Partition}}); err == nil || !strings.Contains(err.Error(), "not applicable") {
		t.Errorf("a partition without a proxy: %v", err)
	}
	r, err := verify.RunRound(ctx, openMem(t, "mem-dies"), verify.RoundOptions{Duration: time.Minute, TTL: 300 * time.Millisecond, Faults: []faults.Kind{}})
	if err == nil || !strings.Contains(err.Error(), "stopped answering") {
		t.Fatalf("a backend that dies: %v", err)
	}
	if r == nil || r.History == nil || len(r.History.Ops) < 100 || r.Check != nil {
		t.Errorf("no partial history with the error: %+v", r)
	}
}
