package campaign

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/model"
)

// Parameters lists, in words, the settings a lease's verdict turns on: the
// clocks' drift bound and each clock's drift, each holder's margin, renew
// interval and request timeout (their effective values, defaults filled
// in), and the network's delays. A story and a timeline page both show
// them, since a drift or timing bug's cause is in these numbers and in no
// operation of the history. Nil for a real backend's run, whose clocks and
// network are not the scenario's.
func Parameters(o *Outcome) []string {
	sc := o.Scenario
	if sc == nil || strings.HasPrefix(sc.Implementation, backendPrefix) {
		return nil
	}
	var out []string
	over := sc.RhoPPM * sc.TTL / 1_000_000
	drifts := []string{fmt.Sprintf("coordinator %s", driftWords(sc.CoordinatorDriftPPM, sc.RhoPPM))}
	for i := range sc.Holders {
		p := &sc.Holders[i]
		drifts = append(drifts, fmt.Sprintf("%s %s", p.Name, driftWords(p.DriftPPM, sc.RhoPPM)))
	}
	out = append(out, fmt.Sprintf("clocks: drift bound ±%dppm (±%dms over a TTL of %dms); drifts: %s", sc.RhoPPM, over, sc.TTL, strings.Join(drifts, ", ")))
	for i := range sc.Holders {
		p := &sc.Holders[i]
		c := holder.Config{TTL: sc.TTL, RhoPPM: sc.ToldRho(p), RenewEvery: p.RenewEvery, Margin: p.Margin, Timeout: p.Timeout, RetryMax: p.RetryMax}.WithDefaults()
		margin := "none"
		if c.Margin != holder.NoMargin {
			margin = fmt.Sprintf("%dms", c.Margin)
		}
		told := ""
		if c.RhoPPM != sc.RhoPPM {
			told = fmt.Sprintf(", told a drift bound of %dppm (the truth: %dppm)", c.RhoPPM, sc.RhoPPM)
		}
		out = append(out, fmt.Sprintf("%s: margin %s, renews every %dms (%s), request timeout %dms, acquire backoff %d-%dms%s",
			p.Name, margin, c.RenewEvery, fractionOfTTL(c.RenewEvery, sc.TTL), c.Timeout, c.RetryMin, c.RetryMax, told))
	}
	delay := fmt.Sprintf("network: messages delayed %d-%dms", sc.Network.MinDelay, sc.Network.MaxDelay)
	if sc.Network.DropPPM > 0 || sc.Network.DupPPM > 0 {
		delay += fmt.Sprintf(", lost %dppm, duplicated %dppm", sc.Network.DropPPM, sc.Network.DupPPM)
	}
	if t := sc.Holders; len(t) > 0 {
		c := holder.Config{TTL: sc.TTL, Timeout: t[0].Timeout}.WithDefaults()
		if sc.Network.MaxDelay*2 > c.Timeout {
			delay += fmt.Sprintf(" (a round trip may outlast the %dms request timeout)", c.Timeout)
		}
	}
	return append(out, delay)
}

// parametersOf is the parameter lines the story and the page tell: the
// driver's own (n.Parameters: a client of the user's, its timing and not
// the reference holder's margin, renewal interval and backoff, which it
// never had) where it gave them, else Parameters.
func parametersOf(o *Outcome, n *DomainNotes) []string {
	if n != nil && len(n.Parameters) > 0 {
		return n.Parameters
	}
	return Parameters(o)
}

func driftWords(d, rho int64) string {
	s := fmt.Sprintf("%+dppm", d)
	if d != 0 && (d == rho || d == -rho) {
		s += " (at the bound)"
	}
	return s
}

// fractionOfTTL says how interval i compares with the TTL: "TTL/3".
func fractionOfTTL(i, ttl int64) string {
	if i <= 0 || ttl <= 0 {
		return "no interval"
	}
	if i >= ttl {
		return fmt.Sprintf("%.2g×TTL", float64(i)/float64(ttl))
	}
	return fmt.Sprintf("TTL/%.2g", float64(ttl)/float64(i))
}

// violationSpan is when violation v happened: its run property's span, else the
// span of its history lines' operations.
func violationSpan(o *Outcome, v Violation) (from, to int64, ok bool) {
	if v.From != 0 || v.To != 0 {
		return v.From, v.To, true
	}
	if o.History == nil {
		return 0, 0, false
	}
	for i := range o.History.Ops {
		op := &o.History.Ops[i]
		if !slices.Contains(v.Lines, op.Line) {
			continue
		}
		end := op.Return
		if !op.Returned {
			end = op.Call
		}
		if !ok {
			from, to, ok = op.Call, end, true
		}
		from, to = min(from, op.Call), max(to, end)
	}
	return from, to, ok
}

