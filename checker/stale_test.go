package checker

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/model"
	"pgregory.net/rapid"
)

// The tokens users build, both ways: a correct fenced history whose writes
// present tokens of the holders' own making (any map of the grants' fences
// that keeps their order, as a resourceVersion read while holding the Lease
// or leaseTransitions + 1 is) holds every property once the header says
// "tokens":"ordered"; the same history claiming grant numbering breaks
// single-writer-per-fence, the coordinator's numbering; a deposed holder's
// write accepted after a later holder's is stale-write, whatever its token.

// orderedTokens maps every write's fence to a token that keeps the fences'
// order and is not a grant's number: "rv" draws increasing numbers with
// gaps far above the grants' (a resourceVersion read while holding grows
// with every renewal), "transitions" counts the fences in use from 1 (a
// lease's transitions + 1). It returns whether some accepted write's token
// is no fence its owner was granted (maybe), and whether one is not even
// where an acquire of its owner's that never answered may have granted it
// (surely).
func orderedTokens(t *rapid.T, h *model.History, scheme string) (maybe, surely bool) {
	type kf struct {
		key   string
		fence int64
	}
	type ko struct{ key, owner string }
	fences := map[string][]int64{}
	for i := range h.Ops {
		if op := &h.Ops[i]; op.Kind == model.Write && !slices.Contains(fences[op.Key], op.Fence) {
			fences[op.Key] = append(fences[op.Key], op.Fence)
		}
	}
	token := map[kf]int64{}
	for _, key := range []string{"k0", "k1"} {
		fs := fences[key]
		slices.Sort(fs)
		next := int64(1000)
		for i, f := range fs {
			if scheme == "transitions" {
				token[kf{key, f}] = int64(i + 1)
				continue
			}
			next += rapid.Int64Range(1, 5).Draw(t, "token gap")
			token[kf{key, f}] = next
		}
	}
	granted := map[ko][]int64{}
	for i := range h.Ops {
		if op := &h.Ops[i]; grantedAcquire(op) {
			granted[ko{op.Key, op.Owner}] = append(granted[ko{op.Key, op.Owner}], op.Fence)
		}
	}
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.Kind != model.Write {
			continue
		}
		op.Fence = token[kf{op.Key, op.Fence}]
		if !acceptedWrite(op) || slices.Contains(granted[ko{op.Key, op.Owner}], op.Fence) {
			continue
		}
		maybe = true
		open := slices.ContainsFunc(h.Ops, func(a model.Op) bool {
			return a.Kind == model.Acquire && !a.Returned && a.Owner == op.Owner && a.Key == op.Key && a.Call <= op.Return
		})
		surely = surely || !open
	}
	return maybe, surely
}

var orderedModes = []struct {
	name string
	o    genOptions
}{
	{"exact", genOptions{semantics: model.FencedStorage, exact: true, unknown: true, ironRule: true, increasing: true}},
	{"exact-skewed", genOptions{semantics: model.FencedStorage, exact: true, unknown: true, uncertainty: 2, ironRule: true, increasing: true}},
	{"interval", genOptions{semantics: model.FencedStorage, unknown: true, uncertainty: 2, ironRule: true}},
	{"two-keys", genOptions{semantics: model.FencedStorage, exact: true, keys: 2, ironRule: true}},
}

func TestPropertyOrderedTokens(t *testing.T) {
	for _, m := range orderedModes {
		for _, scheme := range []string{"rv", "transitions"} {
			t.Run(m.name+"/"+scheme, func(t *testing.T) {
				rapid.Check(t, func(t *rapid.T) {
					h := genHistory(t, m.o)
					maybe, surely := orderedTokens(t, h, scheme)
					h.Header.Tokens = model.OrderedTokens
					if r := check(h); !r.OK() {
						t.Fatalf("ordered tokens (%s) on a correct history: %+v\n%s", scheme, r.Violations, describeHistory(h))
					}
					// The same tokens claimed as the grants' numbers.
					h.Header.Tokens = model.GrantTokens
					r := check(h)
					if got := r.Verdict(SingleWriterPerFence); surely && got != Violated || !maybe && got != Holds {
						t.Fatalf("a write under a token no grant gave its owner: %v (maybe %v); single-writer-per-fence %s\n%s", surely, maybe, got, describeHistory(h))
					}
					if v := r.Verdict(StaleWrite); v != Holds {
						t.Fatalf("stale-write %s: the numbering is single-writer-per-fence's, not the safety verdict's: %+v\n%s", v, r.Violations, describeHistory(h))
					}
				})
			})
		}
	}
}

