package sim

// The event loop: events in (time, order) order, wake-ups mapped through
// each node's clock, and one step of a holder machine.

import (
	"fmt"

	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/scenario"
)

func (w *world) loop() {
	maxEv := w.sc.MaxEvents
	if maxEv == 0 {
		maxEv = scenario.DefaultMaxEvents
	}
	w.hash = 14695981039346656037
	for len(w.q.ev) > 0 {
		if w.stats.Events >= maxEv {
			w.stats.Truncated = true
			break
		}
		e := w.q.pop()
		if e.t > w.sc.Horizon {
			break
		}
		w.now = e.t
		w.stats.Events++
		w.mix(e.t, int64(e.kind), int64(e.node), int64(e.arg))
		switch e.kind {
		case evDeliver:
			w.deliver(e.arg)
		case evWake:
			n := &w.nodes[e.node]
			if e.gen != n.gen || n.crashed || n.paused > 0 {
				continue
			}
			w.step(e.node, nil)
		case evFault:
			w.fault(int(e.arg))
		case evFaultEnd:
			w.faultEnd(int(e.arg))
		case evResume, evUnfreeze:
			w.resume(e)
		case evRestart:
			w.restart(int(e.arg))
		}
		if w.allDone() {
			break
		}
	}
	w.stats.End = w.now
}

func (w *world) allDone() bool {
	if w.restarts > 0 {
		return false
	}
	for i := range w.nodes {
		n := &w.nodes[i]
		if n.kind == kindHolder && !n.done && !n.crashed {
			return false
		}
	}
	return true
}

// schedule arranges a wake-up at true time t.
func (w *world) schedule(id int32, t int64) {
	n := &w.nodes[id]
	n.gen++
	w.q.push(event{t: t, kind: evWake, node: id, gen: n.gen})
}

// scheduleLocal arranges a wake-up when the node's clock reads local.
func (w *world) scheduleLocal(id int32, local int64) {
	n := &w.nodes[id]
	n.wakeLocal = local
	if local == machine.Never {
		n.gen++
		return
	}
	t := n.clock.When(local, w.now)
	if t < 0 { // frozen: rescheduled at unfreeze
		n.gen++
		return
	}
	w.schedule(id, t)
}

// step runs a client machine on a reply (env != nil) or a tick.
func (w *world) step(id int32, env *envelope) {
	n := &w.nodes[id]
	local := n.clock.Mono(w.now)
	if wu, ok := n.m.(machine.WallClockUser); ok {
		wu.SetWall(n.clock.Wall(w.now))
	}
	if env != nil {
		if n.m.Receive(local, env.rep) {
			w.recordReturn(env.op, &env.rep)
		}
	} else {
		n.m.Tick(local)
	}
	rd := n.m.Ready()
	send, wake := rd.Send, rd.WakeAt
	if n.kind == kindHolder {
		n.waiting, n.done = rd.Waiting, rd.Done
		if rd.Believes != n.believes || (rd.Believes && rd.Fence != n.fence) {
			w.setBelief(id, rd.Believes, rd.Fence)
		}
	}
	// The pause hits at the holder's next write, between the re-check and the
	// send: the article's GC pause, which turns a checked write into a
	// zombie's. A holder that does not write within a TTL is paused at
	// whatever it does next.
	var pause int64
	if n.armed > 0 && (sendsWrite(send) || w.now >= n.armedAt+w.sc.TTL) {
		pause, n.armed = n.armed, 0
	}
	for i := range send {
		m := w.newRequest(id, &send[i])
		if pause > 0 {
			n.held = append(n.held, m)
		} else {
			w.send(m)
		}
	}
	if wake != machine.Never && wake <= local && env == nil {
		wake = local + 1 // guarantee progress
	}
	w.scheduleLocal(id, wake)
	if pause > 0 {
		w.trace1(n.name, "paused", fmt.Sprintf("for %dms", pause))
		n.paused++
		w.q.push(event{t: w.now + pause, kind: evResume, node: id, gen: uint64(n.inc)})
	}
}

func sendsWrite(send []machine.Request) bool {
	for i := range send {
		if send[i].Kind == model.Write {
			return true
		}
	}
	return false
}
