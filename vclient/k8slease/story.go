package k8slease

import (
	"fmt"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/k8ssweep"
	"github.com/leasecheck/leasecheck/model"
)

func secs(ms int64) string {
	if ms%1000 == 0 {
		return fmt.Sprintf("%ds", ms/1000)
	}
	return fmt.Sprintf("%gs", float64(ms)/1000)
}

// electorNotes is the account of a failure of this package's own elector
// (Target's implementations) in Kubernetes terms: what ran, the zombie
// write or the release of another's Lease it finds, and what closes it.
func electorNotes(o *campaign.Outcome) *campaign.DomainNotes {
	sc := o.Scenario
	rd, rp := storyTiming(o)
	v := voice{
		intro: fmt.Sprintf("%d candidates (%s) ran client-go's `LeaderElector`, unmodified, on one `Lease` (`resourcelock.LeaseLock`) with "+
			"`LeaseDuration=%s`, `RenewDeadline=%s`, `RetryPeriod=%s`; the leader's work wrote to a separate store, each write guarded by `IsLeader()`",
			len(sc.Holders), strings.Join(sc.Names(), ", "), secs(sc.TTL), secs(rd), secs(rp)),
		guarded: true,
		stopped: "`OnStoppedLeading`",
		fix: fmt.Sprintf("The same elector with every write carrying the `resourceVersion` "+
			"of the update that made its writer leader (implementation `%s`) has the store refuse this write.", k8ssweep.Fenced),
		keep: "A virtual-time scenario is not the simulator's, so campaign's `testdata/regressions/` cannot replay it: " +
			"put it in `vclient/k8slease/testdata/regressions/`, where `go test ./vclient/k8slease -run TestRegressions` replays every scenario " +
			"and fails unless exactly its `expect` is violated and its saved history is recorded again.",
	}
	if sc.Implementation == k8ssweep.Fenced {
		v.intro += " and carrying the `resourceVersion` of the Lease update that made the writer leader, checked by the store"
	}
	if isFenced(sc.Implementation) {
		v.fix = "Its writes were fenced already: see the violations above for what the fence did not cover."
	}
	if releases(sc.Implementation) {
		v.intro += "; `ReleaseOnCancel: true`"
	}
	v.intro += fmt.Sprintf(". Implementation `%s`.", sc.Implementation)
	if releases(sc.Implementation) {
		if fr := findForeignRelease(o); fr != nil {
			return releaseNotes(o, fr, v)
		}
	}
	return zombieNotes(o, v)
}

// storyTiming is the RenewDeadline and RetryPeriod the candidates ran with
// (Parameters' defaults where the scenario leaves them out).
func storyTiming(o *campaign.Outcome) (rd, rp int64) {
	sc := o.Scenario
	p := sc.Holders[0]
	rd, rp = p.Timeout, p.RenewEvery
	if rd <= 0 {
		rd = sc.TTL * 2 / 3
	}
	if rp <= 0 {
		rp = sc.TTL * 2 / 15
	}
	return rd, rp
}

// voice is what an account says of the program that ran: who it is
// (intro), whether its writes are guarded by IsLeader(), what would have
// refused the zombie write (fix), how to keep the scenario (keep).
type voice struct {
	intro     string
	guarded   bool
	fix, keep string
	// fencedZombie, when set, is the fix told instead of fix when a
	// fenced store took the zombie write all the same.
	fencedZombie string
	// stopped names the signal that ends the client's belief.
	stopped string
	// terms are the words the account is told in (nil: Kubernetes's).
	terms *zombieTerms
}

