package report

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/model"
)

// hist builds a history from compact op lines:
// "A acquire ttl=10 fence=1 call=0 ret=1 at=0 ok" (ret absent: never
// returned; ok absent: refused).
func hist(u int64, lines ...string) *model.History {
	h := &model.History{Name: "t", Header: model.Header{Version: 1, TimeUnit: "ms", ClockUncertainty: u}}
	for i, l := range lines {
		f := strings.Fields(l)
		op := model.Op{Line: i + 2, Process: f[0], Owner: f[0]}
		op.Kind, _ = model.ParseKind(f[1])
		for _, a := range f[2:] {
			k, v, _ := strings.Cut(a, "=")
			var n int64
			fmt.Sscan(v, &n)
			switch k {
			case "ttl":
				op.TTL = n
			case "fence":
				op.Fence = n
			case "call":
				op.Call = n
			case "ret":
				op.Return, op.Returned = n, true
			case "at":
				op.At, op.HasAt = n, true
			case "ok":
				op.OK = true
			case "owner":
				op.Owner = v
			case "key":
				op.Key = v
			case "value":
				op.Value, op.HasValue = v, true
			}
		}
		h.Ops = append(h.Ops, op)
	}
	return h
}

// lin is a checker.Result whose only content is one key's linearization.
func lin(key string, steps ...checker.Step) *checker.Result {
	return &checker.Result{Linearizations: []checker.KeyLinearization{{Key: key, Verdict: checker.Holds, Steps: steps}}}
}

func w(lo, hi int64) Window { return Window{lo, hi} }

