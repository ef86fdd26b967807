package checker

import (
	"context"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/internal/timed"
	"github.com/leasecheck/leasecheck/model"
	"pgregory.net/rapid"
)

// fataler is what sweepsOf needs of a *testing.T or a *rapid.T.
type fataler interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// sweepsOf runs one sweep alone over each key of h: the exact one with no
// cap (complete), or the relaxed one from the start. It reports whether
// every key survives, and whether the exact sweep dropped anything.
func sweepsOf(tb fataler, h *model.History, relaxed bool) (alive, dropped bool) {
	tb.Helper()
	if err := model.Validate(h); err != nil {
		tb.Fatal(err)
	}
	c := timed.Compile(h)
	b := newBudget(context.Background(), 0, -1)
	alive = true
	for k := range c.Keys {
		ko := &c.Keys[k]
		w := newWindow()
		sw := newSweep(timed.RulesOf(h.Header), h.Header.ClockUncertainty, b, w, relaxed, false, 0)
		facts := factsOf(h, ko.Index)
		sw.unique = facts.unique
		_, events := prepareKey(h, c.Names, ko, facts)
		// What the checker in memory knows of the fences to come
		// (fenceFacts), so that the comparisons with the brute force cover
		// the cuts it allows.
		sw.fences.maxFence = facts.maxFence
		ahead := pinsAhead(events)
		for i, e := range events {
			sw.fences.pinAhead = ahead[i]
			switch {
			case e.kind == evCall:
				if e.k.role == rolePlaced && !w.open(e.k) {
					tb.Fatal("window full")
				}
				sw.call(e.k)
			case e.k.role == rolePlaced:
				sw.due(e.k)
				w.close(e.k)
			}
		}
		if sw.stopped != stopNone {
			tb.Fatalf("sweep stopped: %d", sw.stopped)
		}
		alive = alive && sw.alive()
		dropped = dropped || sw.dropped
	}
	return alive, dropped
}

// The relaxed model contains every real behaviour, so the relaxed sweep
// never refutes a history that is linearizable: correct generated histories
// (every mode, lost answers included) and every small history the brute
// force explains.
func TestPropertyRelaxedNeverRefutesALinearizableHistory(t *testing.T) {
	for _, m := range genModes {
		t.Run(m.name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				h := genHistory(t, m.o)
				if alive, _ := sweepsOf(t, h, true); !alive {
					t.Fatalf("the relaxed sweep refutes a correct history\n%s", describeHistory(h))
				}
			})
		})
	}
	for _, m := range smallModes {
		t.Run("brute/"+m.name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				o := m.o
				o.mutate = true
				h := genSmall(t, o)
				if !bruteLinearizable(h) {
					t.Skip("not linearizable")
				}
				if alive, _ := sweepsOf(t, h, true); !alive {
					t.Fatalf("the relaxed sweep refutes a history the brute force explains\n%s", describeBrute(h))
				}
				if alive, dropped := sweepsOf(t, h, false); !alive || dropped {
					t.Fatalf("the exact sweep (alive %v, dropped %v) misses a history the brute force explains\n%s", alive, dropped, describeBrute(h))
				}
			})
		})
	}
}

// The exact sweep with no cap is a complete search: on small histories it
// agrees with the brute force both ways, wherever every op carries at.
func TestPropertyExactSweepAgreesWithBruteForce(t *testing.T) {
	for _, m := range smallModes {
		t.Run(m.name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				o := m.o
				o.mutate = rapid.Bool().Draw(t, "mutate")
				h := genSmall(t, o)
				want := bruteLinearizable(h)
				got, _ := sweepsOf(t, h, false)
				if want && !got || !want && got && allAt(h) {
					t.Fatalf("exact sweep says %v, brute force %v\n%s", got, want, describeBrute(h))
				}
				if !got && want {
					t.Fatalf("exact sweep refutes what the brute force explains\n%s", describeBrute(h))
				}
			})
		})
	}
}

// Histories wrong whatever the unanswered ops did: a correct history with
// many lost renews and writes, then one op no unknown op can explain — a
// read of a value nobody wrote, or a write accepted from an owner that
// never held the lease. The relaxed sweep refutes them on its own.
func TestPropertyRelaxedRefutesWhatNoUnknownOpExplains(t *testing.T) {
	for _, m := range genModes {
		if !m.o.unknown {
			continue
		}
		t.Run(m.name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				o := m.o
				o.keys = 1
				h := genHistory(t, o)
				key := h.Ops[0].Key
				if rapid.Bool().Draw(t, "stranger writes") && o.semantics == model.Seed {
					fence := int64(1)
					if o.noFences {
						fence = 0
					}
					appendOp(h, model.Op{Owner: "stranger", Key: key, Kind: model.Write, Fence: fence, Value: "s", HasValue: true, OK: true})
				} else {
					appendOp(h, model.Op{Key: key, Kind: model.Read, Value: "never written", HasValue: true, OK: true})
				}
				if alive, _ := sweepsOf(t, h, true); alive {
					t.Fatalf("the relaxed sweep explains a history no unknown op can\n%s", describeHistory(h))
				}
				if got := check(h).Verdict(Linearizable); got != Violated {
					t.Fatalf("linearizable = %s, want violated\n%s", got, describeHistory(h))
				}
			})
		})
	}
}

