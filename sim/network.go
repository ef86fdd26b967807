package sim

// The network: message slots, loss, delay, duplication and partitions, and
// the servers' at-most-once answering.

import (
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

type dedupeKey struct {
	node, inc int32
	id        uint64
}

func (w *world) alloc() int32 {
	if k := len(w.free); k > 0 {
		m := w.free[k-1]
		w.free = w.free[:k-1]
		return m
	}
	w.msgs = append(w.msgs, envelope{})
	return int32(len(w.msgs) - 1)
}

func (w *world) release(m int32) {
	w.msgs[m] = envelope{}
	w.free = append(w.free, m)
}

// send puts message m on the network: partitions and lost heartbeats drop
// it, the ambient network may lose, delay or duplicate it.
func (w *world) send(m int32) {
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
	if !e.isReply && e.req.Kind == model.Renew && c.dropRenew > 0 {
		w.stats.Dropped++
		w.release(m)
		return
	}
	net := &w.sc.Network
	if net.DropPPM > 0 && w.ch.Int64(0, 999_999, "drop") < net.DropPPM {
		w.stats.Dropped++
		w.release(m)
		return
	}
	w.q.push(event{t: w.now + w.ch.Int64(net.MinDelay, net.MaxDelay, "delay") + c.extraDelay, kind: evDeliver, arg: m})
	if net.DupPPM > 0 && w.ch.Int64(0, 999_999, "dup") < net.DupPPM {
		d := w.alloc()
		w.msgs[d] = w.msgs[m]
		w.stats.Duplicated++
		w.q.push(event{t: w.now + w.ch.Int64(net.MinDelay, net.MaxDelay, "delay") + c.extraDelay, kind: evDeliver, arg: d})
	}
}

func (w *world) deliver(m int32) {
	e := &w.msgs[m]
	n := &w.nodes[e.to]
	if n.crashed || (e.isReply && e.inc != n.inc) {
		w.release(m)
		return
	}
	if n.paused > 0 {
		n.inbox = append(n.inbox, m)
		return
	}
	w.handle(m)
}

// handle processes a delivered message at a running node.
func (w *world) handle(m int32) {
	e := &w.msgs[m]
	switch w.nodes[e.to].kind {
	case kindCoordinator, kindResource:
		w.serve(m)
	default:
		env := *e
		w.release(m)
		w.step(env.to, &env)
	}
}

// serve applies a request at the coordinator or the resource and answers it.
// Duplicates are answered from a cache (at-most-once RPC), which is durable.
func (w *world) serve(m int32) {
	e := &w.msgs[m]
	key := dedupeKey{e.from, e.inc, e.req.ID}
	rep, seen := w.dedupe[key]
	if !seen {
		// The coordinator's lease clock orders every applied operation, also
		// the resource's: at is monotonic in true time for all of them.
		at := w.nodes[coordID].clock.Mono(w.now)
		if e.to == coordID {
			if wu, ok := w.coord.(machine.WallClockUser); ok {
				wu.SetWall(w.nodes[coordID].clock.Wall(w.now))
			}
			rep = w.coord.Apply(&e.req, at)
		} else {
			rep = w.res.Apply(&e.req)
		}
		rep.ID, rep.At = e.req.ID, at
		w.dedupe[key] = rep
		if e.op >= 0 {
			w.ops[e.op].At, w.ops[e.op].HasAt = at, true
		}
		if e.to == coordID && rep.OK {
			w.observe(&e.req, &rep, at)
		}
	}
	e.isReply, e.rep = true, rep
	e.from, e.to = e.to, e.from
	w.send(m)
}
