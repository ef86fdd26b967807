package runrecord

import "testing"

// The liveness bounds by hand: the slowest holder's retry interval, made
// longer by the clock bound (rounded up, plus a tick), a round trip, and
// for recovery the TTL and twice the clock uncertainty.
func TestSettingBounds(t *testing.T) {
	s := &Setting{TTL: 1000, MaxDelay: 5, Holders: []Holder{{RetryMax: 100}, {RetryMax: 250}}}
	// retry 250+0+1 = 251, rtt 10: 1000+2·2+251+10+1, 251+10+1.
	if rec, hand := s.Bounds(2); rec != 1266 || hand != 262 {
		t.Errorf("Bounds(2) = %d, %d; want 1266, 262", rec, hand)
	}
	s.RhoPPM = 100_000 // retry 250 + ceil(25) + 1 = 276
	if rec, hand := s.Bounds(0); rec != 1287 || hand != 287 {
		t.Errorf("Bounds(0) at 10%% drift = %d, %d; want 1287, 287", rec, hand)
	}
}
