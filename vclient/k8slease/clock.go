package k8slease

import (
	"fmt"
	"reflect"
	"unsafe"

	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/utils/clock"

	"github.com/leasecheck/leasecheck/vclient"
)

// useClock hands a candidate's own clock (vclient.Candidate.Clock: its
// node's clock-offset and clock-drift faults) to its elector, where the
// node's clock is skewed.
//
// client-go v0.37.2's LeaderElector takes its clock from an unexported
// field (clock.Clock, set to clock.RealClock{} by NewLeaderElector; its
// own tests set it to a fake one): LeaderElectionConfig has no Clock
// option. The field is set here, in the built elector, as client-go's
// tests do; nothing of client-go is changed. What goes through it is
// every reading the elector decides on: the time it observed the Lease
// change (observedTime), whether the lease it observed is still valid
// (isLeaseValid: observedTime + LeaseDurationSeconds after now), the
// RenewTime and AcquireTime it writes, and Check's healthz measure. What
// does not: the retry loop (wait.JitterUntil, every RetryPeriod), the
// renew loop and its RenewDeadline (wait.PollUntilContextTimeout, a
// context deadline), and the HTTP client's timeout — package time's, true
// time here. So a fast clock makes a follower find the holder's lease
// expired early, in true time LeaseDuration/rate after it last saw the
// Lease change, while the holder, failing to renew, still believes for up
// to RetryPeriod + RenewDeadline of true time: client-go's doc comment
// bounds the tolerated ratio of clock rates by LeaseDuration/RenewDeadline
// (safeAt). A slow clock delays a follower's takeover and a
// holder's fast-path renewals only. An offset changes nothing the elector
// decides (it subtracts its own readings) and shows only in the times it
// writes.
func useClock(le leaderElector, c *vclient.Candidate) error {
	k := c.Clock()
	if !k.Skewed() {
		return nil
	}
	v := reflect.ValueOf(le)
	want := reflect.TypeFor[clock.Clock]()
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("%T is not client-go's LeaderElector: its clock cannot be set", le)
	}
	f := v.Elem().FieldByName("clock")
	if !f.IsValid() || f.Type() != want {
		return fmt.Errorf("%T has no clock field of type clock.Clock: its clock cannot be set", le)
	}
	reflect.NewAt(want, unsafe.Pointer(f.UnsafeAddr())).Elem().Set(reflect.ValueOf(clock.Clock(k)))
	return nil
}

// UseClock hands a candidate's own clock (vclient.Candidate.Clock: its
// node's clock-offset and clock-drift faults) to an elector built by
// client-go's leaderelection.NewLeaderElector, where the node's clock is
// skewed; call it before Run. It is the door for a client of your own to
// the clock faults (the Clock profile) and only to them; an unskewed clock
// changes nothing. Every other profile needs no hook: a sweep's bubble
// makes time.Now and every timer virtual, so the elector's own
// clock.RealClock runs on the run's time. A client that never hands its
// elector the candidate's clock has the clock faults recorded as never
// struck, and its sweep under the Clock profile is an error.
func UseClock(le *leaderelection.LeaderElector, c *vclient.Candidate) error { return useClock(le, c) }
