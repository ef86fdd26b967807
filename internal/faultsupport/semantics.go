package faultsupport

import (
	"strconv"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

// What a fault does, where the drivers decide it alike: when a fault with
// a duration is in force, where a pause strikes, which requests a
// drop-heartbeats loses, what a restarted process is called and under
// which owner it comes back. What the drivers do about it — an event in
// the simulator's queue, a proxy's blackhole, a goroutine held in a
// synctest bubble — stays theirs.

// During reports whether fault f, one with a duration (a partition, a
// delay, a coordinator crash, a drop-heartbeats), is in force at true time
// t: from its At, for Duration, the end excluded.
func During(f faults.Fault, t int64) bool { return t >= f.At && t < f.At+f.Duration }

// LostToDropHeartbeats reports whether a drop-heartbeats in force loses a
// request of kind k: it loses the holder's renewals and nothing else (an
// acquire, a release, a write go through).
func LostToDropHeartbeats(k model.Kind) bool { return k == model.Renew }

// SendsWrite reports whether a step's sends hold a write to the resource:
// the moment a pause strikes.
func SendsWrite(send []machine.Request) bool {
	for i := range send {
		if send[i].Kind == model.Write {
			return true
		}
	}
	return false
}

// ArmedPause is the pauses dealt to a process and not struck yet. A pause
// strikes at the process's next step that sends a write, between its
// re-check and its send (the GC pause that turns a checked write into a
// zombie's); a process that writes nothing within a TTL of the first
// pause's arming is paused at whatever step it takes next. Pauses dealt
// before one strikes add up to one stop. It is two words, copied with the
// simulator's world.
type ArmedPause struct {
	// Total is the length of the stop to come; 0 when none is armed.
	Total int64
	// Since is when the first of them was armed.
	Since int64
}

// Arm deals a pause of d at now.
func (a *ArmedPause) Arm(now, d int64) {
	if a.Total == 0 {
		a.Since = now
	}
	a.Total += d
}

// Strike returns the length of the stop that strikes at a step taken at
// now that sends send, ttl after the arming at the latest, and disarms;
// 0 when none strikes.
func (a *ArmedPause) Strike(now, ttl int64, send []machine.Request) int64 {
	if a.Total == 0 || !SendsWrite(send) && now < a.Since+ttl {
		return 0
	}
	d := a.Total
	a.Total = 0
	return d
}

// Disarm drops the pauses not struck yet: a crash ends the process they
// were to stop.
func (a *ArmedPause) Disarm() { a.Total = 0 }

// Incarnation is the history's name of node's k-th incarnation: the
// node's own name for the first, node#k for each restart after it.
func Incarnation(node string, k int) string {
	if k <= 1 {
		return node
	}
	return node + "#" + strconv.Itoa(k)
}

// KeepsOwner reports whether a process restarted after a fault of kind k
// comes back under its dead incarnation's owner name (owner-reuse; a
// shutdown, as a pod restarted in place keeps its name), rather than
// under its new incarnation's name (a crash).
func KeepsOwner(k faults.Kind) bool { return k == faults.OwnerReuse || k == faults.Shutdown }