// A later holder writes; then a deposed one — an owner with a grant before
// the later holder's and none after — writes and is accepted: stale-write,
// naming that write, whether its token is below the later holder's (the
// resource broke its rule) or not (the tokens failed to order the holders);
// and under seed semantics, where tokens are the grants'.
func TestPropertyStaleWriteCatchesDeposedWriter(t *testing.T) {
	for _, m := range []struct {
		name string
		o    genOptions
	}{
		// No lost answers: an acquire that never answered may have granted
		// its owner a later term, which clears its writes.
		{"ordered", genOptions{semantics: model.FencedStorage, exact: true, ironRule: true, increasing: true}},
		{"ordered-interval", genOptions{semantics: model.FencedStorage, uncertainty: 2, ironRule: true}},
		{"seed", genOptions{exact: true, ironRule: true}},
		{"fenced-grant-tokens", genOptions{semantics: model.FencedStorage, exact: true, ironRule: true}},
	} {
		t.Run(m.name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				h := genHistory(t, m.o)
				ordered := strings.HasPrefix(m.name, "ordered")
				if ordered {
					_, _ = orderedTokens(t, h, "rv")
					h.Header.Tokens = model.OrderedTokens
				}
				// A deposed owner: any owner granted k0; after everything a
				// new owner is granted it under a higher fence and writes,
				// then the deposed one writes too.
				var deposed *model.Op
				maxFence, maxToken := int64(0), int64(0)
				for i := range h.Ops {
					op := &h.Ops[i]
					maxFence = max(maxFence, op.Fence)
					if op.Kind == model.Write {
						maxToken = max(maxToken, op.Fence)
					}
					if grantedAcquire(op) && op.Key == "k0" {
						deposed = op
					}
				}
				if deposed == nil {
					t.Skip("nobody was granted k0")
				}
				g := appendOp(h, model.Op{Process: "later", Owner: "later", Key: "k0", Kind: model.Acquire, TTL: 5, Fence: maxFence + 1, OK: true})
				laterToken := g.Fence
				if ordered {
					laterToken = maxToken + 10
				}
				appendOp(h, model.Op{Process: "later", Owner: "later", Key: "k0", Kind: model.Write, Fence: laterToken, Value: "later", HasValue: true, OK: true})
				token := deposed.Fence
				if ordered {
					token = rapid.SampledFrom([]int64{laterToken - 1, laterToken, laterToken + 1}).Draw(t, "deposed token")
				}
				w := appendOp(h, model.Op{Process: "zombie", Owner: deposed.Owner, Key: "k0", Kind: model.Write, Fence: token, Value: "zombie", HasValue: true, OK: true})
				r := check(h)
				for _, v := range r.Violations {
					if v.Property == StaleWrite && slices.Contains(v.Lines, w.Line) {
						return
					}
				}
				t.Fatalf("no stale-write names line %d: %+v\n%s", w.Line, r.Violations, describeHistory(h))
			})
		})
	}
}

// scrambleWrites makes stale writes likely: up to two writes are accepted
// whatever they were answered, and maybe written by another owner.
func scrambleWrites(t *rapid.T, h *model.History) {
	var owners []string
	for i := range h.Ops {
		if !slices.Contains(owners, h.Ops[i].Owner) {
			owners = append(owners, h.Ops[i].Owner)
		}
	}
	var fences []int64
	exact := false
	for i := range h.Ops {
		if f := h.Ops[i].Fence; f > 0 && !slices.Contains(fences, f) {
			fences = append(fences, f)
		}
		exact = exact || h.Ops[i].HasAt
	}
	for range rapid.IntRange(0, 2).Draw(t, "scrambled writes") {
		i := rapid.IntRange(0, len(h.Ops)-1).Draw(t, "write")
		if op := &h.Ops[i]; op.Kind == model.Write && op.Returned {
			op.OK = true
			op.Error = ""
			op.Owner = rapid.SampledFrom(owners).Draw(t, "owner")
		}
	}
	// And late writes, accepted after everything, by any owner.
	for range rapid.IntRange(0, 2).Draw(t, "late writes") {
		if len(fences) == 0 {
			break
		}
		w := appendOp(h, model.Op{Process: "late", Owner: rapid.SampledFrom(owners).Draw(t, "late owner"),
			Kind: model.Write, Fence: rapid.SampledFrom(fences).Draw(t, "late fence"), Value: "late", HasValue: true, OK: true})
		w.HasAt = exact
		w.At = w.Call
	}
}

