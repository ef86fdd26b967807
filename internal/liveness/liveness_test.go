package liveness

import (
	"slices"
	"testing"
)

// waits is a waiting function: who waits for the lease.
func waits(owners ...string) func(string) bool {
	return func(except string) bool {
		for _, o := range owners {
			if o != except {
				return true
			}
		}
		return false
	}
}

var nobody = waits()

func TestRecovery(t *testing.T) {
	// a holds until 100 (store clock = run time here); b waits.
	var m Meter
	m.Granted(0, "a", 100)
	m.Crashed(40, "a", 40, waits("a", "b"))
	if r, _ := m.Measured(); r != 0 {
		t.Fatalf("a recovery timed before the next grant: %d", r)
	}
	m.Granted(130, "b", 230)
	got := m.Measures()
	if !slices.Equal(got.Recoveries, []int64{90}) || !slices.Equal(got.RecoveryAt, []int64{40}) || got.Unrecovered != 0 {
		t.Errorf("crash at 40, grant at 130: got %+v, want one recovery of 90 at 40", got)
	}
}

func TestNoRecovery(t *testing.T) {
	for _, tc := range []struct {
		name  string
		crash func(m *Meter)
	}{
		// Nobody else waits: the next grant times a restart, not the lease.
		{"nobody waits", func(m *Meter) { m.Crashed(40, "a", 40, waits("a")) }},
		// Another owner's holder crashed: a held the lease, it waits for nothing.
		{"not the holder", func(m *Meter) { m.Crashed(40, "c", 40, waits("a", "b")) }},
		// a's lease had expired on the store's clock: nobody waits for a.
		{"expired", func(m *Meter) { m.Crashed(140, "a", 100, waits("a", "b")) }},
		// After a release nobody holds the lease.
		{"released first", func(m *Meter) {
			m.Released(30, "a", nobody)
			m.Crashed(40, "a", 40, waits("a", "b"))
		}},
	} {
		var m Meter
		m.Granted(0, "a", 100)
		tc.crash(&m)
		m.Granted(150, "b", 250)
		if got := m.Measures(); len(got.Recoveries) != 0 || got.Unrecovered != 0 {
			t.Errorf("%s: got %+v, want no recovery", tc.name, got)
		}
	}
}

func TestHandoff(t *testing.T) {
	var m Meter
	m.Granted(0, "a", 100)
	m.Renewed(150)
	if m.Owner() != "a" || m.Expiry() != 150 {
		t.Fatalf("after a renewal: owner %q expiry %d, want a until 150", m.Owner(), m.Expiry())
	}
	m.Released(50, "a", waits("a", "b"))
	if m.Owner() != "" {
		t.Errorf("after a release the owner is %q, want none", m.Owner())
	}
	m.Granted(53, "b", 153)
	// A release nobody waits for times nothing.
	m.Released(60, "b", waits("b"))
	m.Granted(70, "b", 170)
	// A holder that finishes its program holding the lease, while another
	// waits, makes the others wait out its TTL: a handoff, from its end.
	m.Finished(80, "b", 80, waits("a", "b"))
	m.Granted(170, "a", 270)
	// One that finishes after its lease expired hands nothing over.
	m.Finished(300, "a", 300, waits("a", "b"))
	m.Granted(310, "b", 410)
	got := m.Measures()
	if !slices.Equal(got.Handoffs, []int64{3, 90}) || !slices.Equal(got.HandoffAt, []int64{50, 80}) || len(got.Recoveries) != 0 {
		t.Errorf("got %+v, want handoffs of 3 at 50 and 90 at 80", got)
	}
}

func TestNobodyWaitsDrops(t *testing.T) {
	var m Meter
	m.Granted(0, "a", 100)
	m.Crashed(10, "a", 10, waits("a", "b"))
	m.Granted(20, "b", 120)
	m.Released(30, "b", waits("b", "c"))
	m.Granted(35, "c", 135)
	m.Crashed(40, "c", 40, waits("c", "d"))
	// d crashes too: nobody is left to take the lease over.
	m.NobodyWaits()
	m.Granted(500, "c", 600) // c's restart
	got := m.Measures()
	if !slices.Equal(got.Recoveries, []int64{10}) || !slices.Equal(got.Handoffs, []int64{5}) || got.Unrecovered != 0 {
		t.Errorf("got %+v, want the recovery of 10 and the handoff of 5 only", got)
	}
	if c, r := m.Pending(); len(c)+len(r) != 0 {
		t.Errorf("pending after a grant: %v %v", c, r)
	}
}