// Deadlines tells, for each holder that believed it held the lease while
// violation v happened, how long its lease lasted at the coordinator and
// how long it believed: its last granted acquire or renew (when sent,
// when the coordinator applied it) and the expiry that implies on the
// coordinator's clock, beside the moment the holder stopped believing. A
// belief that outlives its lease is the cause of a double holder; one that
// ends in time clears that holder.
func Deadlines(o *Outcome, v Violation) []string {
	if o.Sim == nil || o.History == nil || o.Scenario == nil || strings.HasPrefix(v.Property, "liveness-") {
		return nil // a liveness property is about waiting, not about believing too long
	}
	from, to, ok := violationSpan(o, v)
	if !ok {
		return nil
	}
	sc := o.Scenario
	var out []string
	for _, b := range o.Sim.Beliefs {
		if b.To < from || b.From > to {
			continue
		}
		s := fmt.Sprintf("%s believed under fence %d from t=%d until t=%d", b.Process, b.Fence, b.From, b.To)
		if b.Open {
			s = fmt.Sprintf("%s believed under fence %d from t=%d to the end of the run (t=%d)", b.Process, b.Fence, b.From, b.To)
		}
		if g := lastGrant(o.History, b.Process, b.Fence, b.To); g != nil {
			// The coordinator counts the TTL on its own clock from the
			// instant it applied the request; the history's at is that
			// clock's reading, which runs from 0 at the drift the scenario
			// gives it, so both convert back to the run's time the same way.
			runTime := func(local int64) int64 { return local * 1_000_000 / (1_000_000 + sc.CoordinatorDriftPPM) }
			expiry := runTime(g.At + sc.TTL)
			// The reading is whole milliseconds: converted back it can fall
			// just before the call; the request was applied inside it.
			at := max(runTime(g.At), g.Call)
			if g.Returned {
				at = min(at, g.Return)
			}
			applied := fmt.Sprintf("t=%d", at)
			if at != g.At {
				applied += fmt.Sprintf(" (t=%d on the coordinator's clock)", g.At)
			}
			s += fmt.Sprintf("; its last granted %s was sent at t=%d and applied at %s, so the coordinator's lease (TTL %dms on a clock drifting %+dppm) ran to about t=%d", g.Kind, g.Call, applied, sc.TTL, sc.CoordinatorDriftPPM, expiry)
			switch d := b.To - expiry; {
			case d > 0:
				s += fmt.Sprintf(": the belief outlived the lease by %dms", d)
				if b.Open {
					s += " or more"
				}
			case b.Open:
				s += ": the run ended first"
			default:
				s += fmt.Sprintf(": the belief ended %dms before it", -d)
			}
		}
		out = append(out, s)
	}
	return out
}

// lastGrant is process p's last acquire or renew under fence granted
// before t, with the coordinator's apply time known.
func lastGrant(h *model.History, p string, fence, t int64) *model.Op {
	var g *model.Op
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.Process != p || !op.OK || !op.HasAt || op.Call > t || op.Kind != model.Acquire && op.Kind != model.Renew {
			continue
		}
		if fence != 0 && op.Fence != 0 && op.Fence != fence {
			continue
		}
		g = op
	}
	return g
}

// CauseFirst orders sc's faults so that the one that best explains the
// violations comes first: faults whose span reaches into a violation's
// window, those striking a process involved in it, then the nearest before
// it; the rest in the plan's order. A story lists the faults in this
// order, so that a reader starts with the one that mattered.
func CauseFirst(o *Outcome, fs faults.Plan) faults.Plan {
	out := slices.Clone(fs)
	vs := o.ByCause()
	if len(vs) == 0 || len(out) < 2 {
		return out
	}
	from, to, ok := violationSpan(o, vs[0])
	if !ok {
		return out
	}
	// The culprit is the process whose act the violation is about: the
	// last operation of a history property's lines (the one no order
	// explains), or the holder with the oldest fence among those believing
	// during a run property's window (the one that did not stop).
	culprit := ""
	involved := map[string]bool{faults.Coordinator: true, faults.Resource: true}
	if o.History != nil {
		for i := range o.History.Ops {
			if op := &o.History.Ops[i]; slices.Contains(vs[0].Lines, op.Line) {
				involved[op.Process] = true
				if vs[0].Kind == HistoryProperty && op.Line == slices.Max(vs[0].Lines) {
					culprit = op.Process
				}
			}
		}
	}
	if o.Sim != nil {
		oldest := int64(-1)
		for _, b := range o.Sim.Beliefs {
			if b.To >= from && b.From <= to {
				involved[b.Process] = true
				if vs[0].Kind == RunProperty && (oldest < 0 || b.Fence < oldest) {
					culprit, oldest = b.Process, b.Fence
				}
			}
		}
	}
	score := func(f faults.Fault) (int, int64) {
		end := f.At + f.Duration
		var r int
		switch {
		case f.At > to:
			r = 5 // after the violation: it explains nothing
		case end >= from && f.Target == culprit:
			r = 0
		case end >= from && involved[f.Target]:
			r = 1
		case involved[f.Target]:
			r = 2
		case end >= from:
			r = 3
		default:
			r = 4
		}
		return r, max(from-end, 0)
	}
	slices.SortStableFunc(out, func(a, b faults.Fault) int {
		ra, da := score(a)
		rb, db := score(b)
		return cmp.Or(cmp.Compare(ra, rb), cmp.Compare(da, db))
	})
	return out
}
