package sim

// Liveness bookkeeping: who believes it holds the lease (and when a holder
// could not know better: paused, frozen), the coordinator's view of the
// lease, recovery and handoff measurements.

import (
	"strconv"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

func (w *World) setBelief(id int32, b bool, fence int64) {
	w.beliefChanges++
	n := w.nodeW(id)
	if b != n.believes {
		if w.believers >= 2 {
			w.stats.DoubleBelief += w.now - w.dblSince
		}
		w.dblSince = w.now
		if b {
			w.believers++
		} else {
			w.believers--
		}
	}
	if n.belief >= 0 { // a belief ends, or its fence changes
		bl := &w.beliefs[n.belief]
		old := w.keptBelief(bl)
		bl.To, bl.ToLine, bl.Open = w.now, w.traceLine(), false
		w.spanSum += w.keptBelief(bl) - old
		n.belief = -1
	}
	n.believes, n.fence = b, fence
	if b {
		n.belief = int32(len(w.beliefs))
		w.beliefs = append(w.beliefs, Belief{Process: n.process, Owner: n.owner, Fence: fence, From: w.now, To: w.now,
			FromLine: w.traceLine(), Open: true, Told: n.told})
		w.spanSum += w.keptBelief(&w.beliefs[n.belief])
		if w.tracing() {
			w.trace1(n.process, "believes", "fence="+strconv.FormatInt(fence, 10))
		}
	} else {
		w.trace1(n.process, "gave-up", "")
	}
}

// openStop starts a span in which node id cannot act (a pause) or its
// monotonic clock stands still (a freeze).
func (w *World) openStop(id int32, kind faults.Kind) {
	n := w.nodeW(id)
	idx := int32(len(w.stops))
	if kind == faults.Freeze && n.freeze >= 0 {
		n.freezes++ // nested freezes: one span, until the last one ends
		return
	}
	w.stops = append(w.stops, Stop{Node: n.name, Process: n.process, Kind: kind, From: w.now, To: w.now, FromLine: max(w.traceLine()-1, 0), Open: true})
	w.spanSum += w.keptStop(&w.stops[idx])
	if kind == faults.Freeze {
		n.freeze, n.freezes = idx, 1
	} else if n.stop < 0 {
		n.stop = idx
	}
}

// closeStop ends node id's open freeze (freeze) or pause span.
func (w *World) closeStop(id int32, freeze bool) {
	n := w.nodeW(id)
	p := &n.stop
	if freeze {
		p = &n.freeze
	}
	if *p < 0 {
		return
	}
	if freeze {
		if n.freezes--; n.freezes > 0 {
			return
		}
	}
	s := &w.stops[*p]
	old := w.keptStop(s)
	s.To, s.ToLine, s.Open = w.now, w.traceLine(), false
	w.spanSum += w.keptStop(s) - old
	*p = -1
}

func (w *World) closedBeliefs() []Belief {
	out := append([]Belief(nil), w.beliefs...)
	for i := range out {
		if out[i].Open {
			out[i].To = w.now
		}
	}
	return out
}

func (w *World) closedStops() []Stop {
	out := append([]Stop(nil), w.stops...)
	for i := range out {
		if out[i].Open {
			out[i].To = w.now
		}
	}
	return out
}

// Beliefs returns the belief spans so far (open ones end now); Stops the
// pauses and freezes. For monitors: the caller must not keep them past the
// next step.
func (w *World) Beliefs() []Belief { return w.closedBeliefs() }

// Stops returns the pause and freeze spans so far (see Beliefs).
func (w *World) Stops() []Stop { return w.closedStops() }

// Believers returns how many holders believe they hold the lease now,
// whether every one of them but the holder of the newest fence is paused or
// frozen (the case runprop's exclusive-belief excuses), and a version that
// changes whenever a belief does.
func (w *World) Believers() (believers int, olderStopped bool, version int) {
	newest := int32(-1)
	for i := range w.nodes {
		if n := &w.nodes[i]; n.believes && (newest < 0 || n.fence > w.nodes[newest].fence) {
			newest = int32(i)
		}
	}
	olderStopped = true
	for i := range w.nodes {
		if n := &w.nodes[i]; n.believes && int32(i) != newest && n.paused == 0 {
			olderStopped = false
		}
	}
	return w.believers, olderStopped, w.beliefChanges
}

// observe feeds the coordinator's applied requests to the liveness meter
// (internal/liveness), which follows its lease.
func (w *World) observe(r *machine.Request, rep *machine.Reply, at int64) {
	switch r.Kind {
	case model.Acquire:
		w.meter.Granted(w.now, r.Owner, at+grantedTTL(r, rep))
		if w.tracing() {
			w.trace1(faults.Coordinator, "granted", r.Owner+" fence="+strconv.FormatInt(rep.Fence, 10))
		}
		if w.hasClients {
			w.clientsSee("grant")
		}
	case model.Renew:
		w.meter.Renewed(at + grantedTTL(r, rep))
	case model.Release:
		w.meter.Released(w.now, r.Owner, w.someoneWaiting)
		w.trace1(faults.Coordinator, "released", r.Owner)
		if w.hasClients {
			w.clientsSee("release")
		}
	}
}

// someoneWaiting reports whether a live holder other than except's waits
// for the lease.
func (w *World) someoneWaiting(except string) bool {
	for i := range w.nodes {
		n := &w.nodes[i]
		if n.kind == kindHolder && !n.crashed && n.waiting && n.owner != except {
			return true
		}
	}
	return false
}

// endBeliefs closes the double-belief window still open when the run ends.
func (w *World) endBeliefs() {
	if w.believers >= 2 {
		w.stats.DoubleBelief += w.now - w.dblSince
		w.dblSince = w.now
	}
}

// noteCrash tells the meter holder id crashed: a recovery is timed when it
// held a live lease at the coordinator while another holder waited.
func (w *World) noteCrash(id int32) {
	w.meter.Crashed(w.now, w.nodes[id].owner, w.nodes[coordID].clock.Mono(w.now), w.someoneWaiting)
}

// noteNobodyWaits drops the pending measurements once nobody is left to take
// the lease over: they would time a restart, not a handoff.
func (w *World) noteNobodyWaits() {
	if !w.someoneWaiting("") {
		w.meter.NobodyWaits()
	}
}

// Measured returns how many recoveries and how many handoffs have been
// timed so far (the explorer judges the one whose count grows).
func (w *World) Measured() (recoveries, handoffs int) { return w.meter.Measured() }

// noteDone tells the meter holder id finished its program: a handoff is
// timed when it still held a live lease at the coordinator while another
// waited, since it never released (the article: "不释放会把每次优雅交接拖成完整存活时间的等待",
// not releasing makes every graceful handoff wait a whole TTL).
func (w *World) noteDone(id int32) {
	w.meter.Finished(w.now, w.nodes[id].owner, w.nodes[coordID].clock.Mono(w.now), w.someoneWaiting)
}

// grantedTTL is the TTL the coordinator applied: its reply's when it said.
func grantedTTL(r *machine.Request, rep *machine.Reply) int64 {
	if rep.TTL > 0 {
		return rep.TTL
	}
	return r.TTL
}
