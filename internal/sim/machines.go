package sim

import (
	"github.com/leasecheck/leasecheck/internal/statehash"
	"github.com/leasecheck/leasecheck/machine"
)

// The machines (holders, the reader, the coordinator, the resource) are
// shared between a world and its copies until one of them steps a machine:
// most moves step one machine, so a copy that made one move copied the
// machines of every other node for nothing. A machine is the world's own to
// write when it carries the world's machine epoch (cow, oplog.go); every
// write to a machine goes through holderW, coordW or resW, which copy a
// shared one first.
//
// Each machine's digest is kept beside it (node.mh, World.coordH, resH)
// and reset by the same accessors, so a state's digest re-digests only the
// machines its last move stepped. A write that bypassed the accessors would
// leave a stale digest (and a machine shared with another world): a world
// with VerifyDigests set recomputes every kept digest and fails the run when
// one differs, which the explorer's tests run on every space they explore.

// ownMachines makes every machine the world's own: at setup, before any
// copy exists.
func (w *World) ownMachines() {
	e, _ := w.mcow.own()
	for i := range w.nodes {
		w.nodes[i].mEpoch = e
	}
	w.coordEpoch, w.resEpoch = e, e
}

// holderW returns node n's machine for a step that may change it.
func (w *World) holderW(n *node) machine.Holder {
	return ownMachine(w, &n.m, &n.mEpoch, &n.mh, func(m machine.Holder) machine.Holder {
		return m.(machine.HolderCloner).CloneHolder()
	})
}

// setHolder gives node n a new machine (a restart).
func (w *World) setHolder(n *node, m machine.Holder) {
	n.m, n.mh = m, 0
	n.mEpoch, _ = w.mcow.own()
}

// coordW returns the coordinator for a step that may change it.
func (w *World) coordW() machine.Coordinator {
	return ownMachine(w, &w.coord, &w.coordEpoch, &w.coordH, func(c machine.Coordinator) machine.Coordinator {
		return c.(machine.CoordinatorCloner).CloneCoordinator()
	})
}

// resW returns the resource for a step that may change it.
func (w *World) resW() machine.Resource {
	return ownMachine(w, &w.res, &w.resEpoch, &w.resH, func(r machine.Resource) machine.Resource {
		return r.(machine.ResourceCloner).CloneResource()
	})
}

// ownMachine returns *m for writing: copied first (clone) when it does not
// carry the world's epoch, its kept digest dropped.
func ownMachine[M any](w *World, m *M, epoch, kept *uint64, clone func(M) M) M {
	*kept = 0
	if e, _ := w.mcow.own(); *epoch != e {
		*m = clone(*m)
		*epoch = e
	}
	return *m
}

// machineDigest returns m's digest, kept in *kept until m is written (0:
// not kept).
func (w *World) machineDigest(kept *uint64, m any) uint64 {
	if *kept != 0 && !w.verifyDigests {
		return *kept
	}
	h := &w.mhasher
	h.Reset()
	hashMachine((*machine.Hasher)(h), m, nil)
	d := statehash.Finalize(h.Sum()) | 1 // never 0, which means "not kept"
	if *kept != 0 && *kept != d {
		w.fail("sim: a machine's kept digest is stale (%T written past the copy-on-write accessors): a bug in leasecheck", m)
	}
	*kept = d
	return d
}

// VerifyDigests makes every state digest recompute the machines' kept
// digests and fail the run (Err) when one is stale: the check that every
// write to a machine went through the copy-on-write accessors. Copies keep
// the setting.
func (w *World) VerifyDigests() { w.verifyDigests = true }