// userNotes is the account of a failure of a client of your own (Sweep):
// told from what ran — its implementation, the timing it ran with, whether
// its writes were fenced — with the replay and regression commands of
// your package.
func userNotes(o *campaign.Outcome, cfg *SweepConfig, t *testing.T) *campaign.DomainNotes {
	sc := o.Scenario
	rd, rp := storyTiming(o)
	timing := "the scenario's"
	if cfg.Timing != nil {
		timing = "its own"
	}
	v := voice{stopped: "end of leadership (its `Candidate.Stopped`)", intro: fmt.Sprintf("%d candidates (%s) ran `%s` with %s timing, `LeaseDuration=%s`, `RenewDeadline=%s`, `RetryPeriod=%s`",
		len(sc.Holders), strings.Join(sc.Names(), ", "), sc.Implementation, timing, secs(sc.TTL), secs(rd), secs(rp))}
	if cfg.fencedStore() {
		v.intro += "; its writes carried a token the store checks, keeping the highest it accepted"
		v.fix = "Its writes were fenced: see the violations above for what the fence did not cover (a token that does not grow across holders, a write the store took without one)."
	} else {
		v.intro += "; its writes carried no token"
		v.fix = "Make each write carry a token the store checks — `k8slease.Tokens` gives the `resourceVersion` of the update that made the writer holder " +
			"(`TokenAcquired`), or `leaseTransitions + 1` (`TokenTransitions`) — and fence the resource (`SweepConfig.Fenced`): the store then refuses this write."
	}
	v.intro += "."
	v.keep = fmt.Sprintf("A virtual-time scenario is not the simulator's, so campaign's `testdata/regressions/` cannot replay it: "+
		"copy its `.scenario.json` and `.history.jsonl` into `%s/` in your package, where a test calling `k8slease.Regressions` "+
		"with this sweep's configuration replays every scenario and fails unless exactly its `expect` is violated and its history is recorded again "+
		"(`%s` replays one).", cfg.regressions(), cfg.replay(t)("FILE"))
	var n *campaign.DomainNotes
	if fr := findForeignRelease(o); fr != nil {
		// A deposed holder's release cleared another's Lease: the finding
		// is on the release path, and the writes after it are the
		// legitimate holder's, not a zombie's.
		n = releaseNotes(o, fr, v)
	} else {
		n = zombieNotes(o, v)
	}
	n.Parameters = userParameters(o, cfg, "Kubernetes")
	if hint := releaseBeliefHint(o); hint != "" {
		n.Cause = append(n.Cause, hint)
	}
	return n
}

// userParameters are the scenario section's lines for a client of your
// own: the timing it ran with and whose it is, what its writes carried,
// the step-downs and the network — not the reference holder's margin and
// backoff, which it never had. terms is "Kubernetes" or "lease".
func userParameters(o *campaign.Outcome, cfg *SweepConfig, terms string) []string {
	sc := o.Scenario
	rd, rp := storyTiming(o)
	whose := "drawn by the sweep from its timings, read by the client (`k8slease.Parameters`)"
	if cfg.Timing != nil {
		whose = fmt.Sprintf("the client's own (`SweepConfig.Timing` %q)", cfg.Timing.Name)
	}
	var out []string
	if terms == "lease" {
		out = append(out, fmt.Sprintf("timing: TTL %s, renewals %s apart, each given up after %s — %s", secs(sc.TTL), secs(rp), secs(rd), whose))
	} else {
		out = append(out, fmt.Sprintf("timing: `LeaseDuration=%s`, `RenewDeadline=%s`, `RetryPeriod=%s` — %s", secs(sc.TTL), secs(rd), secs(rp), whose))
	}
	switch {
	case cfg.fencedStore():
		out = append(out, "writes: each carries a token (`Candidate.Write`'s fence); the store keeps the highest it accepted and refuses a lower one")
	default:
		out = append(out, "writes: no token; the store accepts every write")
	}
	if cfg.Shutdowns {
		out = append(out, "step-downs: one candidate a seed is shut down gracefully (`SweepConfig.Shutdowns`)")
	}
	return append(out, fmt.Sprintf("network: each leg %d-%dms", sc.Network.MinDelay, sc.Network.MaxDelay))
}

// releaseBeliefHint is the advice for a client that releases its Lease on
// the way out (ReleaseOnCancel) and whose belief outlived its lease: the
// belief should end with the work's context, not with OnStoppedLeading.
func releaseBeliefHint(o *campaign.Outcome) string {
	released := false
	for i := range o.History.Ops {
		if op := &o.History.Ops[i]; op.Kind == model.Release {
			released = true
			break
		}
	}
	if !released || !(o.Fails("exclusive-belief") || o.Fails("stop-on-renew-failure") || o.Fails("belief-fence")) {
		return ""
	}
	return "With `ReleaseOnCancel`, client-go calls `OnStoppedLeading` only after its release's round trips, while the work stopped when the context " +
		"`OnStartedLeading` was given ended: end the belief there (`Candidate.Stopped` when that context is done), as the work does, " +
		"not in `OnStoppedLeading`."
}

