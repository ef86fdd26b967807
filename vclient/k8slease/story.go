package k8slease

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/leasecheck/leasecheck/campaign"
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
// and the resource applied them); the checker's single-writer-per-fence
// is what judges it.
func FindZombieWrite(o *campaign.Outcome) *ZombieWrite {
	h := o.History
	var grant *model.Op
	last := map[string]*model.Op{}
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
	sortByAt(byAt)
	for _, op := range byAt {
		if !op.OK {
			continue
		}
		switch op.Kind {
		case model.Acquire:
			grant = op
			last[op.Owner] = op
		case model.Renew:
			last[op.Owner] = op
		case model.Write:
			if grant != nil && grant.Owner != op.Owner {
				z := &ZombieWrite{Write: op, Grant: grant, LastRenew: last[op.Owner], Stopped: -1}
				proc := strings.TrimSuffix(op.Process, "/work")
				for i := range h.Faults {
					f := &h.Faults[i]
					if f.Kind == "pause" && f.Target == proc && f.Start <= op.Call && f.End >= op.Call {
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

func sortByAt(ops []*model.Op) {
	for i := 1; i < len(ops); i++ { // insertion sort: stable, and histories are nearly sorted
		for j := i; j > 0 && ops[j].At < ops[j-1].At; j-- {
			ops[j], ops[j-1] = ops[j-1], ops[j]
		}
	}
}

func secs(ms int64) string {
	if ms%1000 == 0 {
		return fmt.Sprintf("%ds", ms/1000)
	}
	return fmt.Sprintf("%gs", float64(ms)/1000)
}

// WriteStory writes a saved failure's account in the terms a Kubernetes
// user knows: LeaseDuration, RenewDeadline, RetryPeriod, IsLeader,
// OnStoppedLeading, leaseTransitions. It is appended to the story campaign
// saves (AppendStory).
func WriteStory(w io.Writer, o *campaign.Outcome) {
	sc := o.Scenario
	p := sc.Holders[0]
	rd, rp := p.Timeout, p.RenewEvery
	if rd <= 0 {
		rd = sc.TTL * 2 / 3
	}
	if rp <= 0 {
		rp = sc.TTL * 2 / 15
	}
	fmt.Fprintf(w, "\n## In Kubernetes terms\n\n")
	fmt.Fprintf(w, "%d candidates (%s) ran client-go's `LeaderElector`, unmodified, on one `Lease` (`resourcelock.LeaseLock`) with "+
		"`LeaseDuration=%s`, `RenewDeadline=%s`, `RetryPeriod=%s`; the leader's work wrote to a separate store, each write guarded by `IsLeader()`",
		len(sc.Holders), strings.Join(sc.Names(), ", "), secs(sc.TTL), secs(rd), secs(rp))
	if sc.Implementation == Fenced {
		fmt.Fprintf(w, " and carrying the `resourceVersion` of the Lease update that made the writer leader, checked by the store")
	}
	fmt.Fprintf(w, ". Implementation `%s`.\n\n", sc.Implementation)
	z := FindZombieWrite(o)
	if z == nil {
		fmt.Fprintf(w, "No write reached the store from a leader the Lease had moved on from; see the violations above.\n")
		return
	}
	who := z.Write.Owner
	if z.LastRenew != nil {
		fmt.Fprintf(w, "%s last renewed its Lease at t=%dms (the API server applied the update then; line %d). ", who, z.LastRenew.At, z.LastRenew.Line)
	}
	if z.Paused != nil {
		// The work loop checks IsLeader() half a millisecond before the
		// whole millisecond the pause is recorded at (elector.go's between),
		// so the story gives the pause's instant, not the check's.
		fmt.Fprintf(w, "%s checked `IsLeader()` — true — and at t=%dms, before its write went out, was paused for %s "+
			"(a stop-the-world GC pause, a CPU-throttled or frozen container). Nothing of client-go's could run for it meanwhile: "+
			"`RenewDeadline` bounds how long the elector keeps retrying a renewal, not how long a process goes without looking. ",
			who, z.Paused.Start, secs(z.Paused.End-z.Paused.Start))
	}
	fmt.Fprintf(w, "The other candidates saw the Lease stop changing and, `LeaseDuration` (%s) later, %s took it over at t=%dms "+
		"(`holderIdentity` %s, `leaseTransitions` + 1; line %d). ", secs(sc.TTL), z.Grant.Owner, z.Grant.At, z.Grant.Owner, z.Grant.Line)
	fmt.Fprintf(w, "%s's write %q reached the store at t=%dms and was accepted (line %d): a write from a leader the Lease had moved on from, "+
		"after the Lease was granted to %s — a zombie write. ", who, z.Write.Value, z.Write.At, z.Write.Line, z.Grant.Owner)
	switch {
	case z.Stopped >= 0 && z.Stopped <= z.Write.Call:
		fmt.Fprintf(w, "%s's `OnStoppedLeading` came at t=%dms, as it resumed and the write went out: too late to stop it.", who, z.Stopped)
	case z.Stopped >= 0:
		fmt.Fprintf(w, "%s's `OnStoppedLeading` came only at t=%dms, after the write.", who, z.Stopped)
	default:
		fmt.Fprintf(w, "%s's `OnStoppedLeading` never came before the run ended.", who)
	}
	fmt.Fprintf(w, "\n\nclient-go's own documentation says it: leader election does not fence. Neither a shorter `RenewDeadline` nor a "+
		"longer `LeaseDuration` closes this window — a pause longer than `LeaseDuration` minus the time since the last renewal "+
		"always opens it. What does: a token the store checks. The same elector with every write carrying the `resourceVersion` "+
		"of the update that made its writer leader (implementation `%s`) has the store refuse this write.\n", Fenced)
	fmt.Fprintf(w, "\nTo keep it: a virtual-time scenario is not the simulator's, so campaign's `testdata/regressions/` cannot replay it; "+
		"put it in `vclient/k8slease/testdata/regressions/`, where `go test ./vclient/k8slease -run TestRegressions` replays every scenario "+
		"and fails unless exactly its `expect` is violated and its saved history is recorded again.\n")
}

// AppendStory appends WriteStory to a saved failure's Markdown story.
func AppendStory(s *campaign.Saved) error {
	if s == nil || s.Story == "" {
		return nil
	}
	f, err := os.OpenFile(s.Story, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	WriteStory(f, s.Outcome)
	return f.Close()
}

// ForeignRelease is a release the Lease store applied from a candidate
// that did not hold the Lease: it cleared another's holderIdentity.
type ForeignRelease struct {
	// Release is the release; Victim the grant of the holder it cleared;
	// LastRenew the releaser's last successful renewal or acquire before
	// Victim; Next the grant that followed the release (nil: none).
	Release, Victim, LastRenew, Next *model.Op
	// VictimWrites are the victim's writes the resource accepted after
	// Next was applied, while another held the Lease.
	VictimWrites []*model.Op
	// Paused is the releaser's pause that covered Victim's grant, if any.
	Paused *model.FaultRecord
	// Read is the releaser's own account of its release (its trace line,
	// from the Elector: what Lock.Get read, what IsLeader() said), "" when
	// it left none.
	Read string
}

// FindForeignRelease returns the first release of another's Lease in a
// history, or nil: the ops in the order the store applied them.
func FindForeignRelease(o *campaign.Outcome) *ForeignRelease {
	h := o.History
	var byAt []*model.Op
	for i := range h.Ops {
		if h.Ops[i].HasAt && h.Ops[i].OK {
			byAt = append(byAt, &h.Ops[i])
		}
	}
	sortByAt(byAt)
	var holder *model.Op
	last := map[string]*model.Op{}
	var fr *ForeignRelease
	for _, op := range byAt {
		if fr != nil {
			switch {
			case fr.Next == nil && op.Kind == model.Acquire:
				fr.Next = op
			case fr.Next != nil && op.Kind == model.Acquire:
				return fr
			case fr.Next != nil && op.Kind == model.Write && op.Owner == fr.Victim.Owner && op.Owner != fr.Next.Owner:
				fr.VictimWrites = append(fr.VictimWrites, op)
			}
			continue
		}
		switch op.Kind {
		case model.Acquire:
			holder = op
			last[op.Owner] = op
		case model.Renew:
			last[op.Owner] = op
		case model.Release:
			if holder != nil && holder.Owner != op.Owner {
				fr = &ForeignRelease{Release: op, Victim: holder, LastRenew: last[op.Owner]}
				for i := range h.Faults {
					f := &h.Faults[i]
					if f.Kind == "pause" && f.Target == op.Process && f.Start <= holder.At && f.End >= holder.At {
						fr.Paused = f
					}
				}
				if o.Sim != nil {
					for _, e := range o.Sim.Trace {
						if e.Node == op.Process && e.What == "releases" && e.T <= op.At && e.T >= op.Call {
							fr.Read = e.Detail
						}
					}
				}
			}
			holder = nil
		}
	}
	return fr
}