// Under seed semantics the coordinator accepts a write from the holder
// only, so whatever stale-write flags no linearization explains: it never
// fires on a history the brute force explains (mutated histories included,
// so it is asked of wrong ones too).
func TestPropertyStaleWriteNoFalseAlarm(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := genSmall(t, smallOptions{fences: rapid.SampledFrom([]model.FenceOrder{model.Sequential, model.Increasing}).Draw(t, "fences"),
			lost: true, uncertain: rapid.Bool().Draw(t, "uncertain"), exact: rapid.Bool().Draw(t, "exact"),
			mutate: rapid.Bool().Draw(t, "mutate"), sameOwners: rapid.Bool().Draw(t, "same owners")})
		scrambleWrites(t, h)
		r := check(h)
		if r.Verdict(StaleWrite) == Violated && bruteLinearizable(h) {
			t.Fatalf("stale-write violated on a history the brute force explains: %+v\n%s", r.Violations, describeBrute(h))
		}
	})
}

// The online judge agrees with stale-write's definition read plainly, pair
// by pair, on small histories full of ties, lost answers and clock
// uncertainty, under both semantics and both kinds of token.
func TestPropertyStaleWriteMatchesDefinition(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sem := rapid.SampledFrom([]model.Semantics{model.Seed, model.FencedStorage}).Draw(t, "semantics")
		h := genSmall(t, smallOptions{semantics: sem, fences: model.Increasing, lost: true,
			uncertain: rapid.Bool().Draw(t, "uncertain"), exact: rapid.Bool().Draw(t, "exact"),
			mutate: rapid.Bool().Draw(t, "mutate"), sameOwners: rapid.Bool().Draw(t, "same owners"), maxOps: 9})
		scrambleWrites(t, h)
		if sem == model.FencedStorage && rapid.Bool().Draw(t, "ordered") {
			h.Header.Tokens = model.OrderedTokens
		}
		want := bruteStaleWrites(h)
		var got []int
		for _, v := range check(h).Violations {
			if v.Property == StaleWrite {
				got = append(got, v.Lines...)
			}
		}
		for _, line := range want {
			if !slices.Contains(got, line) {
				t.Fatalf("the definition finds line %d stale, the checker does not: %v\n%s", line, got, describeBrute(h))
			}
		}
		if len(want) == 0 && len(got) > 0 {
			t.Fatalf("the checker finds a stale write (lines %v), the definition none\n%s", got, describeBrute(h))
		}
	})
}

// bruteStaleWrites is stale-write's definition, pair by pair: the lines of
// the accepted writes w by O such that some accepted write w' by another
// owner O' was accepted before w (returned before w was called, or its
// clock window ends before w's begins), O' was granted a fence, returned
// before w' was called, above every fence granted to O by an acquire
// called by the time w returned, and no acquire of O's that never answered
// was called by then.
func bruteStaleWrites(h *model.History) []int {
	u := h.Header.ClockUncertainty
	window := func(op *model.Op) (int64, int64) {
		if op.HasAt {
			return op.At, op.At
		}
		return op.Call - u, op.Return + u
	}
	var out []int
	for i := range h.Ops {
		w := &h.Ops[i]
		if !acceptedWrite(w) {
			continue
		}
		mine, open := int64(0), false
		for j := range h.Ops {
			a := &h.Ops[j]
			if a.Kind != model.Acquire || a.Owner != w.Owner || a.Key != w.Key || a.Call > w.Return {
				continue
			}
			if grantedAcquire(a) {
				mine = max(mine, a.Fence)
			}
			open = open || !a.Returned
		}
		if open {
			continue
		}
		wlo, _ := window(w)
		for j := range h.Ops {
			x := &h.Ops[j]
			if !acceptedWrite(x) || x.Owner == w.Owner || x.Key != w.Key {
				continue
			}
			if _, xhi := window(x); !(x.Return < w.Call || xhi < wlo) {
				continue
			}
			term := int64(0)
			for k := range h.Ops {
				g := &h.Ops[k]
				if grantedAcquire(g) && g.Owner == x.Owner && g.Key == x.Key && (g.Return < x.Call || g.Process == x.Process && g.Return == x.Call && k < j) {
					term = max(term, g.Fence)
				}
			}
			if term > mine {
				out = append(out, w.Line)
				break
			}
		}
	}
	return out
}

