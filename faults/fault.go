package faults

import (
	"fmt"
	"slices"
)

// Target names for faults that hit the lease service rather than a holder.
const (
	Coordinator = "coordinator"
	Resource    = "resource"
)

// Targets of the cluster faults (ClusterKinds), resolved when they strike;
// a member may also be named (m1, m2, ...: IsMember).
const (
	Leader   = "leader"
	Follower = "follower"
)

// IsMember reports whether s names a cluster member: "leader", "follower"
// or m1, m2, ...
func IsMember(s string) bool {
	if s == Leader || s == Follower {
		return true
	}
	if len(s) < 2 || s[0] != 'm' || s[1] == '0' {
		return false
	}
	for _, c := range s[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Fault is one injection. Times are simulated milliseconds of true time.
// Which parameters matter depends on Kind (see the Kind constants); the
// others are zero.
type Fault struct {
	Kind     Kind   `json:"kind"`
	Target   string `json:"target"`
	At       int64  `json:"at"`
	Duration int64  `json:"duration,omitempty"`
	Amount   int64  `json:"amount,omitempty"`
	Peer     string `json:"peer,omitempty"`
}

func (f Fault) String() string {
	s := fmt.Sprintf("%s(%s) at=%d", f.Kind, f.Target, f.At)
	if f.Duration != 0 {
		s += fmt.Sprintf(" dur=%d", f.Duration)
	}
	if f.Amount != 0 {
		s += fmt.Sprintf(" amount=%d", f.Amount)
	}
	if f.Peer != "" {
		s += " peer=" + f.Peer
	}
	return s
}

// Plan is a fault plan: faults ordered by At (ties keep their order).
type Plan []Fault

// Sorted returns a copy of p ordered by At, stable.
func (p Plan) Sorted() Plan {
	q := slices.Clone(p)
	slices.SortStableFunc(q, func(a, b Fault) int {
		switch {
		case a.At < b.At:
			return -1
		case a.At > b.At:
			return 1
		}
		return 0
	})
	return q
}

// Counts returns how many faults of each kind p holds.
func (p Plan) Counts() map[Kind]int {
	m := map[Kind]int{}
	for _, f := range p {
		m[f.Kind]++
	}
	return m
}

// Validate checks that every fault is well formed for the given holder names
// and clock-drift bound rhoPPM.
func (p Plan) Validate(holders []string, rhoPPM int64) error {
	isHolder := func(s string) bool { return slices.Contains(holders, s) }
	for i, f := range p {
		bad := func(why string) error { return fmt.Errorf("fault %d (%s): %s", i, f, why) }
		if !f.Kind.valid() {
			return bad("unknown kind")
		}
		if f.At < 0 || f.Duration < 0 {
			return bad("negative time")
		}
		if slices.Contains(ClusterKinds, f.Kind) {
			if !IsMember(f.Target) {
				return bad("target must be a cluster member: leader, follower, m1, m2, ...")
			}
			if f.Duration <= 0 {
				return bad("a cluster fault needs a duration > 0")
			}
			if f.Kind == PeerDelay && f.Amount <= 0 {
				return bad("peer-delay needs an amount > 0")
			}
			continue
		}
		switch f.Kind {
		case ClockOffset, ClockDrift, ClockStep:
			if f.Target != Coordinator && !isHolder(f.Target) {
				return bad("target must be a holder or coordinator")
			}
			if f.Kind == ClockDrift && (f.Amount > rhoPPM || f.Amount < -rhoPPM) {
				return bad(fmt.Sprintf("drift beyond rho=%dppm", rhoPPM))
			}
		case CoordinatorCrash:
			if f.Target != Coordinator {
				return bad("target must be coordinator")
			}
			if f.Duration <= 0 {
				return bad("coordinator must restart (duration > 0)")
			}
		case Freeze:
			if f.Target != Resource && !isHolder(f.Target) {
				return bad("target must be a holder or resource")
			}
		case Partition:
			if !isHolder(f.Target) || (f.Peer != Coordinator && f.Peer != Resource && !IsMember(f.Peer)) {
				return bad("partition is holder to coordinator, resource, or (on a cluster) one member: leader, follower, m1, ...")
			}
		case OwnerReuse:
			if !isHolder(f.Target) || f.Duration <= 0 {
				return bad("owner-reuse needs a holder and a restart delay > 0")
			}
		default:
			if !isHolder(f.Target) {
				return bad("target must be a holder")
			}
		}
		if f.Kind == Delay && f.Amount < 0 {
			return bad("negative delay")
		}
		if slices.Contains(NetworkKinds, f.Kind) {
			if f.Duration <= 0 {
				return bad("a network fault needs a duration > 0")
			}
			if f.Amount < 0 {
				return bad("a negative amount")
			}
			if (f.Kind == RequestDelay || f.Kind == ReplyDelay || f.Kind == Reorder) && f.Amount == 0 {
				return bad(string(f.Kind) + " needs an amount > 0 (ms)")
			}
		}
	}
	return nil
}
