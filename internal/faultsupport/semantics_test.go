package faultsupport

import (
	"testing"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

// A fault with a duration is in force from its At, for Duration, the end
// excluded; one of no duration never is.
func TestDuring(t *testing.T) {
	f := faults.Fault{Kind: faults.Partition, At: 100, Duration: 50}
	for _, c := range []struct {
		t    int64
		want bool
	}{{99, false}, {100, true}, {149, true}, {150, false}, {1000, false}} {
		if got := During(f, c.t); got != c.want {
			t.Errorf("During(at 100 for 50, t=%d) = %v, want %v", c.t, got, c.want)
		}
	}
	if During(faults.Fault{Kind: faults.Delay, At: 100}, 100) {
		t.Error("a fault of no duration is in force at its At")
	}
}

// A drop-heartbeats loses renewals, and only renewals.
func TestLostToDropHeartbeats(t *testing.T) {
	if !LostToDropHeartbeats(model.Renew) {
		t.Error("a renewal goes through a drop-heartbeats")
	}
	for _, k := range []model.Kind{model.Acquire, model.Release, model.Write, model.Read} {
		if LostToDropHeartbeats(k) {
			t.Errorf("a drop-heartbeats loses a %s", k)
		}
	}
}

// A pause strikes at the first step that sends a write, or at any step a
// TTL after the first arming; pauses armed before it strikes add up, and
// a disarmed one never strikes.
func TestArmedPause(t *testing.T) {
	renew := []machine.Request{{Kind: model.Renew}}
	write := []machine.Request{{Kind: model.Renew}, {Kind: model.Write}}
	var a ArmedPause
	if d := a.Strike(0, 10, write); d != 0 {
		t.Fatalf("nothing armed, a write struck a pause of %d", d)
	}
	a.Arm(100, 30)
	a.Arm(105, 20)
	if a.Total != 50 || a.Since != 100 {
		t.Fatalf("two pauses armed at 100 and 105: %+v, want 50 since 100", a)
	}
	if d := a.Strike(109, 10, renew); d != 0 {
		t.Fatalf("a renewal before the TTL struck a pause of %d", d)
	}
	if d := a.Strike(109, 10, write); d != 50 {
		t.Fatalf("a write struck %d, want the 50 armed", d)
	}
	if d := a.Strike(200, 10, write); d != 0 {
		t.Fatalf("a struck pause struck again (%d)", d)
	}
	a.Arm(300, 7)
	if a.Since != 300 {
		t.Fatalf("a pause armed after one struck counts from %d, want 300", a.Since)
	}
	if d := a.Strike(310, 10, nil); d != 7 {
		t.Fatalf("a step a TTL after the arming struck %d, want 7", d)
	}
	a.Arm(400, 5)
	a.Disarm()
	if d := a.Strike(500, 10, write); d != 0 {
		t.Fatalf("a disarmed pause struck (%d)", d)
	}
	if SendsWrite(renew) || SendsWrite(nil) || !SendsWrite(write) {
		t.Error("SendsWrite does not find exactly the steps that send a write")
	}
}

// The first incarnation is the node; a restart is node#k; a crash comes
// back under the new name, an owner-reuse and a shutdown under the old.
func TestRestartIdentity(t *testing.T) {
	for _, c := range []struct {
		k    int
		want string
	}{{1, "h1"}, {2, "h1#2"}, {12, "h1#12"}} {
		if got := Incarnation("h1", c.k); got != c.want {
			t.Errorf("Incarnation(h1, %d) = %q, want %q", c.k, got, c.want)
		}
	}
	for _, k := range []faults.Kind{faults.OwnerReuse, faults.Shutdown} {
		if !KeepsOwner(k) {
			t.Errorf("a restart after %s takes a new owner name", k)
		}
	}
	for _, k := range []faults.Kind{faults.Crash, faults.CoordinatorCrash, faults.MemberCrash} {
		if KeepsOwner(k) {
			t.Errorf("a restart after %s keeps the dead incarnation's owner name", k)
		}
	}
}