// Histories that only an operation applied twice could explain: the
// relaxed model explains them (an unknown op may take effect any number of
// times), so the relaxed sweep alone never calls them Illegal; the exact
// search does, and the check says violated, never ok. (A write of a value
// only it writes is the exception: once a read has observed it, its window
// ends, and the relaxed sweep refutes the repeat on its own — refuted says
// so.)
func TestOnlyTwiceAppliedExplains(t *testing.T) {
	hdr := `{"format":"leasecheck/history","version":1}` + "\n"
	for _, tc := range []struct {
		name, history string
		refuted       bool // by the relaxed sweep too
	}{
		{"renew", hdr +
			// A's lease (until 10) was renewed by a lost renew; A's write at
			// 12 needs the renew before 12 (expiry <= 22), B's refused acquire
			// at 24 needs a renew after 14: one renew cannot do both.
			`{"process":"A","op":"acquire","ttl":10,"fence":1,"call":0,"return":0,"at":0,"ok":true}` + "\n" +
			`{"process":"R","owner":"A","op":"renew","ttl":10,"call":1}` + "\n" +
			`{"process":"A","op":"write","fence":1,"value":"a","call":12,"return":12,"at":12,"ok":true}` + "\n" +
			`{"process":"B","op":"acquire","ttl":10,"call":24,"return":24,"at":24,"ok":false}` + "\n", false},
		{"acquire", hdr +
			// One lost acquire can grant fence 1, not fences 1 and 2.
			`{"process":"A","op":"acquire","ttl":5,"call":0}` + "\n" +
			`{"process":"B","op":"acquire","ttl":5,"fence":3,"call":50,"return":50,"at":50,"ok":true}` + "\n", false},
		{"write", hdr +
			// v1 is read, overwritten by v2, and read again: the lost write
			// of v1 would have to take effect twice.
			`{"process":"A","op":"acquire","ttl":100,"fence":1,"call":0,"return":0,"at":0,"ok":true}` + "\n" +
			`{"process":"A","op":"write","fence":1,"value":"v1","call":1}` + "\n" +
			`{"process":"B","op":"read","value":"v1","call":2,"return":2,"at":2,"ok":true}` + "\n" +
			`{"process":"C","owner":"A","op":"write","fence":1,"value":"v2","call":3,"return":3,"at":3,"ok":true}` + "\n" +
			`{"process":"B","op":"read","value":"v1","call":4,"return":4,"at":4,"ok":true}` + "\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := model.ReadHistory(strings.NewReader(tc.history), tc.name)
			if err != nil {
				t.Fatal(err)
			}
			if alive, _ := sweepsOf(t, h, true); alive == tc.refuted {
				t.Errorf("the relaxed sweep: alive %v, want %v", alive, !tc.refuted)
			}
			if alive, dropped := sweepsOf(t, h, false); alive || dropped {
				t.Errorf("the exact sweep: alive %v dropped %v, want refuted", alive, dropped)
			}
			if bruteLinearizable(h) {
				t.Errorf("the brute force explains it: the test history is wrong")
			}
			r := check(h)
			if r.Verdict(Linearizable) != Violated {
				t.Errorf("linearizable = %s, want violated", r.Verdict(Linearizable))
			}
		})
	}
}

func TestSweepStepsAreALinearization(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := genHistory(t, genOptions{exact: true, unknown: true, uncertainty: 1, keys: 2})
		r := check(h)
		for _, kl := range r.Linearizations {
			if kl.Verdict != Holds {
				continue
			}
			seen := map[int]bool{}
			for _, st := range kl.Steps {
				if st.Op < 0 || st.Op >= len(h.Ops) || seen[st.Op] || h.Ops[st.Op].Key != kl.Key {
					t.Fatalf("key %q: step %+v is not one of its ops, once: %v", kl.Key, st, kl.Steps)
				}
				seen[st.Op] = true
			}
			for i := range h.Ops {
				op := &h.Ops[i]
				if op.Key == kl.Key && op.Returned && !(op.Kind == model.Read && !op.OK) && !seen[i] {
					t.Fatalf("key %q: op %d (line %d) missing from the linearization %v", kl.Key, i, op.Line, kl.Steps)
				}
			}
		}
	})
}
