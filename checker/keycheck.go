package checker

import (
	"fmt"
	"slices"
	"time"

	"github.com/leasecheck/leasecheck/internal/timed"
	"github.com/leasecheck/leasecheck/internal/timefmt"
	"github.com/leasecheck/leasecheck/model"
)

// exactCap bounds the exact sweep's frontier (its beam). Correct histories
// rarely need more than a handful of configurations; wrong ones full of
// timeouts are the relaxed sweep's to refute.
const exactCap = 2048

// keyChecker decides every property of one key from its events in time
// order: the invariants, and linearizability by the exact sweep and — from
// the first unknown op on — the relaxed one (sweep.go).
type keyChecker struct {
	key       string
	hdr       model.Header
	rules     timed.Rules
	names     *timed.Names
	b         *budget
	inv       *invariants
	w         *window
	exact     *sweep
	relaxed   *sweep
	noRelaxed bool // the relaxed sweep could not start soundly, or runs later
	guessing  bool // a stream pass without a survey: the sweeps stop at guessWork
	optional  bool // the key has unknown ops that may have taken effect
	complete  int  // ops to place
	ops       int
	events    int
	stopped   string // why the key's check stopped early
}

// newKeyChecker returns a checker of one key. lockstep runs the relaxed
// sweep beside the exact one, from the first unknown op on (a stream cannot
// be read twice); otherwise it is left to a second pass, needed only when
// the exact sweep cannot decide.
func newKeyChecker(key string, hdr model.Header, names *timed.Names, b *budget, record, lockstep bool) *keyChecker {
	kc := &keyChecker{key: key, hdr: hdr, rules: timed.RulesOf(hdr), names: names, b: b,
		inv: newInvariants(key, hdr), w: newWindow(), noRelaxed: !lockstep}
	kc.exact = newSweep(kc.rules, hdr.ClockUncertainty, b, kc.w, false, record, exactCap)
	return kc
}

// setFences tells the sweeps what the key's fences are (fenceFacts).
func (kc *keyChecker) setFences(f fenceFacts) {
	kc.exact.fences = f
	if kc.relaxed != nil {
		kc.relaxed.fences = f
	}
}

// pinAhead updates fenceFacts.pinAhead before the next event.
func (kc *keyChecker) pinAhead(f int64) {
	kc.exact.fences.pinAhead = f
	if kc.relaxed != nil {
		kc.relaxed.fences.pinAhead = f
	}
}

// event feeds one event.
func (kc *keyChecker) event(e event) {
	kc.events++
	if kc.events&4095 == 0 && kc.stopped == "" && kc.b.expired() {
		kc.stopped = kc.b.reason(fmt.Sprintf("checking key %q", kc.key))
	}
	k := e.k
	switch e.kind {
	case evCall:
		kc.ops++
		kc.inv.call(k)
		if k.role == rolePlaced {
			kc.complete++
			if !kc.w.open(k) && kc.stopped == "" {
				kc.stopped = fmt.Sprintf("more than %d operations of key %q were in flight at once (line %d)", maxPending, kc.key, k.op.Line)
			}
		}
		if k.role == roleOptional {
			kc.optional = true
		}
		if k.role == roleOptional && kc.relaxed == nil && !kc.noRelaxed {
			if kc.exact.dropped || kc.exact.over() {
				kc.noRelaxed = true
			} else {
				kc.relaxed = kc.exact.fork()
			}
		}
		kc.exact.call(k)
		if kc.relaxed != nil {
			kc.relaxed.call(k)
		}
		return
	case evReturn:
		kc.inv.ret(k)
		if k.role != rolePlaced {
			return
		}
	}
	// The op is due.
	if kc.stopped != "" {
		kc.w.close(k)
		return
	}
	if kc.guessing {
		kc.exact.workCap = guessWork(kc.events)
		if kc.relaxed != nil {
			kc.relaxed.workCap = kc.exact.workCap
		}
	}
	kc.exact.due(k)
	if kc.relaxed != nil && !kc.relaxed.over() {
		// Once the exact sweep has decided, the relaxed one has nothing to add.
		if kc.exact.dead && !kc.exact.dropped {
			kc.relaxed.release()
			kc.relaxed.stopped = stopTime
		} else {
			kc.relaxed.due(k)
		}
	}
	kc.w.close(k)
	if kc.exact.over() && (kc.relaxed == nil || kc.relaxed.over()) && !kc.decided() {
		kc.stopped = kc.sweepReason()
	}
}