// zombieNotes tells a zombie write (k8ssweep.FindZombieWrite) in v's voice,
// in v.terms' words (nil: Kubernetes's).
func zombieNotes(o *campaign.Outcome, v voice) *campaign.DomainNotes {
	sc := o.Scenario
	w := v.terms
	if w == nil {
		w = &kubernetesTerms
	}
	n := &campaign.DomainNotes{Heading: w.heading, Setup: v.intro, Keep: v.keep}
	z := k8ssweep.FindZombieWrite(o)
	if z == nil {
		n.Cause = []string{w.none(v.fix)}
		return n
	}
	who := z.Write.Owner
	if z.LastRenew != nil {
		n.Events = append(n.Events, campaign.NoteEvent{T: z.LastRenew.At, Line: z.LastRenew.Line, What: fmt.Sprintf(w.lastRenew, who)})
	}
	if z.Paused != nil {
		// A pause at a write strikes half a millisecond after the work
		// loop's leadership check (elector.go's between), so the account
		// gives the pause's instant, not the check's.
		check := "checked `IsLeader()` — true — and"
		if !v.guarded {
			check = "was about to write and"
		}
		n.Events = append(n.Events, campaign.NoteEvent{T: z.Paused.Start, What: fmt.Sprintf("%s %s, before its write went out, was paused for %s "+w.paused,
			who, check, secs(z.Paused.End-z.Paused.Start))})
	}
	n.Events = append(n.Events, campaign.NoteEvent{T: z.Grant.At, Line: z.Grant.Line, What: fmt.Sprintf(w.grant, secs(sc.TTL), z.Grant.Owner)})
	n.Events = append(n.Events, campaign.NoteEvent{T: z.Write.At, Line: z.Write.Line, What: fmt.Sprintf("%s's write %q reached the store and was accepted: "+
		w.zombie+" — a zombie write.", who, z.Write.Value, z.Grant.Owner)})
	switch {
	case z.Stopped >= 0 && z.Stopped <= z.Write.Call:
		n.Events = append(n.Events, campaign.NoteEvent{T: z.Stopped, What: fmt.Sprintf("%s's %s came, as it resumed and the write went out: too late to stop it.", who, v.stopped)})
	case z.Stopped >= 0:
		n.Events = append(n.Events, campaign.NoteEvent{T: z.Stopped, What: fmt.Sprintf("%s's %s came only then, after the write.", who, v.stopped)})
	default:
		n.Events = append(n.Events, campaign.NoteEvent{T: -1, What: fmt.Sprintf("%s's %s never came before the run ended.", who, v.stopped)})
	}
	fix := v.fix
	if v.fencedZombie != "" {
		fix = v.fencedZombie
	}
	n.Cause = []string{w.cause + fix}
	return n
}

// zombieTerms are the words a zombie write is told in (zombieNotes).
type zombieTerms struct {
	heading string
	// lastRenew takes who; paused follows "who <did what>, before its
	// write went out, was paused for <how long> "; grant takes the TTL and
	// the new holder (indexed); zombie follows "who's write reached the
	// store and was accepted: " and takes the new holder; cause comes
	// before the voice's fix.
	lastRenew, paused, grant, zombie, cause string
	// none is the cause when no write reached the store from a holder the
	// lease had moved on from, given the voice's fix.
	none func(fix string) string
}

// kubernetesTerms tell of a Lease and client-go's elector.
var kubernetesTerms = zombieTerms{
	heading:   "Kubernetes",
	lastRenew: "%s last renewed its Lease (the API server applied the update then).",
	paused: "(a stop-the-world GC pause, a CPU-throttled or frozen container). Nothing of client-go's could run for it meanwhile: " +
		"`RenewDeadline` bounds how long the elector keeps retrying a renewal, not how long a process goes without looking.",
	grant:  "The other candidates saw the Lease stop changing and, `LeaseDuration` (%[1]s) later, %[2]s took it over (`holderIdentity` %[2]s, `leaseTransitions` + 1).",
	zombie: "a write from a leader the Lease had moved on from, after the Lease was granted to %s",
	cause: "client-go's own documentation says it: leader election does not fence. Neither a shorter `RenewDeadline` nor a " +
		"longer `LeaseDuration` closes this window — a pause longer than `LeaseDuration` minus the time since the last renewal " +
		"always opens it. What does: a token the store checks. ",
	none: func(string) string {
		return "No write reached the store from a leader the Lease had moved on from; see the violations above."
	},
}