func TestTerms(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    *model.History
		r    *checker.Result
		want []Term
	}{{
		name: "renewals extend the granted expiry; a release ends the term",
		h: hist(0,
			"A acquire ttl=10 fence=1 call=0 ret=1 at=0 ok",
			"A renew ttl=10 fence=1 call=5 ret=6 at=5 ok",
			"A renew ttl=10 fence=1 call=9 ret=10 at=9 ok",
			"A release fence=1 call=12 ret=13 at=12 ok",
			"B acquire ttl=10 fence=2 call=14 ret=15 at=14 ok"),
		r: lin("", checker.Step{Op: 0}, checker.Step{Op: 1}, checker.Step{Op: 2}, checker.Step{Op: 3}, checker.Step{Op: 4}),
		want: []Term{
			{Owner: "A", Fence: 1, Grant: 0, Renewals: []int{1, 2}, Release: 3, Start: w(0, 0), Granted: w(19, 19), End: w(12, 12), EndedBy: Released, Linearized: true},
			{Owner: "B", Fence: 2, Grant: 4, Release: -1, Start: w(14, 14), Granted: w(24, 24), End: w(24, 24), EndedBy: Expired, Linearized: true},
		},
	}, {
		name: "a grant after the expiry: the old term ended at its expiry",
		h: hist(0,
			"A acquire ttl=10 fence=1 call=0 ret=1 at=0 ok",
			"B acquire ttl=10 fence=2 call=12 ret=13 at=12 ok"),
		want: []Term{
			{Owner: "A", Fence: 1, Grant: 0, Release: -1, Start: w(0, 0), Granted: w(10, 10), End: w(10, 10), EndedBy: Expired},
			{Owner: "B", Fence: 2, Grant: 1, Release: -1, Start: w(12, 12), Granted: w(22, 22), End: w(22, 22), EndedBy: Expired},
		},
	}, {
		name: "a grant before the expiry supersedes the term: the double holder, as the coordinator saw it",
		h: hist(0,
			"A acquire ttl=10 fence=1 call=0 ret=1 at=0 ok",
			"B acquire ttl=10 fence=2 call=4 ret=5 at=4 ok"),
		want: []Term{
			{Owner: "A", Fence: 1, Grant: 0, Release: -1, Start: w(0, 0), Granted: w(10, 10), End: w(4, 4), EndedBy: Superseded},
			{Owner: "B", Fence: 2, Grant: 1, Release: -1, Start: w(4, 4), Granted: w(14, 14), End: w(14, 14), EndedBy: Expired},
		},
	}, {
		name: "a release after the expiry: the term had already expired",
		h: hist(0,
			"A acquire ttl=10 fence=1 call=0 ret=1 at=0 ok",
			"A release fence=1 call=15 ret=16 at=15 ok"),
		want: []Term{{Owner: "A", Fence: 1, Grant: 0, Release: 1, Start: w(0, 0), Granted: w(10, 10), End: w(10, 10), EndedBy: Expired}},
	}, {
		name: "refused ops, a non-holder's renew and release change nothing",
		h: hist(0,
			"A acquire ttl=10 fence=1 call=0 ret=1 at=0 ok",
			"B acquire ttl=10 call=2 ret=3 at=2",
			"B renew ttl=10 call=4 ret=5 at=4 ok",
			"B release call=6 ret=7 at=6 ok",
			"A renew ttl=10 fence=1 call=8 ret=9 at=8"),
		want: []Term{{Owner: "A", Fence: 1, Grant: 0, Release: -1, Start: w(0, 0), Granted: w(10, 10), End: w(10, 10), EndedBy: Expired}},
	}, {
		name: "interval mode: windows of u around call and return, narrowed along the linearization",
		h: hist(1,
			"A acquire ttl=10 fence=1 call=0 ret=10 ok",
			"A write fence=1 value=x call=2 ret=3 ok",
			"A release fence=1 call=20 ret=30 ok"),
		// the acquire's clock is at most the write's (<= 3+u), the
		// release's at least the write's lower bound
		r:    lin("", checker.Step{Op: 0}, checker.Step{Op: 1}, checker.Step{Op: 2}),
		want: []Term{{Owner: "A", Fence: 1, Grant: 0, Release: 2, Start: w(-1, 4), Granted: w(9, 14), End: w(9, 14), EndedBy: Expired, Linearized: true}},
	}, {
		name: "an unanswered acquire the linearization applied took effect with the next fence; an unanswered renew it did not apply did nothing",
		h: hist(0,
			"A acquire ttl=10 fence=1 call=0 ret=1 at=0 ok",
			"A renew ttl=10 fence=1 call=2 at=2",
			"B acquire ttl=10 call=11 at=11",
			"B write fence=2 value=b call=13 ret=14 at=13 ok"),
		r: lin("", checker.Step{Op: 0}, checker.Step{Op: 2, Applied: true}, checker.Step{Op: 3}),
		want: []Term{
			{Owner: "A", Fence: 1, Grant: 0, Release: -1, Start: w(0, 0), Granted: w(10, 10), End: w(10, 10), EndedBy: Expired, Linearized: true},
			{Owner: "B", Fence: 2, Grant: 2, Release: -1, Start: w(11, 11), Granted: w(21, 21), End: w(21, 21), EndedBy: Expired, Linearized: true},
		},
	}, {
		name: "keys are independent, in the checker's key order",
		h: hist(0,
			"A acquire ttl=10 fence=1 call=0 ret=1 at=0 ok key=orders",
			"B acquire ttl=10 fence=1 call=0 ret=1 at=1 ok key=billing"),
		want: []Term{
			{Key: "billing", Owner: "B", Fence: 1, Grant: 1, Release: -1, Start: w(1, 1), Granted: w(11, 11), End: w(11, 11), EndedBy: Expired},
			{Key: "orders", Owner: "A", Fence: 1, Grant: 0, Release: -1, Start: w(0, 0), Granted: w(10, 10), End: w(10, 10), EndedBy: Expired},
		},
	}, {
		name: "owners, not processes, hold terms: a renewal loop in its own process renews its owner's term",
		h: hist(0,
			"A-main acquire ttl=10 fence=1 call=0 ret=1 at=0 ok owner=A",
			"A-renew renew ttl=10 fence=1 call=3 ret=4 at=3 ok owner=A"),
		want: []Term{{Owner: "A", Fence: 1, Grant: 0, Renewals: []int{1}, Release: -1, Start: w(0, 0), Granted: w(13, 13), End: w(13, 13), EndedBy: Expired}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := Terms(tc.h, tc.r)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Terms =\n%s\nwant\n%s", dumpTerms(got), dumpTerms(tc.want))
			}
		})
	}
}

func dumpTerms(ts []Term) string {
	var b strings.Builder
	for _, t := range ts {
		fmt.Fprintf(&b, "  %+v\n", t)
	}
	return b.String()
}

