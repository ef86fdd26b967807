package runprop

import (
	"slices"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/internal/impl/mutants"
	"github.com/leasecheck/leasecheck/internal/liveness"
	"github.com/leasecheck/leasecheck/internal/runrecord"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/internal/sim"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

// TestRunPropertiesHoldForReference: no false alarm on the reference, with
// every fault kind, clean networks and liveness-only faults.
func TestRunPropertiesHoldForReference(t *testing.T) {
	n := uint64(400)
	if testing.Short() {
		n = 100
	}
	for seed := uint64(1); seed <= n; seed++ {
		for _, o := range []scenario.Options{{Kinds: faults.AllKinds}, {Kinds: liveness.FaultKinds, Clean: true}, {Clean: true}} {
			sc := scenario.FromSeed(seed, o)
			r, err := sim.Run(sc, nil)
			if err != nil {
				t.Fatal(err)
			}
			if fs := Judge(sim.Record(r)); len(fs) > 0 {
				t.Errorf("seed %d %+v: Judge = %+v on the reference", seed, o, fs)
			}
		}
	}
}

// TestPauseOverlapsBeliefs: the exception of exclusive-belief is not
// vacuous. Under pauses and freezes the reference's beliefs do overlap (a
// stopped holder cannot drop its belief), and Judge excuses exactly that.
func TestPauseOverlapsBeliefs(t *testing.T) {
	overlaps := 0
	for seed := uint64(1); seed <= 300; seed++ {
		sc := scenario.FromSeed(seed, scenario.Options{Kinds: []faults.Kind{faults.Pause, faults.Freeze}})
		r, err := sim.Run(sc, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Stats.DoubleBelief > 0 {
			overlaps++
		}
		if fs := exclusiveBelief(rec(r)); len(fs) > 0 {
			t.Fatalf("seed %d: an overlap under a pause or freeze not excused: %+v", seed, fs)
		}
	}
	if overlaps == 0 {
		t.Fatal("no overlap under pauses in 300 seeds: the exception is never exercised")
	}
}

// overlapRun is the article's GC pause by hand: h1 is paused past its
// lease, h2 is granted and believes while h1, stopped, still does.
func overlapRun(t *testing.T, pause bool) *sim.Result {
	sc := &scenario.Scenario{
		Version: scenario.Version, Seed: 1, Semantics: "seed", Key: "k", TTL: 100, Horizon: 2000,
		Network: scenario.Network{MinDelay: 1, MaxDelay: 1},
		Holders: []scenario.Process{
			{Name: "h1", Work: []holder.Item{{Work: 150, Writes: 1}}},
			{Name: "h2", Start: 20, Work: []holder.Item{{Work: 10, Writes: 1}}},
		},
	}
	if pause {
		sc.Faults = faults.Plan{{Kind: faults.Pause, Target: "h1", At: 140, Duration: 300}}
	}
	r, err := sim.Run(sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestExclusiveBeliefExceptionIsPrecise: the paused holder's overlap is
// excused; the same overlap with the pause's stop span taken away is a
// violation, told with trace lines that name both beliefs.
func TestExclusiveBeliefExceptionIsPrecise(t *testing.T) {
	r := overlapRun(t, true)
	if r.Stats.DoubleBelief == 0 {
		t.Fatal("the paused holder's belief did not overlap h2's")
	}
	if fs := exclusiveBelief(rec(r)); len(fs) > 0 {
		t.Fatalf("an overlap while h1 was paused was not excused: %+v", fs)
	}
	r.Stops = nil // as if h1 had been running all along
	fs := exclusiveBelief(rec(r))
	if len(fs) != 1 {
		t.Fatalf("without the pause, exclusiveBelief = %+v, want one finding", fs)
	}
	f := fs[0]
	if len(f.TraceLines) < 3 || len(f.Lines) != 2 || f.To <= f.From {
		t.Fatalf("finding lacks its lines or span: %+v", f)
	}
	for _, l := range f.TraceLines {
		if e := r.Trace[l-1]; e.What != "believes" && e.What != "gave-up" {
			t.Errorf("trace line %d is %q, not a belief change", l, e)
		}
	}
	if !strings.Contains(f.Explanation, "h1") || !strings.Contains(f.Explanation, "h2") {
		t.Errorf("story names neither holder: %s", f.Explanation)
	}
}

// TestMisinformedHolderIsExcused: a holder told a smaller drift bound than
// the drift that happened is excused; one told the truth is not.
func TestMisinformedHolderIsExcused(t *testing.T) {
	r := overlapRun(t, true)
	r.Stops = nil
	zero := int64(0)
	r.Scenario = r.Scenario.Clone()
	r.Scenario.RhoPPM = 20_000
	r.Scenario.Holders[0].RhoPPM = &zero
	r.Scenario.CoordinatorDriftPPM = 20_000
	for i := range r.Beliefs {
		r.Beliefs[i].Told = 0
	}
	if fs := exclusiveBelief(rec(r)); len(fs) > 0 {
		t.Fatalf("a holder told rho=0 while the coordinator drifted 2%% was not excused: %+v", fs)
	}
	r.Scenario.CoordinatorDriftPPM = 0
	if fs := exclusiveBelief(rec(r)); len(fs) != 1 {
		t.Fatalf("a holder told rho=0 with no drift at all was excused: %+v", fs)
	}
}

// TestLivenessFindingsTellTheStory: a slow recovery names the crash and the
// grant in the trace and the history.
func TestLivenessFindingsTellTheStory(t *testing.T) {
	sc := &scenario.Scenario{
		Version: scenario.Version, Seed: 1, Semantics: "seed", Key: "k", TTL: 100, Horizon: 3000,
		Network: scenario.Network{MinDelay: 1, MaxDelay: 1},
		Holders: []scenario.Process{
			{Name: "h1", Work: []holder.Item{{Work: 500, Writes: 1}}},
			{Name: "h2", Start: 10, Work: []holder.Item{{Work: 10, Writes: 1}}},
		},
		Faults: faults.Plan{{Kind: faults.Crash, Target: "h1", At: 50}},
	}
	r, err := sim.Run(sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fs := Judge(sim.Record(r)); len(fs) > 0 {
		t.Fatalf("reference: %+v", fs)
	}
	r.Stats.Recoveries[0] += 10 * sc.TTL // as if the coordinator had waited ten TTLs
	fs := recovery(rec(r))
	if len(fs) != 1 || fs[0].Property != LivenessRecovery || len(fs[0].TraceLines) == 0 {
		t.Fatalf("recovery findings %+v", fs)
	}
	if e := r.Trace[fs[0].TraceLines[0]-1]; e.What != "crashed" {
		t.Errorf("first trace line %q, want the crash", e)
	}
}

// TestBeliefAfterRefusalIsNotExcused: the exception of exclusive-belief is
// for a holder that could not know better, so it ends where the holder was
// told. A holder that keeps believing after its renew was refused (the
// planted holder bug write-after-failed-renew) is caught under freezes,
// where the time budget alone — the holder's clock stood still longer than
// the overlap — would excuse every one of these overlaps; each finding
// cites the refusal. The reference over the same seeds raises nothing,
// though its refusals do fall inside overlaps (so the rule is exercised
// on correct code, not only on the bug).
func TestBeliefAfterRefusalIsNotExcused(t *testing.T) {
	bug := &sim.Options{NewHolder: func(c holder.Config) machine.Holder {
		c.Bugs |= holder.BugWriteAfterFailedRenew
		return holder.New(c)
	}}
	caught, refusedInOverlap := 0, 0
	for seed := uint64(1); seed <= 1500; seed++ {
		sc := scenario.FromSeed(seed, scenario.Options{Kinds: []faults.Kind{faults.Freeze, faults.Pause}})
		ref, err := sim.Run(sc, nil)
		if err != nil {
			t.Fatal(err)
		}
		if fs := exclusiveBelief(rec(ref)); len(fs) > 0 {
			t.Fatalf("seed %d: the reference: %+v", seed, fs)
		}
		refusedInOverlap += refusalsInOverlaps(ref)
		r, err := sim.Run(sc, bug)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range exclusiveBelief(rec(r)) {
			if !strings.Contains(f.Explanation, "after a refusal nothing excuses a belief") {
				continue // caught without the refusal rule too
			}
			old := beliefAt(r, f)
			if old == nil {
				t.Fatalf("seed %d: no belief of the finding %+v", seed, f)
			}
			g := beliefGrant(r.History, old)
			refusal := refusedOp(r.History, old, g)
			if refusal == nil || !slices.Contains(f.Lines, refusal.Line) || refusal.OK || !refusal.Returned {
				t.Fatalf("seed %d: the finding does not cite a refusal: %+v", seed, f)
			}
			// Without the rule: the stopped clock's budget covers it all.
			budget := stopped(rec(r), old.Process, f.From, f.To) + frozen(rec(r), old.Process, confirmedAt(r.History, old, g, f.From), f.To)
			if budget >= f.To-f.From {
				caught++
			}
		}
	}
	if caught == 0 {
		t.Fatal("no belief after a refusal that the time budget would have excused: the rule is untested")
	}
	if refusedInOverlap == 0 {
		t.Fatal("the reference never had a refusal inside an overlap: the no-false-alarm half is vacuous")
	}
	t.Logf("%d findings only the refusal rule makes; %d reference refusals inside overlaps, none flagged", caught, refusedInOverlap)
}

// beliefAt is the older belief of an exclusive-belief finding: the one of
// the lower fence among those overlapping its span.
func beliefAt(r *sim.Result, f Finding) *sim.Belief {
	var old *sim.Belief
	for i := range r.Beliefs {
		b := &r.Beliefs[i]
		if b.From <= f.From && b.To >= f.To && (old == nil || b.Fence < old.Fence) {
			old = b
		}
	}
	return old
}

// refusalsInOverlaps counts the beliefs overlapping another holder's whose
// holder was refused during the overlap.
func refusalsInOverlaps(r *sim.Result) int {
	n := 0
	for i := range r.Beliefs {
		for j := range r.Beliefs {
			a, b := &r.Beliefs[i], &r.Beliefs[j]
			if a.Process == b.Process || a.Fence >= b.Fence {
				continue
			}
			lo, hi := max(a.From, b.From), min(a.To, b.To)
			if op := refusedOp(r.History, a, beliefGrant(r.History, a)); hi > lo && op != nil && op.Return >= lo && op.Return <= hi {
				n++
			}
		}
	}
	return n
}

// TestFencedOverlapIsAWarning: one rule, both ways, on the simulator. A
// holder that keeps no deadline of its own (no-local-deadline) believes on
// after its renewals die. Its runs declared advisory (as vclient declares
// client-go's) in fenced storage, against the reference resource — which
// refuses the older fence once it has accepted a newer one — its
// unexcused overlaps are warnings, told but violating nothing; against a
// resource that compares no fences (write-without-fence-check) its late
// writes are accepted after its successor's, and the overlap is a
// violation that cites the stale write; undeclared (the simulator's holders
// promise their beliefs), and in seed semantics, the overlap is a violation.
func TestFencedOverlapIsAWarning(t *testing.T) {
	m := mutants.ByName("no-local-deadline")
	bugHolder := m.Machines().NewHolder
	noCheck := mutants.ByName("write-without-fence-check").Machines().NewResource
	run := func(sc *scenario.Scenario, opts *sim.Options, advisory bool) (v, w []Finding) {
		r, err := sim.Run(sc, opts)
		if err != nil {
			t.Fatal(err)
		}
		r.AdvisoryBelief = advisory
		return JudgeWarned(sim.Record(r))
	}
	belief := func(fs []Finding) bool {
		return slices.ContainsFunc(fs, func(f Finding) bool { return f.Property == ExclusiveBelief })
	}
	var warned, stale, promised, seedSem int
	for seed := uint64(1); seed <= 300 && (warned == 0 || stale == 0); seed++ {
		sc := m.Scenario(seed)
		sc.Semantics = "fenced-storage"
		v, w := run(sc, &sim.Options{NewHolder: bugHolder}, true)
		if belief(v) {
			t.Fatalf("seed %d: advisory, fenced, the fence working: an exclusive-belief violation %+v", seed, v)
		}
		if len(w) == 0 {
			continue
		}
		warned++
		if !w[0].Warning || !strings.Contains(w[0].Explanation, "A warning, not a violation") {
			t.Errorf("seed %d: the warning does not say why it is one: %+v", seed, w[0])
		}
		if v, w := run(sc, &sim.Options{NewHolder: bugHolder}, false); belief(v) && len(w) == 0 {
			promised++
		}
		v, _ = run(sc, &sim.Options{NewHolder: bugHolder, NewResource: noCheck}, true)
		for _, f := range v {
			if f.Property == ExclusiveBelief && strings.Contains(f.Explanation, "The fence did not keep it harmless") {
				stale++
				break
			}
		}
		sc.Semantics = "seed"
		if v, w := run(sc, &sim.Options{NewHolder: bugHolder}, true); belief(v) && len(w) == 0 {
			seedSem++
		}
	}
	if warned == 0 || stale == 0 || promised != warned || seedSem != warned {
		t.Fatalf("advisory in fenced storage: %d seeds warned, %d violated citing a stale write (fence unchecked); undeclared %d violated, in seed semantics %d: want each > 0, the last two = the first",
			warned, stale, promised, seedSem)
	}
	t.Logf("%d seeds warned; of them %d violated with the fence unchecked; all of them violate undeclared and in seed semantics", warned, stale)
}

// TestStaleWriteWindow: staleWrite names only a write under the older fence,
// sent while its holder believed, accepted after a newer fence's write was.
func TestStaleWriteWindow(t *testing.T) {
	b := &sim.Belief{Process: "h1", Owner: "h1", Fence: 1, From: 0, To: 100}
	h := &model.History{Ops: []model.Op{
		{Line: 1, Kind: model.Write, Owner: "h1", Fence: 1, OK: true, Returned: true, Call: 30, At: 40, HasAt: true},   // before the newer fence: fine
		{Line: 2, Kind: model.Write, Owner: "h2", Fence: 2, OK: true, Returned: true, Call: 45, At: 50, HasAt: true},   // the newer fence accepted
		{Line: 3, Kind: model.Write, Owner: "h1", Fence: 1, OK: false, Returned: true, Call: 55, At: 60, HasAt: true},  // refused: the fence working
		{Line: 4, Kind: model.Write, Owner: "h1", Fence: 1, OK: true, Returned: true, Call: 110, At: 120, HasAt: true}, // sent after the belief ended
	}}
	if op := staleWrite(h, b, b.Fence); op != nil {
		t.Errorf("staleWrite = line %d; want none", op.Line)
	}
	h.Ops[2].OK, h.Ops[2].Returned = true, false // accepted, its answer lost
	if op := staleWrite(h, b, b.Fence); op == nil || op.Line != 3 {
		t.Errorf("staleWrite = %+v; want line 3", op)
	}
	h.Ops[1].OK = false // the newer fence's write refused: nothing newer was accepted
	if op := staleWrite(h, b, b.Fence); op != nil {
		t.Errorf("staleWrite = line %d with no newer fence accepted", op.Line)
	}
}

// TestRenewalAcceptsReleaseThenGrant: liveness-renewal is judged both
// ways on one history shape. A holder that released its lease (a graceful
// step-down) and acquires it again later has not lost it; one granted a
// second time with no release in between has.
func TestRenewalAcceptsReleaseThenGrant(t *testing.T) {
	run := func(release bool, extra ...model.Op) []Finding {
		sc := &scenario.Scenario{Version: scenario.Version, Seed: 1, Semantics: "seed", Key: "lease", TTL: 15000, Horizon: 60000,
			Network: scenario.Network{MaxDelay: 3},
			Holders: []scenario.Process{{Name: "h1", Timeout: 10000, RenewEvery: 2000}, {Name: "h2", Timeout: 10000, RenewEvery: 2000}},
			Faults:  faults.Plan{{Kind: faults.Shutdown, Target: "h1", At: 5000}}}
		op := func(kind model.Kind, proc string, at int64) model.Op {
			return model.Op{Kind: kind, Process: proc, Owner: proc, Key: "lease", Call: at, At: at, HasAt: true, Return: at + 2, Returned: true, OK: true, TTL: 15000}
		}
		h := &model.History{Header: model.DefaultHeader()}
		h.Header.Fences = model.NoFences
		h.Ops = append(h.Ops, op(model.Acquire, "h1", 10), op(model.Renew, "h1", 2010))
		if release {
			h.Ops = append(h.Ops, op(model.Release, "h1", 5000))
		}
		h.Ops = append(h.Ops, op(model.Acquire, "h1", 7000))
		h.Ops = append(h.Ops, extra...)
		h.NumberLines()
		r := &sim.Result{Scenario: sc, History: h, Plan: sc.Faults, Stats: sim.Stats{End: sc.Horizon}}
		if !RenewalApplies(sim.Record(r)) {
			t.Fatal("liveness-renewal does not apply: the test judges nothing")
		}
		return renewal(rec(r))
	}
	if fs := run(true); len(fs) != 0 {
		t.Errorf("a release, then a new grant: %+v", fs)
	}
	fs := run(false)
	if len(fs) != 1 || fs[0].Property != LivenessRenewal || !strings.Contains(fs[0].Explanation, "acquired a second time") {
		t.Errorf("a second grant with no release: %+v", fs)
	}
	// A restarted incarnation under h2's identity whose first renew of
	// the record it found loses to a takeover: it held nothing to lose.
	// The same refusal after a renew of its own that succeeded is a lost
	// lease.
	refused := model.Op{Kind: model.Renew, Process: "h2#2", Owner: "h2", Key: "lease", Call: 9000, At: 9001, HasAt: true, Return: 9002, Returned: true, Error: "not-holder", TTL: 15000}
	if fs := run(true, refused); len(fs) != 0 {
		t.Errorf("an inherited record's renew refused: %+v", fs)
	}
	ok := refused
	ok.Call, ok.At, ok.Return, ok.OK, ok.Error = 8000, 8001, 8002, true, ""
	fs = run(true, ok, refused)
	if len(fs) != 1 || !strings.Contains(fs[0].Explanation, "renew was refused") {
		t.Errorf("a renew refused after one that succeeded: %+v", fs)
	}
}

// fenceZeroRun: h1 is paused past its lease (the article's GC pause) and
// believes, stopped, while h2 is granted fence 2 and renews; with bug, h2
// is the planted holder that overwrites its own fence with 0 on renew.
func fenceZeroRun(t *testing.T, bug bool) *sim.Result {
	t.Helper()
	sc := &scenario.Scenario{
		Version: scenario.Version, Seed: 1, Semantics: "seed", Key: "k", TTL: 100, Horizon: 1500,
		Network: scenario.Network{MinDelay: 1, MaxDelay: 1},
		Holders: []scenario.Process{
			{Name: "h1", Work: []holder.Item{{Work: 150, Writes: 1}}},
			{Name: "h2", Start: 20, Work: []holder.Item{{Work: 200, Writes: 1}}},
		},
		Faults: faults.Plan{{Kind: faults.Pause, Target: "h1", At: 40, Duration: 300}},
	}
	r, err := sim.Run(sc, &sim.Options{NewHolder: func(c holder.Config) machine.Holder {
		if bug && c.Owner == "h2" {
			c.Bugs |= holder.BugFenceZeroOnRenew
		}
		return holder.New(c)
	}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestFenceOverwriteBlamesItsHolder: a holder that overwrites its own fence
// with 0 on renew is reported as itself (belief-fence, naming h2, its
// grant's line and the fence it was granted), and the overlap with the
// older, paused holder stays excused: which grant is older is the
// coordinator's word. Trusting the holders' fences made h2 (fence 0) the
// older one, unpaused: exclusive-belief against the newest holder. The
// reference in the same run: nothing.
func TestFenceOverwriteBlamesItsHolder(t *testing.T) {
	if fs := Judge(sim.Record(fenceZeroRun(t, false))); len(fs) > 0 {
		t.Fatalf("the reference: %+v", fs)
	}
	r := fenceZeroRun(t, true)
	var zero, granted bool
	for _, b := range r.Beliefs {
		zero = zero || b.Process == "h2" && b.Fence == 0
		granted = granted || b.Process == "h1" && b.Fence == 1 && b.To > 200
	}
	if !zero || !granted {
		t.Fatalf("the run did not plant what it says (h2 under fence 0: %v, h1 believing paused: %v): %+v", zero, granted, r.Beliefs)
	}
	fs := Judge(sim.Record(r))
	var found *Finding
	for i, f := range fs {
		switch f.Property {
		case BeliefFence:
			if found == nil {
				found = &fs[i] // its first grant's; it misreports every grant
			}
		case ExclusiveBelief:
			t.Errorf("exclusive-belief blames an overlap the paused older holder excuses: %s", f.Explanation)
		}
	}
	if found == nil {
		t.Fatalf("belief-fence not found: %+v", fs)
	}
	g := beliefGrant(r.History, &r.Beliefs[slices.IndexFunc(r.Beliefs, func(b sim.Belief) bool { return b.Fence == 0 })])
	if g == nil || g.Fence != 2 || !slices.Contains(found.Lines, g.Line) {
		t.Errorf("finding %+v does not cite h2's grant %+v", found, g)
	}
	for _, w := range []string{"h2 believed it held the lease under fence 0", "the coordinator granted it fence 2"} {
		if !strings.Contains(found.Explanation, w) {
			t.Errorf("story %q does not say %q", found.Explanation, w)
		}
	}
	// The old judge, trusting the holders' fences, had the order backwards.
	for i := range r.Beliefs {
		for j := range r.Beliefs {
			a, b := &r.Beliefs[i], &r.Beliefs[j]
			if a.Process == "h1" && b.Process == "h2" && b.Fence == 0 && max(a.From, b.From) < min(a.To, b.To) {
				if olderGrant(beliefGrant(r.History, b), beliefGrant(r.History, a), b, a) || !(b.Fence < a.Fence) {
					t.Errorf("h1's grant should be older by the coordinator and younger by the holders' word")
				}
				return
			}
		}
	}
	t.Error("h1's paused belief and h2's fence-0 belief never overlap: the test shows nothing about attribution")
}

// TestLateGrantStory: a holder that believes on a grant whose answer came
// after it had moved on (the history keeps that acquire unanswered) is told
// as such — the coordinator did grant that request something — not as a
// fence "granted it nothing since"; a belief under a fence no request of its
// own could have carried keeps the plain wording.
func TestLateGrantStory(t *testing.T) {
	result := func(late bool) *sim.Result {
		h := &model.History{}
		h.Header.Fences = model.Sequential
		h.Ops = []model.Op{
			{Line: 1, Process: "h1", Owner: "h1", Key: "k", Kind: model.Acquire, TTL: 100, Fence: 1, Call: 0, Return: 2, Returned: true, OK: true},
			{Line: 2, Process: "h1", Owner: "h1", Key: "k", Kind: model.Release, Fence: 1, Call: 10, Return: 12, Returned: true, OK: true},
		}
		if late {
			h.Ops = append(h.Ops, model.Op{Line: 3, Process: "h1", Owner: "h1", Key: "k", Kind: model.Acquire, TTL: 100, Call: 20})
		}
		return &sim.Result{History: h, Beliefs: []sim.Belief{{Process: "h1", Owner: "h1", Fence: 2, From: 40, To: 60}}}
	}
	for _, late := range []bool{false, true} {
		fs := beliefFence(rec(result(late)))
		if len(fs) != 1 {
			t.Fatalf("late=%v: want one belief-fence finding, got %+v", late, fs)
		}
		story := fs[0].Explanation
		plain := strings.Contains(story, "granted it nothing since")
		told := strings.Contains(story, "took that answer late") && strings.Contains(story, "(line 3)")
		if plain == late || told != late {
			t.Errorf("late=%v: story %q", late, story)
		}
		if late && !slices.Contains(fs[0].Lines, 3) {
			t.Errorf("the late acquire's line is not cited: %v", fs[0].Lines)
		}
	}
}

// rec is r's record, as the run properties judge it.
func rec(r *sim.Result) *runrecord.Run {
	x := sim.Record(r)
	return &x
}

// TestWriteAfterOwnRelease: a write sent before its holder's own release
// and applied after it is named with that release; one applied before the
// release, one sent after it, another's, or a refused one is not.
func TestWriteAfterOwnRelease(t *testing.T) {
	h := &model.History{Ops: []model.Op{
		{Line: 1, Process: "h1", Kind: model.Write, OK: true, Returned: true, Call: 10, At: 20, HasAt: true},   // applied before the release
		{Line: 2, Process: "h1", Kind: model.Release, OK: true, Returned: true, Call: 25, At: 30, HasAt: true}, // the release
		{Line: 3, Process: "h2", Kind: model.Write, OK: true, Returned: true, Call: 26, At: 40, HasAt: true},   // another's
		{Line: 4, Process: "h1", Kind: model.Write, OK: true, Returned: true, Call: 35, At: 45, HasAt: true},   // sent after the release
		{Line: 5, Process: "h1", Kind: model.Write, OK: false, Returned: true, Call: 27, At: 50, HasAt: true},  // refused
	}}
	if w, _ := writeAfterOwnRelease(h, "h1"); w != nil {
		t.Errorf("writeAfterOwnRelease = line %d; want none", w.Line)
	}
	h.Ops[4].OK = true // delayed past the release, and applied
	if w, rel := writeAfterOwnRelease(h, "h1"); w == nil || w.Line != 5 || rel.Line != 2 {
		t.Errorf("writeAfterOwnRelease = %v, %v; want line 5 after the release at line 2", w, rel)
	}
}