// guessedOut reports whether a sweep stopped at guessWork: the pass
// without a survey must make way for one with it.
func (kc *keyChecker) guessedOut() bool {
	return kc.exact.stopped == stopGuess || kc.relaxed != nil && kc.relaxed.stopped == stopGuess
}

// decided reports whether the sweeps have a verdict already.
func (kc *keyChecker) decided() bool {
	return kc.exact.dead && !kc.exact.dropped || kc.relaxed != nil && kc.relaxed.dead
}

// sweepReason says why the sweeps stopped without a verdict.
func (kc *keyChecker) sweepReason() string {
	for _, sw := range []*sweep{kc.exact, kc.relaxed} {
		if sw == nil {
			continue
		}
		switch sw.stopped {
		case stopTime:
			return kc.b.reason(fmt.Sprintf("checking key %q", kc.key))
		case stopMemory:
			return kc.b.memReason(fmt.Sprintf("checking key %q", kc.key))
		case stopWindow:
			return fmt.Sprintf("more than %d operations of key %q were in flight at once", maxPending, kc.key)
		case stopGuess:
			return fmt.Sprintf("key %q: the search without the history's facts (a first pass over the file) worked past its allowance", kc.key)
		case stopWork:
			return fmt.Sprintf("key %q: the sweep worked past its allowance and the other searches found no verdict", kc.key)
		}
	}
	if kc.relaxed == nil {
		return fmt.Sprintf("key %q: the exact search had to drop configurations past its budget and found no linearization", kc.key)
	}
	return fmt.Sprintf("key %q: the exact search had to drop configurations past its budget and found no linearization, and no order refutes it even if the unanswered operations took effect any number of times", kc.key)
}

// release gives back what the sweeps hold, when a key's check is abandoned.
func (kc *keyChecker) release() {
	kc.exact.release()
	if kc.relaxed != nil {
		kc.relaxed.release()
	}
}

// keyOutcome is what the sweeps decided about a key's linearizability.
type keyOutcome struct {
	verdict Verdict
	stuck   *sweepStuck // Violated: where the deciding sweep stopped
	path    *link       // Holds: a linearization (when recorded)
	reason  string      // Unknown: why
	work    int
}

func (kc *keyChecker) outcome() keyOutcome {
	o := keyOutcome{work: kc.events}
	defer kc.exact.release()
	if kc.relaxed != nil {
		defer kc.relaxed.release()
	}
	switch {
	case kc.exact.dead && !kc.exact.dropped:
		o.verdict, o.stuck = Violated, kc.exact.stuck
	case kc.relaxed != nil && kc.relaxed.dead:
		o.verdict, o.stuck = Violated, kc.relaxed.stuck
	case kc.stopped != "":
		o.verdict, o.reason = Unknown, kc.stopped
	case kc.exact.alive():
		o.verdict, o.path = Holds, kc.exact.frontier[0].path
	default:
		o.verdict, o.reason = Unknown, kc.sweepReason()
	}
	return o
}

// keyResult is everything decided about one key.
type keyResult struct {
	key        string
	verdict    Verdict
	violation  *found // linearizable's, when violated
	invariants []found
	steps      []Step // the linearization, or the longest explainable prefix
	nodes      int
	reason     string // Unknown: why
	ops        int
}

// explainNodes bounds the depth-first search run to explain a violation the
// way people have read it (a node budget, not time, so that the text does
// not depend on the machine), and explainOps the keys it is tried on; past
// either the sweep's own account is given.
func explainNodes(ops int) int { return 8*ops + 10_000 }

const explainOps = 4096

// sweepAllowance is the work (configurations explored) the exact sweep may
// spend on a key of n ops in memory before the other searches take over:
// a correct history the sweep decides at all it decides with a few
// configurations per op.
func sweepAllowance(n int) int64 { return 64*int64(n) + 1<<16 }

// witnessNodes is the node allowance of the depth-first search's first try
// for a witness: a correct history it decides at once it decides placing
// each op about once.
func witnessNodes(n int) int { return 4*n + 1<<14 }

// dfsLimit is the size of key the depth-first search falls back to when the
// sweeps cannot decide: it holds every op of the key and its cache.
const dfsLimit = 1 << 20

