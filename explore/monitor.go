package explore

import (
	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/impl/memstore"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/runprop"
	"github.com/leasecheck/leasecheck/sim"
)

// monitor is the explorer's cheap per-state judge (a sim.Monitor). It flags
// a state where a property may have just been violated; the full judges
// (checker.Check, runprop.Judge) confirm before anything is reported. Its
// flags are complete: a state whose history a full judge would find
// violated is flagged at that state or earlier on its path, so a
// breadth-first search that judges every flagged state finds the shortest
// violating path.
//
//   - linearizable: it replays every request the servers apply against the
//     reference semantics (memstore, lease.py's), in the order and at the
//     lease-clock reading they were applied. While every answer equals the
//     reference's, that order is a linearization (it respects real time and
//     each process's order, and every outcome is the semantics'), so the
//     history is linearizable; the first answer that differs is flagged.
//     After a difference the full checker may still find another order
//     (ties, unknown outcomes): the path is then judged in full at every
//     later state.
//   - single-writer-per-fence, fence-monotonic: checked on every return of
//     a grant or an accepted write against the operations returned before
//     it was called (the checker's precedence), over-approximately.
//   - stop-on-renew-failure: checked on every write sent, against the same
//     owner's renews that failed or went unanswered before it.
//   - the run properties: exclusive-belief whenever two holders believe at
//     once (while a holder of an older grant runs), recovery and handoff
//     whenever one is timed, renewal whenever a renew is refused or
//     overdue or a process acquires a second time. Only a crash never
//     recovered from shows at the end of a path alone.
type monitor struct {
	spec     *memstore.Store
	specC    machine.Coordinator // spec as a coordinator
	specRes  *memstore.Resource
	diverged bool // an answer differed from the reference's: judge in full
	flags    []string
	measured int
	// what take saw of the beliefs last time: exclusive-belief needs
	// judging only where an overlap may have grown unexcused
	olderStopped bool
	version      int
	believers    int
	// renews sent and not answered yet (liveness-renewal: one unanswered
	// past its timeout is a lost lease)
	pending []int32
}

func newMonitor() *monitor {
	m := &monitor{spec: memstore.New(), specRes: memstore.NewResource()}
	m.specC = machine.ClockedCoordinator(m.spec)
	return m
}

func (m *monitor) flag(p string) {
	for _, f := range m.flags {
		if f == p {
			return
		}
	}
	m.flags = append(m.flags, p)
}

// take returns the flags raised since the last take and clears them.
func (m *monitor) take(w *sim.World) []string {
	// An overlap of beliefs grows unexcused only while a holder of an older
	// grant runs (runprop's exception excuses it while it is stopped), so
	// it is judged whenever two believe, or did at the previous state (the
	// step may have ended the overlap), and one of the older ones runs now
	// or ran then, or the beliefs changed.
	b, older, v := w.Believers()
	if (b >= 2 || m.believers >= 2) && (!older || !m.olderStopped || v != m.version) {
		m.flag(runprop.ExclusiveBelief)
	}
	m.olderStopped, m.version, m.believers = older, v, b
	if n := w.Measured(); n != m.measured {
		m.measured = n
		m.flag(runprop.LivenessRecovery)
	}
	if m.diverged {
		m.flag(checker.Linearizable)
	}
	if len(m.pending) > 0 {
		ops, now := w.Ops(), w.Now()
		timeout := max(w.Scenario().TTL/3, 1) // the shortest a holder may give up after: flagged early, judged in full
		for i := 0; i < len(m.pending); i++ {
			o := &ops[m.pending[i]]
			if o.Returned || now >= o.Call+timeout {
				if !o.Returned {
					m.flag(runprop.LivenessRenewal)
				}
				m.pending = append(m.pending[:i], m.pending[i+1:]...)
				i--
			}
		}
	}
	f := m.flags
	m.flags = nil
	return f
}

func (m *monitor) Clone() sim.Monitor {
	c := *m
	c.spec = m.spec.Snapshot()
	c.specC = machine.ClockedCoordinator(c.spec)
	c.specRes = m.specRes.CloneResource().(*memstore.Resource)
	c.flags = nil
	c.pending = append([]int32(nil), m.pending...)
	return &c
}

func (m *monitor) HashState(h *machine.Hasher) {
	h.Bool(m.diverged)
	if !m.diverged { // once diverged, the reference's state no longer matters
		m.spec.HashState(h)
		m.specRes.HashState(h)
	}
}

