package faultsupport

import (
	"slices"
	"testing"

	"github.com/leasecheck/leasecheck/faults"
)

// TestEveryKindHasItsRow: the table has a row for every kind of the
// vocabulary and none for a name outside it, so a kind added without
// saying where it strikes fails here rather than being refused everywhere.
func TestEveryKindHasItsRow(t *testing.T) {
	var all []faults.Kind
	for _, list := range [][]faults.Kind{faults.AllKinds, faults.ClusterKinds, faults.NetworkKinds, faults.ClientKinds} {
		all = append(all, list...)
	}
	for _, k := range all {
		if _, ok := applies[k]; !ok {
			t.Errorf("%s has no row in the applicability table", k)
		}
	}
	for k := range applies {
		if !slices.Contains(all, k) {
			t.Errorf("the table has a row for %q, which is no kind", k)
		}
	}
	if n := Needs(faults.Kind("no-such-kind"), Simulator); n != Never {
		t.Errorf("an unknown kind needs %d of the simulator, want Never", n)
	}
	if n := Needs(faults.Pause, Driver(0)); n != Never {
		t.Errorf("pause needs %d of no driver, want Never", n)
	}
}

// TestKindsFor: the simulator injects exactly "all" (one coordinator, no
// client code of its own); a real backend every kind but a client's; a
// client in virtual time the client faults and none of a cluster's.
func TestKinds(t *testing.T) {
	if got := Kinds(Simulator); !slices.Equal(got, faults.AllKinds) {
		t.Errorf("simulator: %v, want %v", got, faults.AllKinds)
	}
	real := Kinds(RealBackend)
	for _, k := range faults.ClientKinds {
		if slices.Contains(real, k) {
			t.Errorf("a real backend takes the client fault %s", k)
		}
	}
	for _, k := range faults.ClusterKinds {
		if Needs(k, RealBackend) != NeedsCluster {
			t.Errorf("%s needs %d of a real backend, want a cluster", k, Needs(k, RealBackend))
		}
	}
	for _, k := range faults.NetworkKinds {
		if Needs(k, RealBackend) != NeedsProxy || Needs(k, Simulator) != Never || Needs(k, VirtualTime) != Never {
			t.Errorf("%s: the network faults strike at a real client's socket only, through a proxy", k)
		}
	}
	vt := Kinds(VirtualTime)
	for _, k := range faults.ClientKinds {
		if !slices.Contains(vt, k) {
			t.Errorf("virtual time does not take the client fault %s", k)
		}
	}
	for _, k := range faults.ClusterKinds {
		if slices.Contains(vt, k) {
			t.Errorf("virtual time takes the cluster fault %s", k)
		}
	}
}
