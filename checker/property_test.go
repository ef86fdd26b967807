package checker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/leasecheck/leasecheck/internal/timed"
	"github.com/leasecheck/leasecheck/model"
	"pgregory.net/rapid"
)

func check(h *model.History) *Result {
	return mustCheck(nil, h, Options{Timeout: -1})
}

// mustCheck is Check on a history the test built, which must be valid (a
// nil tb panics instead of failing).
func mustCheck(tb testing.TB, h *model.History, opts Options) *Result {
	r, err := Check(context.Background(), h, opts)
	if err != nil {
		if tb == nil {
			panic(fmt.Sprintf("%v\n%s", err, describeHistory(h)))
		}
		tb.Helper()
		tb.Fatalf("Check: %v\n%s", err, describeHistory(h))
	}
	return r
}

func describeHistory(h *model.History) string {
	s := fmt.Sprintf("semantics=%s u=%d\n", h.Header.Semantics, h.Header.ClockUncertainty)
	for i := range h.Ops {
		s += fmt.Sprintf("  %d %s key=%s\n", h.Ops[i].Line, h.Ops[i].Describe(), h.Ops[i].Key)
	}
	return s
}

var genModes = []struct {
	name string
	o    genOptions
}{
	{"exact", genOptions{exact: true}},
	{"exact-skewed", genOptions{exact: true, uncertainty: 3}},
	{"interval", genOptions{uncertainty: 2}},
	{"interval-zero", genOptions{}},
	{"exact-unknown", genOptions{exact: true, unknown: true, uncertainty: 1}},
	{"interval-unknown", genOptions{unknown: true, uncertainty: 2}},
	{"fenced-exact", genOptions{semantics: model.FencedStorage, exact: true, unknown: true}},
	{"fenced-interval", genOptions{semantics: model.FencedStorage, unknown: true, uncertainty: 2}},
	{"two-keys", genOptions{exact: true, unknown: true, keys: 2}},
	{"increasing-exact", genOptions{exact: true, unknown: true, increasing: true}},
	{"increasing-interval", genOptions{unknown: true, uncertainty: 2, increasing: true}},
	{"increasing-fenced", genOptions{semantics: model.FencedStorage, unknown: true, uncertainty: 1, increasing: true}},
	{"fence-less", genOptions{noFences: true, unknown: true, uncertainty: 2}},
	{"fence-less-exact", genOptions{noFences: true, exact: true, unknown: true, keys: 2}},
}

// A correct coordinator's history is never flagged, whatever the clock
// uncertainty, the time mode or the lost responses (docs/specification.md §3: "a false
// alarm on a correct history is not [acceptable]"). The generated clients
// do not follow the iron rule, so stop-on-renew-failure is not asserted.
func TestPropertyCorrectHistoriesHold(t *testing.T) {
	for _, m := range genModes {
		t.Run(m.name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				h := genHistory(t, m.o)
				r := check(h)
				for _, p := range []string{Linearizable, SingleWriterPerFence, FenceMonotonic, StaleWrite} {
					if p == StaleWrite && m.o.semantics == model.FencedStorage {
						// The clients may present an older fence of their
						// own, which a fenced resource accepts after a later
						// holder's write: stale-write, rightly (iron-rule
						// clients present their latest, and hold it).
						continue
					}
					if v := r.Verdict(p); v != Holds {
						t.Fatalf("%s = %s on a correct history, want holds\n%s\nviolations: %+v", p, v, describeHistory(h), r.Violations)
					}
				}
			})
		})
	}
}

// With exact clock readings, strictly increasing, and no lost responses,
// the order is unique and every outcome is determined: changing any one
// outcome must be caught.
func TestPropertyChangedOutcomeIsCaught(t *testing.T) {
	for _, sem := range []model.Semantics{model.Seed, model.FencedStorage} {
		t.Run(sem.String(), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				h := genHistory(t, genOptions{semantics: sem, exact: true, strict: true})
				i := rapid.IntRange(0, len(h.Ops)-1).Draw(t, "op to change")
				op := &h.Ops[i]
				switch {
				case op.Kind == model.Read:
					op.Value, op.HasValue = "never written", true
				case op.Kind == model.Acquire && op.OK:
					op.OK, op.Fence = false, 0
				case op.Kind == model.Acquire:
					op.OK, op.Fence = true, rapid.Int64Range(1, 5).Draw(t, "fence")
				default:
					op.OK = !op.OK
				}
				r := check(h)
				if r.Verdict(Linearizable) != Violated {
					t.Fatalf("changed line %d, yet linearizable = %s\n%s", op.Line, r.Verdict(Linearizable), describeHistory(h))
				}
			})
		})
	}
}