// checkKeyInMemory decides one key of a history held in memory: the
// invariants and the sweeps in one pass over its events, then, when the
// sweeps cannot decide, the depth-first search (search.go).
func checkKeyInMemory(b *budget, c *timed.Compiled, k int) keyResult {
	defer slowDown(time.Now())
	ko := &c.Keys[k]
	h := c.History
	kc := newKeyChecker(ko.Key, h.Header, c.Names, b, true, false)
	facts := factsOf(h, ko.Index)
	kc.exact.unique = facts.unique
	// The portfolio: the exact sweep gets an allowance of work
	// linear in the key's ops; past it the depth-first search tries for a
	// witness within a node allowance as linear, then the relaxed sweep
	// refutes, then the search has the rest of the budget. Each is sound on
	// its own, so the order changes only how soon a verdict comes: no
	// phase may burn the budget on a shape another decides at once (a
	// correct history with many retried acquires under wide clock
	// uncertainty, which the search decides in milliseconds).
	kc.exact.workCap, kc.exact.workStop = sweepAllowance(len(ko.Index)), stopWork
	kops, events := prepareKey(h, c.Names, ko, facts)
	ahead := pinsAhead(events)
	if g := greedyWitness(b, kc.rules, events, ahead, len(kops)); g.stuck == nil {
		// The fast path (greedy.go): an order the pass found, judged by the
		// model apart from the pass. Only the invariants are left to run.
		witness := make([]Step, len(g.log))
		for i, st := range g.log {
			witness[i] = Step{Op: st.k.hidx, Applied: st.applied}
		}
		if verifyWitness(h, ko, witness) {
			kc.invariantsOnly(events)
			return keyResult{key: ko.Key, verdict: Holds, steps: witness, nodes: g.work, ops: len(ko.Index), invariants: kc.inv.finish()}
		}
	} else if f := refuteProjections(ko.Key, kops, kc.rules); f != nil {
		// A projection refutes it (projections.go): the sweeps would walk the
		// whole history to say so. Told the way people have read it when
		// the depth-first search can, else the zones' own account.
		kc.invariantsOnly(events)
		res := keyResult{key: ko.Key, verdict: Violated, ops: len(ko.Index), invariants: kc.inv.finish(), nodes: g.work, violation: f}
		if len(ko.Index) <= explainOps {
			// A small allowance: what the zones refute is usually deep in an
			// unexplainable suffix, which the search would walk in vain.
			dr := searchKey(b, h, ko, dfsOptions{maxNodes: 2*len(ko.Index) + 1024})
			res.nodes += dr.nodes
			if dr.verdict == Violated {
				v := explainStuck(c.Names, timefmt.Times{Unit: h.Header.TimeUnit}, kc.rules, ko.Key, stuckFromSearch(c, k, &dr))
				res.violation, res.steps = &v, stepsOfPath(ko, dr.path)
			}
		}
		if res.steps == nil {
			res.steps = make([]Step, len(g.log))
			for i, st := range g.log {
				res.steps[i] = Step{Op: st.k.hidx, Applied: st.applied}
			}
		}
		return res
	}
	kc.setFences(fenceFacts{maxFence: facts.maxFence, pinAhead: timed.Inf})
	for i, e := range events {
		kc.pinAhead(ahead[i])
		kc.event(e)
	}
	res := keyResult{key: ko.Key, ops: len(ko.Index), invariants: kc.inv.finish()}
	o := kc.outcome()
	if o.verdict == Unknown && kc.exact.stopped == stopWork && !b.expired() && len(ko.Index) <= dfsLimit {
		// A witness, within an allowance: a Holds found here is proof. Only
		// where the sweep ran out of work: a frontier that died, beam or
		// not, says the history is most likely wrong — the relaxed sweep's
		// to refute first.
		dr := searchKey(b, h, ko, dfsOptions{maxNodes: witnessNodes(len(ko.Index))})
		o.work += dr.nodes
		if dr.verdict == Holds {
			res.verdict, res.nodes, res.steps = Holds, o.work, stepsOfPath(ko, dr.path)
			return res
		}
	}
	if o.verdict == Unknown && kc.optional && !b.expired() && (kc.exact.stopped == stopNone || kc.exact.stopped == stopWork) {
		// The exact sweep could not decide: the relaxed one may refute.
		if r := relaxedPass(b, kc, kops, events, ahead); r.verdict == Violated {
			o = r
		}
	}
	res.verdict, res.nodes = o.verdict, o.work
	rules := timed.RulesOf(h.Header)
	switch o.verdict {
	case Holds:
		res.steps = stepsOf(o.path)
	case Violated:
		// The depth-first search tells it the way people have read it; when
		// it cannot within its node budget, the sweep's account stands.
		dr := searchResult{verdict: Unknown}
		if len(ko.Index) <= explainOps {
			dr = searchKey(b, h, ko, dfsOptions{maxNodes: explainNodes(len(ko.Index))})
		}
		res.nodes += dr.nodes
		switch dr.verdict {
		case Violated:
			v := explainStuck(c.Names, timefmt.Times{Unit: h.Header.TimeUnit}, rules, ko.Key, stuckFromSearch(c, k, &dr))
			res.violation, res.steps = &v, stepsOfPath(ko, dr.path)
		case Holds:
			// A witness is proof: the sweep was wrong. (Never seen; the
			// property tests look for it.)
			res.verdict, res.steps = Holds, stepsOfPath(ko, dr.path)
		default:
			v := explainStuck(c.Names, timefmt.Times{Unit: h.Header.TimeUnit}, rules, ko.Key, stuckFromSweep(o.stuck, kc.complete))
			res.violation, res.steps = &v, stepsOf(o.stuck.c.path)
		}
	case Unknown:
		res.reason = o.reason
		if b.expired() || len(ko.Index) > dfsLimit {
			break
		}
		dr := searchKey(b, h, ko, dfsOptions{})
		res.nodes += dr.nodes
		res.verdict, res.steps = dr.verdict, stepsOfPath(ko, dr.path)
		switch dr.verdict {
		case Violated:
			v := explainStuck(c.Names, timefmt.Times{Unit: h.Header.TimeUnit}, rules, ko.Key, stuckFromSearch(c, k, &dr))
			res.violation = &v
		case Unknown:
			res.reason = dr.reason
		}
	}
	return res
}

