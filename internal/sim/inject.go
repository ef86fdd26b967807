package sim

// Fault injection: each fault of the plan applied to its target, its end,
// crashes and restarts, the end of pauses and freezes.

import (
	"fmt"
	"slices"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/faultsupport"
	"github.com/leasecheck/leasecheck/internal/recording"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

func kindIndex(k faults.Kind) int {
	for i, a := range faults.AllKinds {
		if a == k {
			return i
		}
	}
	return len(faults.AllKinds) // Validate rejects unknown kinds
}

func (w *World) count(k faults.Kind, f faults.Fault) {
	w.counts[0][kindIndex(k)]++
	if w.tracing() {
		w.trace1(f.Target, "fault", f.String())
	}
}

// record writes the record of a fault of kind f.Kind that hit node n for
// the history (docs/design.md §9: faults in the history, never in the verdict):
// what it hit, named as the history names it, from start for dur (0: an
// instant, or to the end of the run).
func (w *World) record(n *node, f faults.Fault, start, dur int64, detail string) {
	target := f.Target
	if (n.kind == kindHolder || n.kind == kindReader) && n.process != "" {
		target = n.process
	}
	rec := recording.Fault(f, target, start, dur)
	rec.Detail = detail
	w.faultRecs = append(w.faultRecs, rec)
}

// endStopRecords cuts short, at now, the records of the pauses and freezes
// of n's process that were still running when it crashed: the crash ended
// them, and a record that went on to its planned end would show a stopped
// process that no longer exists (and overlap its restart).
func (w *World) endStopRecords(n *node) {
	for i := range w.faultRecs {
		r := &w.faultRecs[i]
		if r.Target != n.process || (r.Kind != string(faults.Pause) && r.Kind != string(faults.Freeze)) {
			continue
		}
		if r.HasEnd && r.Start <= w.now && r.End > w.now {
			r.End = w.now
			if r.Detail != "" {
				r.Detail += "; "
			}
			r.Detail += fmt.Sprintf("cut short by the crash at t=%d", w.now)
		}
	}
}

// notApplied takes back the count of a fault the target's machine has no
// method for (machine's optional interfaces): it is reported, not counted.
func (w *World) notApplied(f faults.Fault) {
	w.counts[0][kindIndex(f.Kind)]--
	w.counts[1][kindIndex(f.Kind)]++
	if n := len(w.faultRecs); n > 0 {
		w.faultRecs[n-1].Partial = true
		w.faultRecs[n-1].Detail = "not applied: the machine does not implement it"
	}
	if w.tracing() {
		w.trace1(f.Target, "fault-not-applied", f.String()+" (the machine does not implement it)")
	}
}

func (w *World) fault(i int) {
	f := w.plan[i]
	if f.Kind == faults.ClockOffset { // applied in setup
		w.count(f.Kind, f)
		w.record(w.nodeByName(f.Target), f, 0, 0, "")
		return
	}
	if faultsupport.Needs(f.Kind, faultsupport.Simulator) == faultsupport.Never {
		// Reported, not counted: a fault between the servers of a cluster
		// (the simulator has one coordinator), or one of a client's own
		// code path (its context, its release on the way out), which the
		// simulator's holders do not have.
		detail, note := "not applied: a fault of a client's own code, injected in virtual time only (package vclient)", "a client fault: injected in virtual time only"
		if slices.Contains(faults.ClusterKinds, f.Kind) {
			detail, note = "not applied: a fault between the servers of a cluster; the simulator has one coordinator", "a cluster fault: the simulator has one coordinator"
		}
		if slices.Contains(faults.NetworkKinds, f.Kind) {
			detail, note = "not applied: a fault at a client's socket, injected by the real runner's proxy only; the simulator has no sockets", "a network fault: the real runner's proxy only"
		}
		w.counts[1][kindIndex(f.Kind)]++
		w.faultRecs = append(w.faultRecs, model.FaultRecord{Kind: string(f.Kind), Target: f.Target, Start: w.now, Partial: true, Detail: detail})
		if w.tracing() {
			w.trace1(f.Target, "fault-not-applied", f.String()+" ("+note+")")
		}
		return
	}
	id := w.id(f.Target)
	n := w.nodeW(id)
	if n.crashed && f.Kind != faults.CoordinatorCrash {
		return // nothing left to hit
	}
	w.count(f.Kind, f)
	if f.Kind != faults.Pause { // a pause's pairs are noted when it hits (loop.go)
		w.faultPairs(f.Kind, id)
	}
	switch f.Kind {
	case faults.Pause:
		// recorded when it hits (loop.go): at the holder's next write
		n.armed.Arm(w.now, f.Duration)
	case faults.ClockDrift, faults.ClockStep, faults.RenewDeath, faults.DoubleRelease:
		w.record(n, f, w.now, 0, "") // a drift lasts to the end; the others are instants
	default:
		w.record(n, f, w.now, f.Duration, "")
	}
	switch f.Kind {
	case faults.Overrun:
		if _, ok := n.m.(machine.Overrunner); !ok {
			w.notApplied(f)
			return
		}
		w.holderW(n).(machine.Overrunner).Overrun(n.clock.Mono(w.now), f.Duration)
		w.poke(id)
	case faults.ClockDrift:
		n.clock.SetDrift(w.now, f.Amount)
		w.rewake(id)
	case faults.ClockStep:
		n.clock.Step(f.Amount)
	case faults.Freeze:
		n.clock.Freeze(w.now)
		w.openStop(id, "freeze")
		n.paused++
		w.q.push(event{t: w.now + f.Duration, kind: evUnfreeze, node: id, gen: uint64(n.inc)})
	case faults.DropHeartbeats:
		n.dropRenew++
		w.q.push(event{t: w.now + f.Duration, kind: evFaultEnd, arg: int32(i)})
	case faults.RenewDeath:
		if _, ok := n.m.(machine.RenewKiller); !ok {
			w.notApplied(f)
			return
		}
		w.holderW(n).(machine.RenewKiller).KillRenewLoop()
		w.poke(id)
	case faults.Delay:
		n.extraDelay += f.Amount
		w.q.push(event{t: w.now + f.Duration, kind: evFaultEnd, arg: int32(i)})
	case faults.Partition:
		if f.Peer == faults.Resource {
			n.cutRes++
		} else {
			n.cutCoord++
		}
		w.q.push(event{t: w.now + f.Duration, kind: evFaultEnd, arg: int32(i)})
	case faults.Crash, faults.OwnerReuse:
		w.crashHolder(id)
		if f.Duration > 0 {
			w.restarts++
			w.q.push(event{t: w.now + f.Duration, kind: evRestart, arg: int32(i)})
		}
	case faults.CoordinatorCrash:
		if n.crashed {
			return
		}
		n.crashed = true
		w.coordW().Crash()
		w.restarts++
		w.q.push(event{t: w.now + f.Duration, kind: evRestart, arg: int32(i)})
	case faults.DoubleRelease:
		if _, ok := n.m.(machine.DoubleReleaser); !ok {
			w.notApplied(f)
			return
		}
		w.holderW(n).(machine.DoubleReleaser).DoubleRelease(f.Amount)
	}
}

// poke ticks a running holder so a fault's effect on its timers shows.
func (w *World) poke(id int32) {
	n := &w.nodes[id]
	if !n.crashed && n.paused == 0 {
		w.step(id, nil)
	}
}

// rewake re-maps a pending wake-up after the node's clock changed.
func (w *World) rewake(id int32) {
	n := &w.nodes[id]
	if (n.kind == kindHolder || n.kind == kindReader) && !n.crashed && n.wakeLocal != machine.Never {
		w.scheduleLocal(id, n.wakeLocal)
	}
}

func (w *World) faultEnd(i int) {
	f := w.plan[i]
	n := w.nodeByName(f.Target)
	switch f.Kind {
	case faults.DropHeartbeats:
		n.dropRenew--
	case faults.Delay:
		n.extraDelay -= f.Amount
	case faults.Partition:
		if f.Peer == faults.Resource {
			n.cutRes--
		} else {
			n.cutCoord--
		}
	}
}

func (w *World) crashHolder(id int32) {
	w.noteCrash(id)
	n := w.nodeW(id)
	if n.believes {
		w.setBelief(id, false, 0)
	}
	w.trace1(n.process, "crashed", "")
	if n.paused > 0 {
		w.endStopRecords(n)
	}
	n.crashed = true
	w.closeStop(id, false)
	n.freezes = min(n.freezes, 1)
	w.closeStop(id, true)
	n.clock.Thaw(w.now)
	n.paused = 0
	n.armed.Disarm()
	n.gen++
	for _, m := range n.inbox {
		w.release(m)
	}
	for _, m := range n.held {
		w.release(m)
	}
	n.inbox, n.held = nil, nil
	n.waiting = false
	w.noteNobodyWaits()
}

func (w *World) restart(i int) {
	f := w.plan[i]
	w.restarts--
	id := w.id(f.Target)
	n := w.nodeW(id)
	if f.Kind == faults.CoordinatorCrash {
		n.crashed = false
		w.trace1(n.name, "restarted", "")
		return
	}
	n.inc++
	n.process = faultsupport.Incarnation(n.name, int(n.nextInc))
	n.nextInc++
	if !faultsupport.KeepsOwner(f.Kind) {
		n.owner = n.process
	}
	cfg := w.cfgs[n.cfg]
	cfg.Owner, cfg.Name = n.owner, n.process
	w.setHolder(n, w.opts.NewHolder(cfg))
	n.crashed, n.done, n.waiting = false, false, false
	if w.tracing() {
		w.trace1(n.process, "restarted", "owner="+n.owner)
	}
	w.schedule(id, w.now)
}

// resume ends a pause or a freeze: buffered sends leave, buffered messages
// are handled, the machine gets a tick.
func (w *World) resume(e event) {
	n := w.nodeW(e.node)
	if e.kind == evUnfreeze {
		if uint64(n.inc) != e.gen {
			// The freeze ended with the incarnation it stopped (a crash
			// unfreezes the node's clock): it must not thaw, or close the
			// stop span of, a freeze of the next one (found by run --seeds
			// 1000000: seed 907898).
			return
		}
		n.clock.Unfreeze(w.now)
		w.closeStop(e.node, true)
	}
	if n.crashed || uint64(n.inc) != e.gen || n.paused == 0 {
		return
	}
	if e.kind == evResume {
		w.closeStop(e.node, false)
	}
	n.paused--
	if n.paused > 0 {
		return
	}
	w.trace1(n.name, "resumed", "")
	held := n.held
	n.held = nil
	for _, m := range held {
		w.send(m)
	}
	inbox := n.inbox
	n.inbox = nil
	for _, m := range inbox {
		if n.crashed || n.paused > 0 {
			n.inbox = append(n.inbox, m)
			continue
		}
		w.handle(m)
	}
	if n.kind == kindHolder || n.kind == kindReader {
		if !n.crashed && n.paused == 0 {
			w.step(e.node, nil)
		}
	}
}

// canStrike reports whether fault candidate f would do anything now: its
// target is up and (for a holder) not done with its program.
func (w *World) canStrike(f *faults.Fault) bool {
	n := &w.nodes[w.id(f.Target)]
	switch n.kind {
	case kindHolder:
		return !n.crashed && !n.done
	case kindCoordinator:
		return !n.crashed
	}
	return true
}

// strike injects fault candidate i at the current instant (a MoveFault): it
// joins the plan, so its end and restart find it, and the trace and the
// counts show it like a planned fault.
func (w *World) strike(i int) {
	f := w.candidates[i]
	f.At = w.now
	w.faultsLeft--
	// Clip: never write into the scenario's plan or a copy's (state.go).
	w.plan = append(slices.Clip(w.plan), f)
	w.fault(len(w.plan) - 1)
}

// Plan returns the faults of the run so far: the scenario's, then those its
// moves struck, with the instant each struck.
func (w *World) Plan() faults.Plan { return w.plan }
