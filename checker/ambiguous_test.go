package checker

import (
	"fmt"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/model"
	"pgregory.net/rapid"
)

// The class of interval-memory-budget (ambiguousWorkload): a clock
// uncertainty that dwarfs the TTL, so that whether a lease had expired is
// ambiguous at almost every op, and retried acquires whose answers were
// lost. Correct ones must hold, planted violations (none of which any
// clock reading explains) must be caught, in exact and in interval mode.

// On small histories of the class, the checker against the brute force
// (every order, every clock value, every subset of the unanswered ops): it
// never rejects what the brute force explains; with every op's at known it
// never accepts what the brute force cannot explain; and every planted
// violation is rejected by both.
func TestAmbiguousExpiryAgreesWithBruteForce(t *testing.T) {
	cases, planted := 0, 0
	for seed := range uint64(300) {
		ttl := int64(1 + seed%3)
		aw := ambiguousWorkload{
			ops: 5 + int(seed%5), holders: 2, ttl: ttl, u: ttl * int64(3+seed%4), lost: 0.4,
			semantics: []model.Semantics{model.FencedStorage, model.Seed}[seed%2],
			plant:     plantKind(seed/2) % plantKinds, seed: seed,
		}
		h, ok := aw.history()
		if aw.plant != plantNone && !ok {
			continue
		}
		cases++
		for _, hh := range []*model.History{h, interval(h)} {
			if err := model.Validate(hh); err != nil {
				t.Fatalf("%s: the generator made an invalid history: %v", aw.name(), err)
			}
			want := bruteLinearizable(hh)
			got := mustCheck(t, hh, Options{Timeout: -1}).Verdict(Linearizable)
			mode := "interval"
			if allAt(hh) {
				mode = "exact"
			}
			switch {
			case got == Unknown:
				t.Fatalf("%s (%s): undecided\n%s", aw.name(), mode, describeBrute(hh))
			case want && got != Holds:
				t.Fatalf("%s (%s): the brute force explains it, the checker says %s\n%s", aw.name(), mode, got, describeBrute(hh))
			case !want && got == Holds && allAt(hh):
				t.Fatalf("%s (%s): the brute force cannot explain it, the checker says holds\n%s", aw.name(), mode, describeBrute(hh))
			case aw.plant == plantNone && !want:
				t.Fatalf("%s (%s): the generator's correct history is not linearizable\n%s", aw.name(), mode, describeBrute(hh))
			case aw.plant != plantNone && (want || got != Violated):
				t.Fatalf("%s (%s): planted violation: brute force %v, checker %s\n%s", aw.name(), mode, want, got, describeBrute(hh))
			}
		}
		if aw.plant != plantNone {
			planted++
		}
	}
	if planted < cases/2 {
		t.Fatalf("only %d of %d small histories carry a planted violation", planted, cases)
	}
}

// At the sizes where the uncertainty made the checker give up (100 to 1000
// ops, TTL 30, uncertainty 188, half the answers lost), in interval mode:
// every correct history holds, every planted violation is caught, and each
// is decided — not left unknown — inside a budget far below the default.
func TestAmbiguousExpiryDecided(t *testing.T) {
	for _, n := range []int{100, 300, 1000} {
		for _, sem := range []model.Semantics{model.FencedStorage, model.Seed} {
			for seed := range uint64(max(1, 400/n)) {
				for pk := plantNone; pk < plantKinds; pk++ {
					aw := ambiguousWorkload{ops: n, holders: 3, ttl: 30, u: 188, lost: 0.5, semantics: sem, plant: pk, seed: seed}
					h, ok := aw.history()
					if !ok {
						t.Fatalf("%s: no place for the violation", aw.name())
					}
					r := mustCheck(t, interval(h), Options{Timeout: time.Minute, MaxMemory: 128 << 20, Workers: 1})
					got := r.Verdict(Linearizable)
					switch {
					case got == Unknown:
						t.Errorf("%s: undecided: %s", aw.name(), r.Reason)
					case pk == plantNone && !r.OK():
						t.Errorf("%s: a correct history: verdicts %+v, violations %+v", aw.name(), r.Properties, r.Violations)
					case pk != plantNone && got != Violated:
						t.Errorf("%s: the planted violation was not caught (%s)", aw.name(), got)
					}
				}
			}
		}
	}
}