func TestUnrecovered(t *testing.T) {
	var m Meter
	m.Granted(0, "a", 100)
	m.Crashed(40, "a", 40, waits("a", "b", "c"))
	// The same owner's second holder crashing: still a's live lease.
	m.Crashed(60, "a", 60, waits("a", "b"))
	got := m.Measures()
	if got.Unrecovered != 2 || got.UnrecoveredSince != 40 || len(got.Recoveries) != 0 {
		t.Errorf("got %+v, want 2 unrecovered since 40", got)
	}
	// Measures does not end them: a grant later still times them.
	m.Granted(90, "b", 190)
	if got := m.Measures(); !slices.Equal(got.Recoveries, []int64{50, 30}) || got.Unrecovered != 0 {
		t.Errorf("after the grant: got %+v, want recoveries of 50 and 30", got)
	}
}

func TestCopies(t *testing.T) {
	var m Meter
	m.Granted(0, "a", 100)
	m.Crashed(10, "a", 10, waits("a", "b"))
	m.Granted(20, "b", 120)
	m.Crashed(30, "b", 30, waits("b", "c"))

	// A spare with buffers of its own, longer than m's: CopyInto reuses
	// them and must not carry their contents over.
	var spare Meter
	spare.Granted(0, "x", 1)
	for i := range 5 {
		spare.Crashed(int64(i), "x", 0, waits("x", "y"))
	}
	spare.Granted(9, "y", 10)
	c := m.CopyInto(spare)
	m.Granted(50, "c", 150)
	if got := c.Measures(); !slices.Equal(got.Recoveries, []int64{10}) || got.Unrecovered != 1 || got.UnrecoveredSince != 30 {
		t.Errorf("the copy saw the original's grant: %+v", got)
	}
	c.Granted(70, "c", 170)
	if got := m.Measures(); !slices.Equal(got.Recoveries, []int64{10, 20}) {
		t.Errorf("the original saw the copy's grant: %+v", got)
	}
	if got := c.Measures(); !slices.Equal(got.Recoveries, []int64{10, 40}) || c.Owner() != "c" || c.Expiry() != 170 {
		t.Errorf("the copy: %+v, owner %q until %d", got, c.Owner(), c.Expiry())
	}

	// Clip: both go on appending, neither sees the other's.
	before := m.Measures()
	k := m.Clip()
	k.Crashed(60, "c", 60, waits("c", "d"))
	k.Granted(80, "d", 180)
	m.Crashed(61, "c", 61, waits("c", "d"))
	m.Granted(90, "d", 190)
	if !slices.Equal(before.Recoveries, []int64{10, 20}) {
		t.Errorf("a grant after Measures showed through it: %v", before.Recoveries)
	}
	if got, want := k.Measures().Recoveries, []int64{10, 20, 20}; !slices.Equal(got, want) {
		t.Errorf("the clipped copy: %v, want %v", got, want)
	}
	if got, want := m.Measures().Recoveries, []int64{10, 20, 29}; !slices.Equal(got, want) {
		t.Errorf("the original after Clip: %v, want %v", got, want)
	}
}

// TestClipKeepsItsPending: a crash pending when the meter is clipped stays
// the copy's, whatever the original does after: its grant empties its
// pending list in place, and its next crash fills that room again.
func TestClipKeepsItsPending(t *testing.T) {
	var m Meter
	m.Granted(0, "a", 100)
	m.Crashed(10, "a", 10, waits("a", "b"))
	k := m.Clip()
	m.Granted(20, "b", 120)
	m.Crashed(30, "b", 30, waits("b", "c"))
	if got := k.Measures(); got.Unrecovered != 1 || got.UnrecoveredSince != 10 {
		t.Errorf("the clipped copy's pending crash: %d since %d, want 1 since 10", got.Unrecovered, got.UnrecoveredSince)
	}
	k.Granted(50, "c", 150)
	if got := m.Measures(); got.Unrecovered != 1 || got.UnrecoveredSince != 30 || !slices.Equal(got.Recoveries, []int64{10}) {
		t.Errorf("the original after the copy's grant: %+v", got)
	}
}
