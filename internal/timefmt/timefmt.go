// Package timefmt is how a person's account of a history — a violation's
// explanation, a story, a fault log — renders the history's times: in
// milliseconds, whatever the header's time_unit. model.Op.DescribeInUnit,
// the checker's explanations, the stories and the real runner's logs all
// render through it, so that one account speaks one unit.
package timefmt

import (
	"math"
	"strconv"
	"strings"
)

// Times is how a person's account of a history — a violation's
// explanation, a story, a fault log — renders the history's times: in
// milliseconds, whatever the header's time_unit, so that one account
// speaks one unit. This is the one place the conversion is done.
//
// A history in ms (the format's default, and the simulator's) keeps its
// numbers as they are in the file, without a suffix: its stories state
// the unit once ("TTL 1000ms"). Any other unit is converted to ms and
// every time says "ms", so that a µs history's t=1567317 reads
// t=1567.317ms beside a fault log's 726.238ms.
type Times struct {
	// Unit is the header's time_unit: ns, us, ms or s ("" is ms).
	Unit string
}

// Converted reports whether the times are converted (and suffixed).
func (t Times) Converted() bool { return t.Unit != "" && t.Unit != "ms" }

// Num is v in milliseconds, without a unit: at most the history's own
// precision (µs: three decimals), trailing zeros dropped. Values too large
// to convert (the checker's infinity) are rendered as they are.
func (t Times) Num(v int64) string {
	var div int64
	switch t.Unit {
	case "us":
		div = 1000
	case "ns":
		div = 1000_000
	case "s":
		if v > math.MaxInt64/1000 || v < math.MinInt64/1000 {
			return strconv.FormatInt(v, 10)
		}
		return strconv.FormatInt(v*1000, 10)
	default:
		return strconv.FormatInt(v, 10)
	}
	neg := v < 0
	u := v
	if neg {
		if v == math.MinInt64 {
			return strconv.FormatInt(v, 10)
		}
		u = -v
	}
	whole, frac := u/div, u%div
	s := strconv.FormatInt(whole, 10)
	if frac != 0 {
		digits := len(strconv.FormatInt(div, 10)) - 1
		f := strconv.FormatInt(frac, 10)
		f = strings.Repeat("0", digits-len(f)) + f
		s += "." + strings.TrimRight(f, "0")
	}
	if neg {
		s = "-" + s
	}
	return s
}

// Suffix is "ms" when the times are converted, else "".
func (t Times) Suffix() string {
	if t.Converted() {
		return "ms"
	}
	return ""
}

// Dur renders v (a time or a duration) with its unit: "1567.317ms", or
// "21786" for a history in ms.
func (t Times) Dur(v int64) string { return t.Num(v) + t.Suffix() }

// At renders the instant v: "t=1567.317ms".
func (t Times) At(v int64) string { return "t=" + t.Dur(v) }

// Span renders the interval [lo,hi]: "[726.238,1567.285]ms".
func (t Times) Span(lo, hi int64) string { return "[" + t.Num(lo) + "," + t.Num(hi) + "]" + t.Suffix() }
