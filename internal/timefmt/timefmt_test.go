package timefmt

import (
	"math"
	"testing"
)

// TestTimes: an account renders every unit's times in milliseconds, at the
// history's own precision; a history in ms keeps its numbers unsuffixed.
func TestTimes(t *testing.T) {
	for _, c := range []struct {
		unit string
		v    int64
		want string
	}{
		{"us", 1567317, "1567.317ms"}, {"us", 1000000, "1000ms"}, {"us", 1500, "1.5ms"}, {"us", 7, "0.007ms"},
		{"us", -2500, "-2.5ms"}, {"ns", 1234567, "1.234567ms"}, {"s", 3, "3000ms"},
		{"ms", 21786, "21786"}, {"", 21786, "21786"},
		{"s", math.MaxInt64, "9223372036854775807ms"}, {"us", math.MinInt64, "-9223372036854775808ms"},
	} {
		if got := (Times{Unit: c.unit}).Dur(c.v); got != c.want {
			t.Errorf("%s %d: got %q, want %q", c.unit, c.v, got, c.want)
		}
	}
	if got := (Times{Unit: "us"}).Span(726238, 1567285); got != "[726.238,1567.285]ms" {
		t.Errorf("span %q", got)
	}
}
