package sim

// Liveness bookkeeping: who believes it holds the lease, the coordinator's
// view of the lease, recovery and handoff measurements.

import (
	"strconv"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

func (w *world) setBelief(id int32, b bool, fence int64) {
	n := &w.nodes[id]
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
	n.believes, n.fence = b, fence
	if b {
		w.trace1(n.process, "believes", "fence="+strconv.FormatInt(fence, 10))
	} else {
		w.trace1(n.process, "gave-up", "")
	}
}

// observe follows the coordinator's lease for the liveness measurements.
func (w *world) observe(r *machine.Request, rep *machine.Reply, at int64) {
	switch r.Kind {
	case model.Acquire:
		w.leaseOwner, w.leaseExpiry = r.Owner, at+r.TTL
		for _, t := range w.pendCrash {
			w.stats.Recoveries = append(w.stats.Recoveries, w.now-t)
		}
		for _, t := range w.pendRelease {
			w.stats.Handoffs = append(w.stats.Handoffs, w.now-t)
		}
		w.pendCrash, w.pendRelease = w.pendCrash[:0], w.pendRelease[:0]
		w.trace1(faults.Coordinator, "granted", r.Owner+" fence="+strconv.FormatInt(rep.Fence, 10))
	case model.Renew:
		w.leaseExpiry = at + r.TTL
	case model.Release:
		w.leaseOwner = ""
		w.trace1(faults.Coordinator, "released", r.Owner)
		if w.someoneWaiting(r.Owner) {
			w.pendRelease = append(w.pendRelease, w.now)
		}
	}
}

func (w *world) someoneWaiting(except string) bool {
	for i := range w.nodes {
		n := &w.nodes[i]
		if n.kind == kindHolder && !n.crashed && n.waiting && n.owner != except {
			return true
		}
	}
	return false
}

// endBeliefs closes the double-belief window still open when the run ends.
func (w *world) endBeliefs() {
	if w.believers >= 2 {
		w.stats.DoubleBelief += w.now - w.dblSince
	}
}

// noteCrash starts a recovery measurement when the crashing holder id held
// a live lease while another holder waited.
func (w *world) noteCrash(id int32) {
	n := &w.nodes[id]
	if n.owner == w.leaseOwner && w.nodes[coordID].clock.Mono(w.now) < w.leaseExpiry && w.someoneWaiting(n.owner) {
		w.pendCrash = append(w.pendCrash, w.now)
	}
}

// noteNobodyWaits drops the pending measurements once nobody is left to take
// the lease over: they would time a restart, not a handoff.
func (w *world) noteNobodyWaits() {
	if !w.someoneWaiting("") {
		w.pendCrash, w.pendRelease = w.pendCrash[:0], w.pendRelease[:0]
	}
}
