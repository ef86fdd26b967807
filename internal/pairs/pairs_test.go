package pairs

import (
	"bytes"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/model"
)

func TestPlanKinds(t *testing.T) {
	if len(planKinds) != numPlanKinds {
		t.Fatalf("numPlanKinds = %d, planKinds has %d", numPlanKinds, len(planKinds))
	}
	if _, ok := FaultOf(faults.ClockOffset); ok {
		t.Fatal("clock-offset is a factor")
	}
	if f, ok := FaultOf(faults.CoordinatorCrash); !ok || f.String() != "coordinator-crash" {
		t.Fatalf("FaultOf(coordinator-crash) = %v, %v", f, ok)
	}
}

// Judge counts a pair reached only when the set has it, and the table
// lists the unreached first.
func TestJudge(t *testing.T) {
	var s Set
	empty := Judge(s, "nothing")
	if empty.Reached != 0 || len(empty.Unreached) != empty.Required || empty.Complete() {
		t.Fatalf("empty set: %s", empty.Summary())
	}
	crash, _ := FaultOf(faults.CoordinatorCrash)
	s.Step(crash, StepOf(model.Read, true))
	s.Faults(Late, crash) // either order
	s.Workload(Lost, Retry)
	r := Judge(s, "three pairs")
	if r.Reached != 3 || len(r.Unreached) != r.Required-3 {
		t.Fatalf("three pairs: %s", r.Summary())
	}
	var b bytes.Buffer
	r.Print(&b)
	out := b.String()
	if !strings.Contains(out, "never reached (") || strings.Contains(out, "coordinator-crash × read applied\n") {
		t.Fatalf("table:\n%s", out)
	}
	var all Set
	for _, p := range Required() {
		all.set(p.index)
	}
	if full := Judge(all, "all"); !full.Complete() || full.Reached != full.Required {
		t.Fatalf("every pair: %s", full.Summary())
	}
}

// A pair the model leaves out (a pause with an answer in flight, a
// holder's fault against a read) does not count.
func TestOutsideTheModel(t *testing.T) {
	var s Set
	p, _ := FaultOf(faults.Pause)
	s.Step(p, StepOf(model.Write, true))
	s.Step(p, StepOf(model.Read, false))
	s.Faults(p, p)
	if r := Judge(s, "outside"); r.Reached != 0 {
		t.Fatalf("pairs outside the model counted: %s", r.Summary())
	}
}

func TestSink(t *testing.T) {
	var k Sink
	var a, b Set
	a.Workload(Uneven, Reader)
	b.Step(Lost, StepOf(model.Acquire, false))
	k.Add(&a)
	k.Add(&b)
	got := k.Set()
	want := a
	want.Union(&b)
	if got != want {
		t.Fatalf("sink %v, want %v", got, want)
	}
}