// Porcupine, given the same model, is an independent oracle. Without lost
// responses the two must agree exactly. With them, ours is the tighter
// search (it bounds an unknown op's clock by the ops after it), so it may
// reject what porcupine accepts, never the other way round. Porcupine is
// told each process's order at equal times by a renumbering of the times
// (timed.PorcupineOperations) that is exact unless two processes of a key
// both have such a tie at one instant; those histories are skipped.
func TestPropertyAgreesWithPorcupine(t *testing.T) {
	for _, m := range genModes {
		t.Run(m.name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				o := m.o
				o.maxOps = 14
				h := genHistory(t, o)
				if rapid.Bool().Draw(t, "corrupt") {
					op := &h.Ops[rapid.IntRange(0, len(h.Ops)-1).Draw(t, "op to corrupt")]
					if op.Returned && op.Kind != model.Acquire {
						op.OK = !op.OK
					}
				}
				wrong, skip := porcupineDisagrees(h, func() Verdict { return check(h).Verdict(Linearizable) }, 20*time.Second)
				if skip != "" {
					t.Skip(skip)
				}
				if wrong != "" {
					t.Fatalf("%s\n%s", wrong, describeHistory(h))
				}
			})
		})
	}
}

// porcupineDisagrees holds ours, leasecheck's linearizability verdict on h,
// to porcupine's on the same model (run for at most d): porcupine's Illegal
// must be Violated; its Ok must be Holds unless an answer was lost, where
// ours is the tighter search (it bounds an unknown op's clock by the ops
// after it). wrong says how they disagree; skip why porcupine could not
// judge (two processes of a key tied at one instant, or no verdict in d).
//
// ours is asked for the verdict only once porcupine has one: the check
// these tests run has no budget, and a history porcupine gives up on may
// be a long search for it too.
func porcupineDisagrees(h *model.History, ours func() Verdict, d time.Duration) (wrong, skip string) {
	if timed.TieConflict(h) {
		return "", "porcupine cannot be told this history's process order at ties"
	}
	c := timed.Compile(h)
	pm := timed.PorcupineModel(c)
	want := porcupine.CheckOperationsTimeout(pm.ToModel(), timed.PorcupineOperations(c, nil), d)
	if want == porcupine.Unknown {
		return "", fmt.Sprintf("porcupine did not finish in %v", d)
	}
	got := ours()
	lost := false
	for i := range h.Ops {
		lost = lost || !h.Ops[i].Returned
	}
	if want == porcupine.Illegal && got != Violated || want == porcupine.Ok && got != Holds && !lost {
		return fmt.Sprintf("porcupine says %s, leasecheck says %s", want, got), ""
	}
	return "", ""
}

// Clients that follow the iron rule produce histories where all six
// history properties hold.
func TestPropertyIronRuleHistoriesHoldEverything(t *testing.T) {
	for _, m := range genModes {
		t.Run(m.name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				o := m.o
				o.ironRule = true
				h := genHistory(t, o)
				if r := check(h); !r.OK() {
					t.Fatalf("violations on a correct history:\n%s\n%+v", describeHistory(h), r.Violations)
				}
			})
		})
	}
}

// appendOp adds an op after everything else in a history: called after the
// last return, by its own process unless process is given.
func appendOp(h *model.History, op model.Op) *model.Op {
	end := int64(0)
	for i := range h.Ops {
		end = max(end, h.Ops[i].Call, h.Ops[i].Return, h.Ops[i].At)
	}
	if op.Process == "" {
		op.Process = fmt.Sprintf("late%d", len(h.Ops))
	}
	op.Call, op.Return, op.Returned = end+1, end+1, true
	op.At, op.HasAt = end+1, true
	op.Line = len(h.Ops) + 2
	h.Ops = append(h.Ops, op)
	return &h.Ops[len(h.Ops)-1]
}

// lastGranted returns the last successful acquire (nil if none).
func lastGranted(h *model.History) *model.Op {
	for i := len(h.Ops) - 1; i >= 0; i-- {
		if op := &h.Ops[i]; op.Kind == model.Acquire && op.Returned && op.OK {
			return op
		}
	}
	return nil
}

