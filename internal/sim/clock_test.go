package sim_test

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/leasecheck/leasecheck/internal/sim"
)

func TestClockDriftFreezeStep(t *testing.T) {
	c := sim.NewClock(1000)
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
		c := sim.NewClock(rapid.Int64Range(-1000, 1000).Draw(rt, "offset"))
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
