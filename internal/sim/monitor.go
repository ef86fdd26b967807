package sim

import "github.com/leasecheck/leasecheck/machine"

// Monitor watches a run as it happens: the explorer's cheap per-state
// property monitors (package explore) see each request a server applies and
// each history operation as it is called and as it returns, and may read the
// World (Ops, Beliefs, Stops, Now). The world calls it synchronously, so
// it must not step the world. A Monitor is part of an explored state: Clone
// copies it with the world (the copy and the original then evolve apart),
// and HashState digests whatever it keeps that a later verdict depends on.
type Monitor interface {
	// Applied: a server applied req and answers rep (rep.At is its lease
	// clock); resource tells the fenced resource from the coordinator. A
	// duplicate answered from the at-most-once cache is not applied again.
	Applied(w *World, resource bool, req *machine.Request, rep *machine.Reply)
	// Called: history operation op (an index into Ops) was just sent.
	Called(w *World, op int)
	// Returned: operation op just got its answer.
	Returned(w *World, op int)
	Clone() Monitor
	HashState(h *machine.Hasher)
}

// Monitor returns the run's monitor (nil without one).
func (w *World) Monitor() Monitor { return w.mon }