// leaseTerms tell of a lease server of the user's own (leaseNotes).
var leaseTerms = zombieTerms{
	heading:   "lease",
	lastRenew: "%s last renewed its lease (the server applied the renewal then).",
	paused:    "(a stop-the-world GC pause, a CPU-throttled or frozen process): nothing of its client ran meanwhile, its renewals included.",
	grant:     "The lease's TTL (%s) ran out unrenewed and the server granted it to %s.",
	zombie:    "a write from a holder whose lease had expired, after it was granted to %s",
	cause: "A lease alone does not fence: neither a shorter renewal period nor a longer TTL closes this window — a pause longer than the TTL " +
		"minus the time since the last renewal always opens it. What does: a fence the store checks. ",
	none: func(fix string) string {
		return "No write reached the store from a holder the lease had moved on from: the violations above are of the candidates' own view " +
			"(`exclusive-belief`: two believed they held the lease at once; `stop-on-renew-failure`: one kept working after a renewal failed). " +
			"A holder must end its work (`Candidate.Stopped`) at the first renewal that fails or goes unanswered, before a TTL from the last renewal " +
			"the server applied runs out; a fence the store checks keeps the writes of one that does not harmless. " + fix
	},
}

// foreignRelease is a release the Lease store applied from a candidate
// that did not hold the Lease: it cleared another's holderIdentity, or
// wrote a release over a Lease already free.
type foreignRelease struct {
	// Release is the release; Victim the grant of the holder it cleared
	// (nil: nobody held it, Freed is the release that had freed it);
	// LastRenew the releaser's last successful renewal or acquire before
	// that; Next the grant that followed the release (nil: none).
	Release, Victim, Freed, LastRenew, Next *model.Op
	// VictimWrites are the victim's writes the resource accepted after
	// Next was applied, while another held the Lease.
	VictimWrites []*model.Op
	// Paused is the releaser's pause that covered Victim's grant, if any.
	Paused *model.FaultRecord
	// Read is the releaser's own account of its release (its trace line,
	// from the elector: what Lock.Get read, what IsLeader() said), "" when
	// it left none.
	Read string
}