// Each fast property rejects a broken history: a correct one plus one
// injected operation that breaks exactly that property. The named property
// must be violated and must name the injected line.
func TestPropertyInvariantsCatchInjectedBugs(t *testing.T) {
	inject := map[string]func(t *rapid.T, h *model.History) *model.Op{
		SingleWriterPerFence: func(t *rapid.T, h *model.History) *model.Op {
			g := lastGranted(h)
			// Another owner's write under g's fence, accepted.
			return appendOp(h, model.Op{Owner: g.Owner + "-impostor", Key: g.Key, Kind: model.Write, Fence: g.Fence, Value: "impostor", HasValue: true, OK: true})
		},
		FenceMonotonic: func(t *rapid.T, h *model.History) *model.Op {
			g := lastGranted(h)
			// A later grant that does not exceed an earlier one.
			f := rapid.Int64Range(1, g.Fence).Draw(t, "reused fence")
			return appendOp(h, model.Op{Owner: "late-owner", Key: g.Key, Kind: model.Acquire, TTL: 5, Fence: f, OK: true})
		},
		StopOnRenewFailure: func(t *rapid.T, h *model.History) *model.Op {
			g := lastGranted(h)
			r := appendOp(h, model.Op{Process: "zombie", Owner: g.Owner, Key: g.Key, Kind: model.Renew, TTL: 5, Fence: g.Fence, OK: false, Error: "expired"})
			_ = r
			ok := rapid.Bool().Draw(t, "write accepted")
			return appendOp(h, model.Op{Process: "zombie", Owner: g.Owner, Key: g.Key, Kind: model.Write, Fence: g.Fence, Value: "after-failed-renew", HasValue: true, OK: ok})
		},
	}
	for _, prop := range []string{SingleWriterPerFence, FenceMonotonic, StopOnRenewFailure} {
		t.Run(prop, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				h := genHistory(t, genOptions{exact: true, ironRule: true, unknown: true, keys: 2})
				if lastGranted(h) == nil {
					t.Skip("no grant to break")
				}
				bad := inject[prop](t, h)
				r := check(h)
				if r.Verdict(prop) != Violated {
					t.Fatalf("%s = %s after injecting line %d\n%s", prop, r.Verdict(prop), bad.Line, describeHistory(h))
				}
				for _, v := range r.Violations {
					if v.Property == prop && slices.Contains(v.Lines, bad.Line) {
						return
					}
				}
				t.Fatalf("no %s violation names line %d: %+v", prop, bad.Line, r.Violations)
			})
		})
	}
}

// Check refuses a malformed history with the reader's error, not a verdict.
func TestCheckRefusesMalformedHistory(t *testing.T) {
	h := &model.History{Name: "mem", Header: model.DefaultHeader(), Ops: []model.Op{
		{Line: 2, Process: "A", Owner: "A", Kind: model.Acquire, TTL: 5, Fence: 1, Call: 0, Return: 1, Returned: true, OK: true},
		{Line: 3, Process: "A", Owner: "A", Kind: model.Write, Value: "x", HasValue: true, Call: 2, Return: 3, Returned: true, OK: true},
	}}
	r, err := Check(context.Background(), h, Options{})
	var pe *model.ParseError
	if r != nil || !errors.As(err, &pe) || pe.Line != 3 || !strings.Contains(pe.Reason, `"fence" is required for write`) {
		t.Fatalf("Check = %v, %v; want no result and mem:3: field \"fence\" is required for write", r, err)
	}
	h.Ops[1].Fence = 1
	if _, err := Check(context.Background(), h, Options{}); err != nil {
		t.Fatalf("the fixed history: %v", err)
	}
}

// The porcupine-as-oracle property on the timeout shapes, at the sizes
// porcupine finishes: distinct timed-out renews (without fences) and
// writes, exact and interval, correct and with one bad write. Never accept
// what porcupine rejects; never reject what it accepts where it is exact
// (no lost answers it could place anywhere: porcupine gives each an
// infinite window, so it may accept what the timed bound refutes).
func TestPropertyTimeoutShapesAgreeWithPorcupine(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tw := timeoutWorkload{
			ops:      rapid.IntRange(20, 120).Draw(t, "ops"),
			procs:    rapid.IntRange(2, 8).Draw(t, "procs"),
			lost:     rapid.SampledFrom([]float64{0, 0.05, 0.2}).Draw(t, "lost"),
			interval: rapid.Bool().Draw(t, "interval"),
			bad:      rapid.Bool().Draw(t, "bad"),
			seed:     rapid.Uint64().Draw(t, "seed"),
		}
		h := tw.history()
		var got Verdict
		wrong, skip := porcupineDisagrees(h, func() Verdict { got = check(h).Verdict(Linearizable); return got }, 5*time.Second)
		if skip != "" {
			t.Skip(skip)
		}
		switch {
		case wrong != "":
			t.Fatalf("%s: %s\n%s", tw.name(), wrong, describeHistory(h))
		case tw.bad && !tw.interval && got != Violated:
			// In interval mode the planted write may fall where the
			// holder's lease can still be live (the agreement with
			// porcupine above covers it); with at it cannot.
			t.Fatalf("%s: the bad write was not caught (%s)\n%s", tw.name(), got, describeHistory(h))
		case !tw.bad && got != Holds:
			t.Fatalf("%s: a correct history judged %s\n%s", tw.name(), got, describeHistory(h))
		}
	})
}