// Streamed, the class is decided as in memory, in exact and interval mode:
// the pass without a survey (one read of a time-ordered file) does not know
// the largest fence or which values were read, and its search works past
// its allowance (guessWork) on this class; it gives way to a survey and a
// second pass with the facts, instead of running into the budget.
func TestAmbiguousExpiryDecidedStreamed(t *testing.T) {
	dir := t.TempDir()
	sizes, sems := []int{100, 300}, []model.Semantics{model.FencedStorage, model.Seed}
	if testing.Short() {
		// The cases that ran into the budget before (300 ops, interval
		// mode), one semantics: the race run's share.
		sizes, sems = []int{300}, sems[:1]
	}
	for _, n := range sizes {
		for _, sem := range sems {
			for pk := plantNone; pk < plantKinds; pk++ {
				aw := ambiguousWorkload{ops: n, holders: 3, ttl: 30, u: 188, lost: 0.5, semantics: sem, plant: pk, seed: 1}
				h, ok := aw.history()
				if !ok {
					t.Fatalf("%s: no place for the violation", aw.name())
				}
				hs := []*model.History{h, interval(h)}
				if testing.Short() {
					hs = hs[1:]
				}
				for _, hh := range hs {
					mem := mustCheck(t, hh, Options{Timeout: 30 * time.Second, MaxMemory: 128 << 20, Workers: 1})
					r := streamed(t, dir, hh, Options{Timeout: 30 * time.Second, MaxMemory: 128 << 20, Workers: 1})
					got := r.Verdict(Linearizable)
					switch {
					case got == Unknown:
						t.Errorf("%s (exact %v): undecided when streamed: %s", aw.name(), allAt(hh), r.Reason)
					case got != mem.Verdict(Linearizable):
						t.Errorf("%s (exact %v): streamed %s, in memory %s", aw.name(), allAt(hh), got, mem.Verdict(Linearizable))
					case pk == plantNone && !r.OK():
						t.Errorf("%s: a correct history, streamed: verdicts %+v, violations %+v", aw.name(), r.Properties, r.Violations)
					case pk != plantNone && got != Violated:
						t.Errorf("%s: the planted violation was not caught when streamed (%s)", aw.name(), got)
					}
				}
			}
		}
	}
}

// BenchmarkAmbiguousExpiry: the class at growing sizes, interval mode,
// correct and with a stale write accepted. Before the fence abstraction
// (fenceFacts) every one of them was undecided at the 1 GiB budget.
func BenchmarkAmbiguousExpiry(b *testing.B) {
	for _, n := range []int{100, 300, 1000} {
		for _, pk := range []plantKind{plantNone, plantStaleWrite} {
			aw := ambiguousWorkload{ops: n, holders: 3, ttl: 30, u: 188, lost: 0.5, semantics: model.FencedStorage, plant: pk, seed: 1}
			h, _ := aw.history()
			h = interval(h)
			b.Run(fmt.Sprintf("%d-ops/%s", n, pk), func(b *testing.B) {
				b.ReportAllocs()
				peak := samplePeak()
				for b.Loop() {
					r := mustCheck(b, h, Options{Timeout: 2 * time.Minute, Workers: 1})
					if got, want := r.Verdict(Linearizable), map[bool]Verdict{true: Holds, false: Violated}[pk == plantNone]; got != want {
						b.Fatalf("linearizable %s, want %s (%s)", got, want, r.Reason)
					}
				}
				b.ReportMetric(peak.mib(), "peak-MiB")
			})
		}
	}
}

// On random histories of the class (sizes, TTLs, uncertainties, losses,
// holders, semantics, plants, exact or interval), the streamed check never
// gives the opposite verdict to the in-memory one; small ones (a few ops,
// TTL and uncertainty of a few units) are held to the brute force, so that the stream's lookahead cuts (fencesAhead) are
// shown to cut nothing real: it never rejects what some order explains.
func TestPropertyAmbiguousStreamedAgrees(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(t *rapid.T) {
		ttl := rapid.Int64Range(1, 40).Draw(t, "ttl")
		aw := ambiguousWorkload{
			ops:       rapid.IntRange(4, 60).Draw(t, "ops"),
			holders:   rapid.IntRange(1, 4).Draw(t, "holders"),
			ttl:       ttl,
			u:         ttl * rapid.Int64Range(0, 8).Draw(t, "u/ttl"),
			lost:      float64(rapid.IntRange(0, 8).Draw(t, "lost/10")) / 10,
			semantics: rapid.SampledFrom([]model.Semantics{model.FencedStorage, model.Seed}).Draw(t, "semantics"),
			plant:     plantKind(rapid.IntRange(0, int(plantKinds)-1).Draw(t, "plant")),
			seed:      rapid.Uint64().Draw(t, "seed"),
		}
		h, _ := aw.history()
		if rapid.Bool().Draw(t, "interval") {
			h = interval(h)
		}
		mem := mustCheck(nil, h, Options{Timeout: 10 * time.Second, Workers: 1})
		str := streamed(t, dir, h, Options{Timeout: 10 * time.Second, Workers: 1}) // Unknown past it: allowed
		m, s := mem.Verdict(Linearizable), str.Verdict(Linearizable)
		if m != Unknown && s != Unknown && m != s {
			t.Fatalf("%s: in memory %s, streamed %s", aw.name(), m, s)
		}
		// The brute force tries every clock value: only on the scales
		// TestAmbiguousExpiryAgreesWithBruteForce uses (it is exponential
		// in them: a TTL of 40 ran for minutes).
		if len(h.Ops) <= 9 && aw.ttl <= 3 && aw.u <= 6*aw.ttl {
			want := bruteLinearizable(h)
			if want && s == Violated {
				t.Fatalf("%s: the brute force explains it, the stream says violated\n%s", aw.name(), describeBrute(h))
			}
			if !want && s == Holds && allAt(h) {
				t.Fatalf("%s: the brute force cannot explain it, the stream says holds\n%s", aw.name(), describeBrute(h))
			}
		}
	})
}