// invariantsOnly feeds the key's events to the invariants alone, where a
// fast path decided linearizability without the sweeps.
func (kc *keyChecker) invariantsOnly(events []event) {
	for _, e := range events {
		switch e.kind {
		case evCall:
			kc.inv.call(e.k)
		case evReturn:
			kc.inv.ret(e.k)
		}
	}
}

// verifyWitness replays a proposed linearization through the timed model
// (timed.VerifyLinearization), the judge of every fast-path witness.
func verifyWitness(h *model.History, ko *timed.KeyOps, steps []Step) bool {
	order := make([]timed.Placement, len(steps))
	for i, st := range steps {
		order[i] = timed.Placement{Op: st.Op, Applied: st.Applied}
	}
	return timed.VerifyLinearization(h, ko, order) == nil
}

// relaxedPass runs the relaxed sweep alone over a key's events again.
func relaxedPass(b *budget, kc *keyChecker, kops []kop, events []event, ahead []int64) keyOutcome {
	for i := range kops {
		kops[i].slot, kops[i].retired = -1, false
	}
	w := newWindow()
	sw := newSweep(kc.rules, kc.hdr.ClockUncertainty, b, w, true, false, 0)
	sw.unique = kc.exact.unique
	sw.fences = kc.exact.fences
	defer sw.release()
	for i, e := range events {
		if sw.over() {
			break
		}
		sw.fences.pinAhead = ahead[i]
		k := e.k
		switch {
		case e.kind == evCall:
			if k.role == rolePlaced && !w.open(k) {
				return keyOutcome{verdict: Unknown, reason: kc.stopped}
			}
			sw.call(k)
		case k.role == rolePlaced:
			sw.due(k)
			w.close(k)
		}
	}
	if sw.dead {
		return keyOutcome{verdict: Violated, stuck: sw.stuck}
	}
	return keyOutcome{verdict: Unknown}
}

// stepsOf turns a sweep's recorded linearization into steps, first first.
func stepsOf(l *link) []Step {
	var rev []Step
	for ; l != nil; l = l.parent {
		rev = append(rev, Step{Op: l.k.hidx, Applied: l.applied})
	}
	slices.Reverse(rev)
	return rev
}

// stepsOfPath turns a depth-first search path into steps, first first.
func stepsOfPath(ko *timed.KeyOps, p *pathNode) []Step {
	var rev []Step
	for ; p != nil; p = p.parent {
		rev = append(rev, Step{Op: ko.Index[p.op], Applied: p.unknown})
	}
	slices.Reverse(rev)
	return rev
}

// prepareKey prepares a key's ops for the sweeps and the greedy pass: each
// op's inputs (kop), and their events in the order the sweeps take them.
func prepareKey(h *model.History, names *timed.Names, ko *timed.KeyOps, facts keyFacts) ([]kop, []event) {
	p := newPreparer(h.Header, names, facts)
	events := make([]event, 0, 2*len(ko.Index))
	kops := make([]kop, len(ko.Index))
	for i, idx := range ko.Index {
		p.prepare(&h.Ops[idx], &ko.Inputs[i], &kops[i])
		kops[i].hidx = idx
	}
	for i := range kops {
		events = eventsOf(&kops[i], events)
	}
	slices.SortFunc(events, compareEvents)
	return kops, events
}
