package faults_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/faults"
)

func TestParseKinds(t *testing.T) {
	all, err := faults.ParseKinds("all")
	if err != nil || len(all) != len(faults.AllKinds) {
		t.Fatalf("ParseKinds(all) = %v, %v", all, err)
	}
	got, err := faults.ParseKinds("crash, pause,crash")
	if err != nil || !reflect.DeepEqual(got, []faults.Kind{faults.Pause, faults.Crash}) {
		t.Fatalf("ParseKinds = %v, %v; want [pause crash] in AllKinds order", got, err)
	}
	if none, err := faults.ParseKinds("none"); err != nil || len(none) != 0 {
		t.Fatalf("ParseKinds(none) = %v, %v", none, err)
	}
	if _, err := faults.ParseKinds("gc"); err == nil || !strings.Contains(err.Error(), "gc") {
		t.Fatalf("ParseKinds(gc) error = %v", err)
	}
}

// TestClientKinds: a shutdown is a kind of its own, parsed by name, kept
// out of "all" (the simulator and real backends cannot inject it), and
// validated as a holder's fault.
func TestClientKinds(t *testing.T) {
	got, err := faults.ParseKinds("shutdown,crash")
	if err != nil || !reflect.DeepEqual(got, []faults.Kind{faults.Crash, faults.Shutdown}) {
		t.Fatalf("ParseKinds(shutdown,crash) = %v, %v; want [crash shutdown]", got, err)
	}
	all, _ := faults.ParseKinds("all")
	for _, k := range all {
		if slices.Contains(faults.ClientKinds, k) {
			t.Errorf("all includes the client fault %s", k)
		}
	}
	if _, err := faults.ParseKinds("shutdown"); err != nil || !slices.Contains(faults.ClientKinds, faults.Shutdown) || slices.Contains(faults.ClientKinds, faults.Crash) {
		t.Errorf("ParseKinds/ClientKinds wrong for shutdown or crash: %v", err)
	}
	ok := faults.Plan{{Kind: faults.Shutdown, Target: "h1", At: 5}, {Kind: faults.Shutdown, Target: "h2", At: 9, Duration: 100}}
	if err := ok.Validate([]string{"h1", "h2"}, 0); err != nil {
		t.Errorf("Validate(%v) = %v", ok, err)
	}
	bad := faults.Plan{{Kind: faults.Shutdown, Target: faults.Coordinator, At: 5}}
	if err := bad.Validate([]string{"h1"}, 0); err == nil || !strings.Contains(err.Error(), "holder") {
		t.Errorf("Validate(%v) = %v, want a holder target refused", bad, err)
	}
}

func TestValidate(t *testing.T) {
	hs := []string{"h1", "h2"}
	for _, tc := range []struct {
		f    faults.Fault
		want string // "" valid
	}{
		{faults.Fault{Kind: faults.Pause, Target: "h1", At: 5, Duration: 3}, ""},
		{faults.Fault{Kind: faults.Pause, Target: "h9"}, "target"},
		{faults.Fault{Kind: "gc", Target: "h1"}, "unknown kind"},
		{faults.Fault{Kind: faults.ClockDrift, Target: faults.Coordinator, Amount: 500}, ""},
		{faults.Fault{Kind: faults.ClockDrift, Target: "h1", Amount: 5000}, "rho"},
		{faults.Fault{Kind: faults.CoordinatorCrash, Target: faults.Coordinator}, "restart"},
		{faults.Fault{Kind: faults.Partition, Target: "h1", Peer: "h2", Duration: 1}, "partition"},
		{faults.Fault{Kind: faults.OwnerReuse, Target: "h1"}, "owner-reuse"},
		{faults.Fault{Kind: faults.Crash, Target: "h1", At: -1}, "negative"},
	} {
		err := faults.Plan{tc.f}.Validate(hs, 1000)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("Validate(%v) = %v, want %q", tc.f, err, tc.want)
		}
	}
}

// A plan is a slice built with append: Sorted orders it by At, keeping
// ties in their order, Counts counts each kind, and it survives JSON.
func TestPlanSortedCountsJSON(t *testing.T) {
	p := faults.Plan{
		{Kind: faults.Pause, Target: "h1", At: 210, Duration: 5},
		{Kind: faults.Crash, Target: "h2", At: 100},
		{Kind: faults.Pause, Target: "h1", At: 60, Duration: 5},
		{Kind: faults.Pause, Target: "h2", At: 100, Duration: 5},
	}
	q := p.Sorted()
	var got []string
	for _, f := range q {
		got = append(got, f.String())
	}
	want := []string{p[2].String(), p[1].String(), p[3].String(), p[0].String()}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Sorted = %v, want %v", got, want)
	}
	if p[0].At != 210 {
		t.Fatalf("Sorted changed its receiver: %v", p)
	}
	if c := q.Counts(); c[faults.Pause] != 3 || c[faults.Crash] != 1 || len(c) != 2 {
		t.Fatalf("Counts = %v", c)
	}
	b, err := json.Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	var back faults.Plan
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, q) {
		t.Fatalf("JSON round trip: %v %v", back, err)
	}
}

// TestNetworkKinds: the faults at a client's socket are kinds of their
// own, parsed by name, not in "all" (the simulator has no sockets), and a
// plan refuses one without a duration, or a delay without an amount.
func TestNetworkKinds(t *testing.T) {
	got, err := faults.ParseKinds("duplicate,blackhole,pause")
	if err != nil || !slices.Equal(got, []faults.Kind{faults.Pause, faults.Blackhole, faults.Duplicate}) {
		t.Fatalf("ParseKinds = %v, %v; want [pause blackhole duplicate]", got, err)
	}
	for _, k := range faults.NetworkKinds {
		if slices.Contains(faults.AllKinds, k) {
			t.Errorf("%s is in AllKinds", k)
		}
	}
	for _, c := range []struct {
		f  faults.Fault
		ok bool
	}{
		{faults.Fault{Kind: faults.ReplyLoss, Target: "h1", Duration: 100}, true},
		{faults.Fault{Kind: faults.ReplyLoss, Target: "h1"}, false},
		{faults.Fault{Kind: faults.RequestDelay, Target: "h1", Duration: 100}, false},
		{faults.Fault{Kind: faults.RequestDelay, Target: "h1", Duration: 100, Amount: 20}, true},
		{faults.Fault{Kind: faults.Duplicate, Target: "h1", Duration: 100}, true},
		{faults.Fault{Kind: faults.Blackhole, Target: "coordinator", Duration: 100}, false},
	} {
		if err := (faults.Plan{c.f}).Validate([]string{"h1"}, 0); (err == nil) != c.ok {
			t.Errorf("Validate(%v) = %v, want ok %v", c.f, err, c.ok)
		}
	}
}