// The goldens' terms, as the checker's real linearizations give them.
func TestTermsOfGoldenHistories(t *testing.T) {
	ctx := context.Background()
	t.Run("gc-pause: A's term expires before B's grant; the zombie write is in nobody's term of A", func(t *testing.T) {
		h := readHistory(t, "testdata/gc-pause.jsonl")
		got := Terms(h, mustCheck(ctx, h, checker.Options{}))
		want := []Term{
			{Owner: "A", Fence: 1, Grant: 0, Release: -1, Start: w(0, 0), Granted: w(10, 10), End: w(10, 10), EndedBy: Expired, Linearized: true},
			{Owner: "B", Fence: 2, Grant: 1, Release: -1, Start: w(12, 12), Granted: w(22, 22), End: w(22, 22), EndedBy: Expired, Linearized: true},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Terms =\n%s\nwant\n%s", dumpTerms(got), dumpTerms(want))
		}
	})
	t.Run("clock-skew: B's grant, which no order explains, cuts A's live term short", func(t *testing.T) {
		h := readHistory(t, "testdata/clock-skew.jsonl")
		got := Terms(h, mustCheck(ctx, h, checker.Options{}))
		want := []Term{
			// u=1: the acquire's clock in [-1, 2], narrowed by the write to [-1, 2]
			{Owner: "A", Fence: 1, Grant: 0, Release: -1, Start: w(-1, 2), Granted: w(9, 12), End: w(3, 6), EndedBy: Superseded, Linearized: true},
			{Owner: "B", Fence: 2, Grant: 2, Release: -1, Start: w(3, 6), Granted: w(13, 16), End: w(13, 16), EndedBy: Expired, Linearized: false},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Terms =\n%s\nwant\n%s", dumpTerms(got), dumpTerms(want))
		}
	})
	t.Run("renewal loop dies: the refused renew extends nothing", func(t *testing.T) {
		h := readHistory(t, "testdata/renewal-loop-dies.jsonl")
		got := Terms(h, mustCheck(ctx, h, checker.Options{}))
		if len(got) != 1 || got[0].Owner != "A" || got[0].Granted != w(9, 12) || got[0].EndedBy != Expired || len(got[0].Renewals) != 0 {
			t.Errorf("Terms =\n%s", dumpTerms(got))
		}
	})
}

func TestBeliefsFromTrace(t *testing.T) {
	for _, tc := range []struct {
		name  string
		trace []TraceLine
		end   int64
		want  []Belief
	}{{
		name: "believes then gives up",
		trace: []TraceLine{
			{T: 1, Node: "h1", What: "believes", Detail: "fence=1"},
			{T: 9, Node: "h1", What: "gave-up"},
		},
		end:  20,
		want: []Belief{{Process: "h1", Fence: 1, From: 1, To: 9}},
	}, {
		name: "a belief still held at the end is open; the coordinator's lines are not beliefs",
		trace: []TraceLine{
			{T: 1, Node: "coordinator", What: "granted", Detail: "h1 fence=1"},
			{T: 2, Node: "h1", What: "believes", Detail: "fence=1"},
		},
		end:  30,
		want: []Belief{{Process: "h1", Fence: 1, From: 2, To: 30, Open: true}},
	}, {
		name: "a new fence ends the old belief; the same fence said again does not",
		trace: []TraceLine{
			{T: 1, Node: "h1", What: "believes", Detail: "fence=1"},
			{T: 4, Node: "h1", What: "believes", Detail: "fence=1"},
			{T: 6, Node: "h1", What: "believes", Detail: "fence=3"},
			{T: 8, Node: "h1", What: "gave-up"},
		},
		end:  10,
		want: []Belief{{Process: "h1", Fence: 1, From: 1, To: 6}, {Process: "h1", Fence: 3, From: 6, To: 8}},
	}, {
		name: "a crash ends a belief; a restarted incarnation is its own process; gave-up without a belief is nothing",
		trace: []TraceLine{
			{T: 1, Node: "h2", What: "gave-up"},
			{T: 3, Node: "h1", What: "believes", Detail: "fence=2"},
			{T: 5, Node: "h1", What: "crashed"},
			{T: 7, Node: "h1#2", What: "restarted", Detail: "owner=h1#2"},
			{T: 9, Node: "h1#2", What: "believes", Detail: "fence=3"},
		},
		end: 12,
		want: []Belief{
			{Process: "h1", Fence: 2, From: 3, To: 5},
			{Process: "h1#2", Fence: 3, From: 9, To: 12, Open: true},
		},
	}, {
		name: "ordered by start, then process; a detail without a fence is fence 0",
		trace: []TraceLine{
			{T: 2, Node: "h2", What: "believes", Detail: "fence=x"},
			{T: 2, Node: "h1", What: "believes", Detail: "fence=5 extra"},
			{T: 1, Node: "h3", What: "believes"},
		},
		end: 2,
		want: []Belief{
			{Process: "h3", Fence: 0, From: 1, To: 2, Open: true},
			{Process: "h1", Fence: 5, From: 2, To: 2, Open: true},
			{Process: "h2", Fence: 0, From: 2, To: 2, Open: true},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if got := BeliefsFromTrace(tc.trace, tc.end); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("BeliefsFromTrace =\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}
