package sim

// The network: message slots, loss, delay, duplication and partitions, and
// the servers' at-most-once answering.

import (
	"github.com/leasecheck/leasecheck/internal/faultsupport"
	"github.com/leasecheck/leasecheck/internal/pairs"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

type dedupeKey struct {
	node, inc int32
	id        uint64
}

func (w *World) alloc() int32 {
	if k := len(w.free); k > 0 {
		m := w.free[k-1]
		w.free = w.free[:k-1]
		return m
	}
	w.msgs = append(w.msgs, envelope{})
	return int32(len(w.msgs) - 1)
}

func (w *World) release(m int32) {
	w.msgs[m] = envelope{}
	w.free = append(w.free, m)
}

// The network's choice points. A seeded run draws them from its PRNG (in
// the order and ranges it always has, so seeds replay); an enumerable run
// asks its Picker, alternative 0 being the default — the shortest delay,
// delivered, not duplicated — while its budget of deviations lasts
// (scenario.Space.Deviations), and takes the default after.

func (w *World) chooseDelay() int64 {
	net := &w.sc.Network
	if w.pick != nil {
		if net.MaxDelay <= net.MinDelay || w.devLeft <= 0 {
			return net.MinDelay
		}
		v := w.pick.Pick(int(net.MaxDelay-net.MinDelay+1), "delay")
		if v != 0 {
			w.devLeft--
		}
		return net.MinDelay + int64(v)
	}
	return w.ch.Int64(net.MinDelay, net.MaxDelay, "delay")
}

func (w *World) chooseLoss(ppm int64, label string) bool {
	if ppm <= 0 {
		return false
	}
	if w.pick != nil {
		if w.devLeft <= 0 {
			return false
		}
		v := w.pick.Pick(2, label)
		if v != 0 {
			w.devLeft--
		}
		return v == 1
	}
	return w.ch.Int64(0, 999_999, label) < ppm
}

// send puts message m on the network: partitions and lost heartbeats drop
// it, the ambient network may lose, delay or duplicate it.
func (w *World) send(m int32) {
	e := &w.msgs[m]
	cl, server := e.from, e.to
	if e.isReply {
		cl, server = e.to, e.from
	}
	c := &w.nodes[cl]
	if (server == coordID && c.cutCoord > 0) || (server == resID && c.cutRes > 0) {
		w.stats.Dropped++
		w.release(m)
		return
	}
	if !e.isReply && c.dropRenew > 0 && faultsupport.LostToDropHeartbeats(e.req.Kind) {
		w.stats.Dropped++
		w.release(m)
		return
	}
	net := &w.sc.Network
	if w.chooseLoss(net.DropPPM, "drop") {
		w.messagePair(pairs.Lost, e, e.isReply)
		w.stats.Dropped++
		w.release(m)
		return
	}
	d := w.chooseDelay() + c.extraDelay
	if !e.isReply {
		e.leg = d
	} else if d != e.leg {
		w.messagePair(pairs.Uneven, e, d > e.leg)
	}
	w.q.push(event{t: w.now + d, kind: evDeliver, arg: m})
	if w.chooseLoss(net.DupPPM, "dup") {
		d := w.alloc()
		w.msgs[m].dup, w.msgs[m].h = true, 0
		w.msgs[d] = w.msgs[m]
		w.stats.Duplicated++
		w.q.push(event{t: w.now + w.chooseDelay() + c.extraDelay, kind: evDeliver, arg: d})
	}
}

func (w *World) deliver(m int32) {
	e := &w.msgs[m]
	n := &w.nodes[e.to]
	if n.crashed || (e.isReply && e.inc != n.inc) {
		w.release(m)
		return
	}
	w.lateCheck(e)
	if n.paused > 0 {
		n.inbox = append(n.inbox, m)
		return
	}
	w.handle(m)
}

// handle processes a delivered message at a running node.
func (w *World) handle(m int32) {
	e := &w.msgs[m]
	switch w.nodes[e.to].kind {
	case kindCoordinator, kindResource:
		w.serve(m)
	case kindClient:
		env := *e
		w.release(m)
		w.clientReceive(env.to, &env)
	default:
		env := *e
		w.release(m)
		w.step(env.to, &env)
	}
}

// serve applies a request at the coordinator or the resource and answers it.
// Duplicates are answered from a cache (at-most-once RPC), which is durable;
// only requests the network duplicated are cached (no client reuses an ID
// within an incarnation).
func (w *World) serve(m int32) {
	e := &w.msgs[m]
	key := dedupeKey{e.from, e.inc, e.req.ID}
	// The answer is made in the envelope that carries it back (a local
	// passed to the monitor by pointer escaped: an allocation a request).
	rep, seen := &e.rep, false
	*rep = machine.Reply{}
	if e.dup {
		*rep, seen = w.dedupe[key]
	}
	if !seen {
		// The coordinator's lease clock orders every applied operation, also
		// the resource's: at is monotonic in true time for all of them.
		at := w.nodes[coordID].clock.Mono(w.now)
		if e.to == coordID {
			coord := w.coordW()
			if wu, ok := coord.(machine.WallClockUser); ok {
				wu.SetWall(w.nodes[coordID].clock.Wall(w.now))
			}
			*rep = coord.Apply(&e.req, at)
		} else {
			*rep = w.resW().Apply(&e.req)
		}
		rep.ID, rep.At = e.req.ID, at
		if e.dup {
			if w.dedupe == nil {
				w.dedupe = map[dedupeKey]machine.Reply{}
			}
			w.dedupe[key] = *rep
			w.dedupeSum += hashDedupe(key, rep, nil)
		}
		if e.op >= 0 {
			w.setAt(e.op, at)
		}
		if rep.OK {
			switch {
			case e.to == coordID && e.req.Kind == model.Acquire:
				w.granted = max(w.granted, rep.Fence)
			case e.to == resID && e.req.Kind == model.Write:
				w.resHighest = max(w.resHighest, e.req.Fence)
			}
		}
		if w.mon != nil {
			w.mon.Applied(w, e.to == resID, &e.req, rep)
		}
		if e.to == coordID && rep.OK {
			w.observe(&e.req, rep, at)
		}
	}
	e.isReply, e.h = true, 0
	e.from, e.to = e.to, e.from
	w.send(m)
}

// ChoiceFree reports whether no move of an enumerable run can meet a
// choice point any more (its deviations are spent, or its network has a
// single delay and loses and duplicates nothing): each move then has one
// outcome.
func (w *World) ChoiceFree() bool {
	net := &w.sc.Network
	return w.pick != nil && (w.devLeft <= 0 || net.MaxDelay <= net.MinDelay && net.DropPPM <= 0 && net.DupPPM <= 0)
}