// Applied replays req against the reference semantics and flags an answer
// that differs in what the history records (ok, the granted fence, the
// value read).
func (m *monitor) Applied(w *sim.World, resource bool, req *machine.Request, rep *machine.Reply) {
	if m.diverged {
		return
	}
	var want machine.Reply
	if resource {
		want = m.specResource(req)
	} else {
		want = m.specC.Apply(req, rep.At)
	}
	same := want.OK == rep.OK
	switch req.Kind {
	case model.Acquire:
		same = same && (!want.OK || want.Fence == rep.Fence)
	case model.Read:
		same = same && want.HasValue == rep.HasValue && want.Value == rep.Value
	}
	if !same {
		m.diverged = true
		m.flag(checker.Linearizable)
	}
}

// specResource is fenced storage's semantics (DESIGN.md §1): a write is
// accepted iff its fence was granted (1 <= f <= the coordinator's counter)
// and is >= the highest accepted.
func (m *monitor) specResource(req *machine.Request) machine.Reply {
	switch req.Kind {
	case model.Write:
		if req.Fence < 1 || req.Fence > m.spec.Fence(req.Key) || m.specRes.Write(req.Key, req.Fence, req.Value) != nil {
			return machine.Reply{}
		}
		return machine.Reply{OK: true}
	case model.Read:
		v, ok := m.specRes.Read(req.Key)
		return machine.Reply{OK: true, Value: v, HasValue: ok}
	}
	return machine.Reply{}
}

// Called flags a write sent after a renew of the same owner under the same
// fence failed or went unanswered (stop-on-renew-failure).
func (m *monitor) Called(w *sim.World, op int) {
	ops := w.Ops()
	o := &ops[op]
	if o.Kind == model.Renew {
		m.pending = append(m.pending, int32(op))
	}
	if o.Kind != model.Write {
		return
	}
	var latest int64 // the owner's latest grant, for fence-less renews
	for i := 0; i < op; i++ {
		r := &ops[i]
		if r.Owner != o.Owner || r.Key != o.Key {
			continue
		}
		if r.Kind == model.Acquire && r.Returned && r.OK {
			latest = max(latest, r.Fence)
		}
		if r.Kind != model.Renew || r.Returned && r.OK {
			continue
		}
		f := r.Fence
		if f == 0 {
			f = latest
		}
		if f == o.Fence && (r.Process == o.Process || r.Returned && o.Call > r.Return) {
			m.flag(checker.StopOnRenewFailure)
			return
		}
	}
}

// Returned flags a grant whose fence is not above one returned before it
// was called, or an accepted write whose fence is below one returned before
// it, or whose owner was not granted its fence (or shares it with another
// writer).
func (m *monitor) Returned(w *sim.World, op int) {
	ops := w.Ops()
	o := &ops[op]
	if !o.OK {
		if o.Kind == model.Renew {
			m.flag(runprop.LivenessRenewal) // a lost lease, where renewals must keep it
		}
		return
	}
	switch o.Kind {
	case model.Acquire:
		for i := range ops {
			if a := &ops[i]; i != op && a.Kind == model.Acquire && a.Process == o.Process && a.Returned && a.OK {
				m.flag(runprop.LivenessRenewal) // acquired a second time: it had lost the lease
				break
			}
		}
		for i := range ops {
			a := &ops[i]
			if i != op && a.Kind == model.Acquire && a.Returned && a.OK && a.Key == o.Key && a.Return < o.Call && a.Fence >= o.Fence {
				m.flag(checker.FenceMonotonic)
				return
			}
		}
	case model.Write:
		granted := false
		for i := range ops {
			a := &ops[i]
			if i == op || a.Key != o.Key || !a.Returned || !a.OK {
				continue
			}
			switch a.Kind {
			case model.Acquire:
				if a.Fence == o.Fence && a.Owner == o.Owner {
					granted = true
				}
			case model.Write:
				if a.Return < o.Call && a.Fence > o.Fence {
					m.flag(checker.FenceMonotonic)
				}
				if a.Fence == o.Fence && a.Owner != o.Owner {
					m.flag(checker.SingleWriterPerFence)
				}
			}
		}
		if !granted {
			m.flag(checker.SingleWriterPerFence)
		}
	}
}