func TestStaleWriteTellsTheTokens(t *testing.T) {
	h := &model.History{Name: "mem", Header: model.DefaultHeader()}
	h.Header.Semantics, h.Header.Fences, h.Header.Tokens = model.FencedStorage, model.Increasing, model.OrderedTokens
	add := func(op model.Op) {
		op.Line = len(h.Ops) + 2
		op.Returned, op.OK = true, true
		op.Owner = op.Process
		h.Ops = append(h.Ops, op)
	}
	add(model.Op{Process: "A", Kind: model.Acquire, TTL: 10, Fence: 4, Call: 0, Return: 1})
	add(model.Op{Process: "B", Kind: model.Acquire, TTL: 10, Fence: 9, Call: 20, Return: 21})
	add(model.Op{Process: "B", Kind: model.Write, Fence: 2, Value: "b", HasValue: true, Call: 22, Return: 23})
	add(model.Op{Process: "A", Kind: model.Write, Fence: 7, Value: "a", HasValue: true, Call: 24, Return: 25})
	r := check(h)
	var v *Violation
	for i := range r.Violations {
		if r.Violations[i].Property == StaleWrite {
			v = &r.Violations[i]
		}
	}
	want := fmt.Sprintf("%v", []int{2, 3, 4, 5})
	if v == nil || fmt.Sprint(v.Lines) != want {
		t.Fatalf("want one stale-write on lines %s, got %+v", want, r.Violations)
	}
	for _, s := range []string{"A's write \"a\" (line 5)", "granted fence 9 (line 3)", "fence 4 (line 2)", "Its token 7 is not below B's 2"} {
		if !strings.Contains(v.Explanation, s) {
			t.Errorf("explanation lacks %q: %s", s, v.Explanation)
		}
	}
	// A's 7 after B's 2: the resource accepted a higher token, as it
	// should; only the holders' order is wrong.
	if r.Verdict(Linearizable) != Holds || r.Verdict(FenceMonotonic) != Holds || r.Verdict(SingleWriterPerFence) != Holds {
		t.Fatalf("only stale-write is wrong here: %+v", r.Properties)
	}
}

// TestStaleWritesForgetJudgedWrites feeds stale-write 20,000 writes of two
// owners taking turns on one key and counts the writes it still reaches:
// bounded by the writes in flight or waiting, not by the history. A judged
// write once kept, through the best writes noted at its call, every write
// before it, and each write's op the slab of 256 ops it was cut from: a
// streamed 10^6-op history held 250 MB that way.
func TestStaleWritesForgetJudgedWrites(t *testing.T) {
	sw := newStaleWrites(model.Header{ClockUncertainty: 2})
	owners := []string{"a", "b"}
	now := int64(0)
	for i := range 20000 {
		o := owners[(i/10)%2]
		if i%10 == 0 {
			g := &kop{op: &model.Op{Process: o, Owner: o, Key: "k", Kind: model.Acquire, OK: true, Returned: true, Fence: int64(i/10 + 1), Call: now, Return: now + 1}}
			sw.call(g)
			sw.ret(g)
			now += 2
		}
		w := &kop{pos: i, op: &model.Op{Process: o, Owner: o, Key: "k", Kind: model.Write, OK: true, Returned: true, Fence: int64(i/10 + 1), Value: fmt.Sprint(i), Call: now, Return: now + 1}}
		w.in.Lo, w.in.Hi = now, now+1
		sw.call(w)
		sw.ret(w)
		now += 2
	}
	seen := map[*staleWrite]bool{}
	var visit func(w *staleWrite)
	visit = func(w *staleWrite) {
		if w == nil || seen[w] {
			return
		}
		seen[w] = true
		for _, b := range w.before {
			visit(b)
		}
	}
	for _, ws := range [][]*staleWrite{sw.prec[:], sw.settled[:], sw.recent, sw.flight, sw.waiting} {
		for _, w := range ws {
			visit(w)
		}
	}
	if len(seen) > 32 {
		t.Fatalf("after 20000 writes stale-write still reaches %d of them", len(seen))
	}
	if v := sw.finish(); len(v) != 0 {
		t.Fatalf("a correct history: %d stale writes found", len(v))
	}
}
