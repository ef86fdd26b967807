package k8ssweep

import (
	"strings"

	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/model"
)

// ZombieWrite is a write the resource accepted from a leader after the
// Lease had moved on to another: what a write guarded only by IsLeader()
// lets through.
type ZombieWrite struct {
	// Write is the write; Grant the acquire of the holder that took over
	// before it; LastRenew the writer's last successful renewal or acquire
	// before that grant.
	Write, Grant, LastRenew *model.Op
	// Paused is the writer's pause that held the write, when one did.
	Paused *model.FaultRecord
	// Stopped is when the writer's OnStoppedLeading came (-1: not before
	// the run ended).
	Stopped int64
}

// FindZombieWrite returns the first zombie write of a history, or nil. It
// reads the history only (a fence-less history's ops, as the Lease store
// and the resource applied them), each Lease's key apart; the checker's
// single-writer-per-fence is what judges it.
func FindZombieWrite(o *campaign.Outcome) *ZombieWrite {
	h := o.History
	grant := map[string]*model.Op{}   // by key
	last := map[[2]string]*model.Op{} // by key and owner
	ops := make([]*model.Op, len(h.Ops))
	for i := range h.Ops {
		ops[i] = &h.Ops[i]
	}
	// In the order the stores applied them.
	byAt := make([]*model.Op, 0, len(ops))
	for _, op := range ops {
		if op.HasAt {
			byAt = append(byAt, op)
		}
	}
	SortByAt(byAt)
	for _, op := range byAt {
		if !op.OK {
			continue
		}
		switch op.Kind {
		case model.Acquire:
			grant[op.Key] = op
			last[[2]string{op.Key, op.Owner}] = op
		case model.Renew:
			last[[2]string{op.Key, op.Owner}] = op
		case model.Write:
			if g := grant[op.Key]; g != nil && g.Owner != op.Owner {
				z := &ZombieWrite{Write: op, Grant: g, LastRenew: last[[2]string{op.Key, op.Owner}], Stopped: -1}
				proc := strings.TrimSuffix(op.Process, "/work")
				// A pause holds the whole candidate, every Lease's part in it.
				node, _, _ := strings.Cut(proc, "@")
				for i := range h.Faults {
					f := &h.Faults[i]
					if f.Kind == "pause" && f.Target == node && f.Start <= op.Call && f.End >= op.Call {
						z.Paused = f
					}
				}
				if o.Sim != nil {
					for _, e := range o.Sim.Trace {
						if e.Node == proc && e.What == "gave-up" && e.T >= op.Call {
							z.Stopped = e.T
							break
						}
					}
				}
				return z
			}
		}
	}
	return nil
}

// SortByAt sorts ops in the order the stores applied them (Op.At).
func SortByAt(ops []*model.Op) {
	for i := 1; i < len(ops); i++ { // insertion sort: stable, and histories are nearly sorted
		for j := i; j > 0 && ops[j].At < ops[j-1].At; j-- {
			ops[j], ops[j-1] = ops[j-1], ops[j]
		}
	}
}
