package sim

// The pairs a run meets (package pairs): each fault against the steps in
// flight when it strikes, the faults struck before it and the workload's
// dimensions. Recorded beside the run, never read by it: they steer
// nothing and are not part of a state's digest.

import (
	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/pairs"
	"github.com/leasecheck/leasecheck/model"
)

// pairState is what a world keeps of its pairs.
type pairState struct {
	set    pairs.Set
	struck uint32 // the fault factors struck so far
	dims   uint8  // the workload dimensions met so far
	// timeout is each node's request timeout (0: none known), for late
	// messages; shared by copies, never written after setup.
	timeout []int64
}

// setupPairs notes the workload dimensions a run has from its start and
// each node's request timeout.
func (w *World) setupPairs() {
	sc := w.sc
	w.pairs.timeout = make([]int64, len(w.nodes))
	for id := range w.nodes {
		n := &w.nodes[id]
		switch n.kind {
		case kindHolder:
			cfg := w.cfgs[n.cfg].WithDefaults()
			w.pairs.timeout[id] = cfg.Timeout
			for _, it := range cfg.Work {
				if it.Writes >= 2 {
					w.meetDim(pairs.MultiWrite)
				}
			}
			if cfg.RenewEvery*4 <= sc.TTL {
				w.meetDim(pairs.ShortRenew)
			}
			if cfg.RenewEvery*2 >= sc.TTL {
				w.meetDim(pairs.LongRenew)
			}
		case kindReader:
			w.pairs.timeout[id] = max(sc.TTL/3, 1)
			w.meetDim(pairs.Reader)
		}
	}
}

func (w *World) addPairs(t *pairs.Set) {
	if w.opts.Pairs != nil {
		w.opts.Pairs.Add(t)
	}
}

// meetDim notes workload dimension d, against every fault struck so far.
func (w *World) meetDim(d pairs.Workload) {
	ps := &w.pairs
	if ps.dims&(1<<d) != 0 {
		return
	}
	ps.dims |= 1 << d
	for f := range pairs.AllFaults() {
		if ps.struck&(1<<f) != 0 {
			ps.set.Workload(pairs.Fault(f), d)
		}
	}
	w.addPairs(&ps.set)
}

// strikePair notes fault factor f, struck now, against the faults struck
// before it and the workload's dimensions met so far.
func (w *World) strikePair(f pairs.Fault) {
	ps := &w.pairs
	for g := range pairs.AllFaults() {
		if ps.struck&(1<<g) != 0 {
			ps.set.Faults(pairs.Fault(g), f)
		}
	}
	for d := pairs.Workload(0); d < 8; d++ {
		if ps.dims&(1<<d) != 0 {
			ps.set.Workload(f, d)
		}
	}
	ps.struck |= 1 << f
}

// faultPairs notes the plan's fault k, striking node id now: against the
// steps in flight to or from it (a holder's requests and answers, or
// every message a server is to apply or has answered), the faults before
// it and the workload.
func (w *World) faultPairs(k faults.Kind, id int32) {
	f, ok := pairs.FaultOf(k)
	if !ok {
		return
	}
	ps := &w.pairs
	server := w.nodes[id].kind == kindCoordinator || w.nodes[id].kind == kindResource
	for i := range w.msgs {
		e := &w.msgs[i]
		if e.req.Kind == 0 {
			continue // a free slot
		}
		client, srv := e.from, e.to
		if e.isReply {
			client, srv = e.to, e.from
		}
		if server && srv == id || !server && client == id {
			ps.set.Step(f, pairs.StepOf(e.req.Kind, e.isReply))
		}
	}
	w.strikePair(f)
	w.addPairs(&ps.set)
}

// messagePair notes a network fault f seen on message e.
func (w *World) messagePair(f pairs.Fault, e *envelope, applied bool) {
	ps := &w.pairs
	ps.set.Step(f, pairs.StepOf(e.req.Kind, applied))
	w.strikePair(f)
	w.addPairs(&ps.set)
}

// lateCheck notes a message delivered more than its sender's request
// timeout after its request was sent.
func (w *World) lateCheck(e *envelope) {
	client := e.from
	if e.isReply {
		client = e.to
	}
	if to := w.pairs.timeout[client]; to > 0 && w.now-e.sentAt > to {
		w.messagePair(pairs.Late, e, e.isReply)
	}
}

// retryCheck notes a holder's request sent while its process's previous
// operation is still unanswered: a retry after an unknown outcome.
func (w *World) retryCheck(n *node, idx int32) {
	if n.kind != kindHolder || w.pairs.dims&(1<<pairs.Retry) != 0 {
		return
	}
	for j := int(idx) - 1; j >= 0; j-- {
		o := w.ops.at(j)
		if o.Process != n.process {
			continue
		}
		if !o.Returned && o.Kind != model.Read {
			w.meetDim(pairs.Retry)
		}
		return
	}
}

// Pairs returns the pairs the run has met so far.
func (w *World) Pairs() pairs.Set { return w.pairs.set }
