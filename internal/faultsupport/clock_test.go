package faultsupport_test

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/leasecheck/leasecheck/internal/faultsupport"
)

func TestClockDriftFreezeStep(t *testing.T) {
	c := faultsupport.NewClock(1000)
	if got := c.Mono(0); got != 1000 {
		t.Fatalf("Mono(0) = %d, want the offset 1000", got)
	}
	c.SetDrift(0, 10_000) // 1% fast
	if got := c.Mono(1000); got != 2010 {
		t.Fatalf("Mono(1000) at +1%% = %d, want 2010", got)
	}
	c.Freeze(1000)
	if got := c.Mono(5000); got != 2010 {
		t.Fatalf("frozen Mono = %d, want 2010", got)
	}
	if got := c.When(2011, 5000); got != -1 {
		t.Fatalf("When while frozen = %d, want -1", got)
	}
	c.Unfreeze(5000)
	if got := c.Mono(5100); got != 2111 {
		t.Fatalf("after unfreeze Mono(5100) = %d, want 2111", got)
	}
	c.Step(-500)
	if got, mono := c.Wall(5100), c.Mono(5100); got != mono-500 {
		t.Fatalf("wall %d after a -500 step, mono %d", got, mono)
	}
}

// Mono is monotonic under any drift within the bound, and When is the
// earliest true time the clock reaches a reading.
func TestClockWhenIsEarliest(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		c := faultsupport.NewClock(rapid.Int64Range(-1000, 1000).Draw(rt, "offset"))
		t0 := rapid.Int64Range(0, 1000).Draw(rt, "t0")
		c.SetDrift(t0, rapid.Int64Range(-100_000, 100_000).Draw(rt, "ppm"))
		now := t0 + rapid.Int64Range(0, 1000).Draw(rt, "now")
		local := c.Mono(now) + rapid.Int64Range(-10, 5000).Draw(rt, "ahead")
		w := c.When(local, now)
		if w < now || c.Mono(w) < local {
			rt.Fatalf("When(%d, %d) = %d reads %d", local, now, w, c.Mono(w))
		}
		if w > now && c.Mono(w-1) >= local {
			rt.Fatalf("When(%d, %d) = %d is not the earliest", local, now, w)
		}
		if c.Mono(now+1) < c.Mono(now) {
			rt.Fatal("clock went backwards")
		}
	})
}

// An offset moves both clocks' readings from the start and nothing else;
// Thaw ends every freeze at once (a crash takes its freezes with it),
// where Unfreeze ends one of them.
func TestClockOffsetAndThaw(t *testing.T) {
	c := faultsupport.NewClock(0)
	c.SetDrift(0, 1000)
	c.Offset(-300)
	if got := c.Mono(1000); got != 701 {
		t.Fatalf("Mono(1000) with offset -300 at +1000ppm = %d, want 701", got)
	}
	if c.Drift() != 1000 || c.WallOffset() != 0 {
		t.Fatalf("an offset changed the drift (%d) or the wall offset (%d)", c.Drift(), c.WallOffset())
	}
	c.Step(40)
	if c.WallOffset() != 40 || c.Wall(1000) != 741 {
		t.Fatalf("after a +40 step: wall offset %d, Wall(1000) %d, want 40 and 741", c.WallOffset(), c.Wall(1000))
	}
	c.Freeze(1000)
	c.Freeze(1200)
	c.Unfreeze(1500)
	if c.Frozen() != 1 || c.Mono(2000) != 701 {
		t.Fatalf("one of two freezes ended: depth %d, Mono %d, want 1 and still 701", c.Frozen(), c.Mono(2000))
	}
	c.Thaw(2000)
	if c.Frozen() != 0 || c.Mono(3000) != 1702 {
		t.Fatalf("after Thaw: depth %d, Mono(3000) %d, want 0 and 1702", c.Frozen(), c.Mono(3000))
	}
	c.Thaw(3000) // a running clock: nothing to end
	if c.Mono(3000) != 1702 {
		t.Fatalf("Thaw of a running clock moved it to %d", c.Mono(3000))
	}
}