// findForeignRelease returns the first release in a history from a
// candidate that did not hold the Lease, or nil: the ops in the order the
// store applied them.
func findForeignRelease(o *campaign.Outcome) *foreignRelease {
	h := o.History
	var byAt []*model.Op
	for i := range h.Ops {
		if h.Ops[i].HasAt && h.Ops[i].OK {
			byAt = append(byAt, &h.Ops[i])
		}
	}
	k8ssweep.SortByAt(byAt)
	var holder, freed *model.Op
	last := map[string]*model.Op{}
	var fr *foreignRelease
	for _, op := range byAt {
		if fr != nil {
			switch {
			case fr.Next == nil && op.Kind == model.Acquire:
				fr.Next = op
			case fr.Next != nil && op.Kind == model.Acquire:
				return fr
			case fr.Next != nil && fr.Victim != nil && op.Kind == model.Write && op.Owner == fr.Victim.Owner && op.Owner != fr.Next.Owner:
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
			if holder == nil && freed != nil || holder != nil && holder.Owner != op.Owner {
				fr = &foreignRelease{Release: op, Victim: holder, LastRenew: last[op.Owner]}
				moved := holder // what the releaser missed
				if holder == nil {
					fr.Freed, moved = freed, freed
				}
				for i := range h.Faults {
					f := &h.Faults[i]
					if f.Kind == "pause" && f.Target == op.Process && f.Start <= moved.At && f.End >= moved.At {
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
			holder, freed = nil, op
		}
	}
	return fr
}

// releaseNotes tells a release of another's Lease in client-go's terms,
// from the history (what the store applied) and the releaser's own
// account in the trace (what its Lock.Get read, what IsLeader() said).
func releaseNotes(o *campaign.Outcome, fr *foreignRelease, v voice) *campaign.DomainNotes {
	sc := o.Scenario
	n := &campaign.DomainNotes{Heading: "Kubernetes", Setup: v.intro, Keep: v.keep}
	who := fr.Release.Owner
	if fr.LastRenew != nil {
		n.Events = append(n.Events, campaign.NoteEvent{T: fr.LastRenew.At, Line: fr.LastRenew.Line,
			What: fmt.Sprintf("%s last renewed its Lease: from then on its `observedRecord` named %s as the holder.", who, who)})
	}
	if fr.Victim == nil {
		return freedNotes(o, fr, n)
	}
	victim := fr.Victim.Owner
	if fr.Paused != nil {
		n.Events = append(n.Events, campaign.NoteEvent{T: fr.Paused.Start, What: fmt.Sprintf("%s was paused for %s (a stop-the-world GC pause, a throttled or frozen container); "+
			"nothing of client-go's ran for it meanwhile.", who, secs(fr.Paused.End-fr.Paused.Start))})
	}
	n.Events = append(n.Events, campaign.NoteEvent{T: fr.Victim.At, Line: fr.Victim.Line, What: fmt.Sprintf("The others saw the Lease stop changing and, "+
		"`LeaseDuration` (%s) later, %s took it over.", secs(sc.TTL), victim)})
	stepDown := int64(-1)
	if o.Sim != nil {
		for _, e := range o.Sim.Trace {
			if e.Node == fr.Release.Process && e.What == "shutting-down" && e.T <= fr.Release.Call && (fr.LastRenew == nil || e.T >= fr.LastRenew.At) {
				stepDown = e.T
			}
		}
	}
	switch {
	case stepDown >= 0:
		n.Events = append(n.Events, campaign.NoteEvent{T: stepDown, What: fmt.Sprintf("%s was shut down (its context cancelled, a graceful step-down) before it had read the Lease since: "+
			"`renew()` ended and, with `ReleaseOnCancel`, called `release()` → `tryRelease`.", who)})
	case fr.Paused != nil:
		n.Events = append(n.Events, campaign.NoteEvent{T: fr.Paused.End, What: fmt.Sprintf("%s resumed with its renewal past `RenewDeadline`: `renew()` gave up without having read the Lease since, "+
			"and with `ReleaseOnCancel` called `release()` → `tryRelease`.", who)})
	default:
		n.Events = append(n.Events, campaign.NoteEvent{T: -1, What: fmt.Sprintf("%s's renewals had not been answered within `RenewDeadline`: `renew()` gave up without having read the Lease since, "+
			"and with `ReleaseOnCancel` called `release()` → `tryRelease`.", who)})
	}
	n.Events = append(n.Events, campaign.NoteEvent{T: fr.Release.At, Line: fr.Release.Line, What: read(fr) + fmt.Sprintf("That is `tryRelease`: its `Lock.Get` refreshed the `LeaseLock`'s cached Lease, "+
		"so the `Update` carried the fresh `resourceVersion` — the one %s's takeover wrote; `IsLeader()` compared the stale `observedRecord`, not the `holderIdentity` it had just read; "+
		"the Update passed optimistic concurrency and the API server applied it: the Lease cleared (`holderIdentity` empty, `leaseDurationSeconds` 1) while %s held it.", victim, victim)})
	if fr.Next != nil {
		if fr.Next.Owner == victim {
			n.Events = append(n.Events, campaign.NoteEvent{T: fr.Next.At, Line: fr.Next.Line, What: fmt.Sprintf("%s took the cleared Lease back.", victim)})
		} else {
			n.Events = append(n.Events, campaign.NoteEvent{T: fr.Next.At, Line: fr.Next.Line, What: fmt.Sprintf("%s acquired the cleared Lease, while %s's elector still believed it led: "+
				"its own `observedRecord` named itself until its next renewal met the new `resourceVersion`.", fr.Next.Owner, victim)})
			if len(fr.VictimWrites) > 0 {
				w := fr.VictimWrites[0]
				n.Events = append(n.Events, campaign.NoteEvent{T: w.At, Line: w.Line, What: fmt.Sprintf("%s's write %q reached the store and was accepted: two leaders writing.", victim, w.Value)})
			} else {
				n.Events = append(n.Events, campaign.NoteEvent{T: -1, What: "Two electors led at once."})
			}
			if o.Sim != nil {
				for _, e := range o.Sim.Trace {
					if e.Node == fr.Victim.Process && e.T >= fr.Next.At && e.What == "served" && strings.HasPrefix(e.Detail, "409 update") {
						n.Events = append(n.Events, campaign.NoteEvent{T: e.T, What: fmt.Sprintf("%s learnt it only then, when its renewal was refused (%s).", victim, e.Detail)})
						break
					}
				}
			}
		}
	}
	n.Cause = []string{fmt.Sprintf("No fault of the harness's or the API server's made this: the API server did what it must with a current `resourceVersion`. "+
		"Neither timing nor fencing the writes closes it (a fenced store refuses the stale writes, not the Lease's clearing). "+
		"What does: `tryRelease` checking that the record it just read names this identity before it updates "+
		"(implementation `%s` runs that one-line change on this scenario's sweep; client-go v0.38.0-beta.0 makes the same check). "+
		"Until then, a controller using `ReleaseOnCancel` (controller-runtime's `LeaderElectionReleaseOnCancel`) can clear a live leader's Lease after any pause or outage longer than `LeaseDuration`.",
		patchedName(sc.Implementation))}
	return n
}

// read is the releaser's own account of its release, from its trace line,
// as the start of the release's event ("" when it left none).
func read(fr *foreignRelease) string {
	if fr.Read == "" {
		return ""
	}
	return fmt.Sprintf("What %s's client saw as it released (trace): %s. ", fr.Release.Owner, fr.Read)
}

// patchedName is the patched variant of a ReleaseOnCancel implementation.
func patchedName(impl string) string {
	if isFenced(impl) {
		return k8ssweep.ReleaseFencedPatched
	}
	return k8ssweep.ReleasePatched
}

// freedNotes tells a release written over a Lease already free: the same
// stale check, harmless this time only because nobody held it.
func freedNotes(o *campaign.Outcome, fr *foreignRelease, n *campaign.DomainNotes) *campaign.DomainNotes {
	who := fr.Release.Owner
	if fr.Paused != nil {
		n.Events = append(n.Events, campaign.NoteEvent{T: fr.Paused.Start, What: fmt.Sprintf("%s was paused for %s; nothing of client-go's ran for it meanwhile.", who, secs(fr.Paused.End-fr.Paused.Start))})
	}
	n.Events = append(n.Events, campaign.NoteEvent{T: fr.Freed.At, Line: fr.Freed.Line, What: fmt.Sprintf("The Lease moved on without %s, and %s released it: nobody held it.", who, fr.Freed.Owner)})
	n.Events = append(n.Events, campaign.NoteEvent{T: fr.Release.At, Line: fr.Release.Line, What: read(fr) + "`tryRelease`'s `Lock.Get` had read the free Lease and refreshed the cached `resourceVersion`; " +
		"`IsLeader()` compared the stale `observedRecord`, not the `holderIdentity` it had just read; the Update passed optimistic concurrency and the API server applied it: " +
		"a release from a candidate that did not hold the Lease, harmless here only because nobody held it — the same check clears a live holder's Lease when one does."})
	n.Cause = []string{fmt.Sprintf("What closes it: `tryRelease` checking that the record it just read names this identity before it updates (implementation `%s`; client-go v0.38.0-beta.0 makes the same check).",
		patchedName(o.Scenario.Implementation))}
	return n
}

// leaseNotes is the account of a failure of a client of your own against
// a lease server of your own (SweepConfig.Server): userNotes' account told
// in lease terms — the TTL, renewals, a takeover, the fence the server
// grants — since neither a Lease object nor client-go ran.
func leaseNotes(o *campaign.Outcome, cfg *SweepConfig, t *testing.T) *campaign.DomainNotes {
	sc := o.Scenario
	rd, rp := storyTiming(o)
	timing := "the scenario's"
	if cfg.Timing != nil {
		timing = "its own"
	}
	v := voice{terms: &leaseTerms, stopped: "end of holding (its `Candidate.Stopped`)",
		intro: fmt.Sprintf("%d candidates (%s) ran `%s` against its own lease server with %s timing: a TTL of %s, renewals %s apart, each given up after %s",
			len(sc.Holders), strings.Join(sc.Names(), ", "), sc.Implementation, timing, secs(sc.TTL), secs(rp), secs(rd)),
		fix: "Make each write carry the fence your server grants with the lease (a number that grows with every grant) and have the store refuse a lower one " +
			"(`SweepConfig.Fenced`, or `vclient.Options.Fenced`): the store then refuses this write.",
		keep: fmt.Sprintf("Keep it as a regression test: copy its `.scenario.json` and `.history.jsonl` into `%s/` in your package, where a test calling "+
			"`k8slease.Regressions` with this sweep's configuration replays every scenario and fails unless exactly its `expect` is violated and its history "+
			"is recorded again (`%s` replays one).", cfg.regressions(), cfg.replay(t)("FILE"))}
	if cfg.fencedStore() {
		v.intro += "; its writes carried a fence the store checks, keeping the highest it accepted"
		v.fix = "Its writes were fenced: see the violations above for what the fence did not cover (a fence that does not grow across holders, a write the store took without one)."
		v.fencedZombie = "Its writes were fenced, and the store accepted this one all the same: no write under the new holder's higher fence had reached it yet, " +
			"so this fence was still the highest it knew — a fence refuses a zombie's write only once the new holder has written. " +
			"See the violations above for what the sweep judged."
	} else {
		v.intro += "; its writes carried no fence"
	}
	v.intro += "."
	n := zombieNotes(o, v)
	n.Parameters = userParameters(o, cfg, "lease")
	return n
}
