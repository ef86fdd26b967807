package k8slease

import (
	"fmt"
	"slices"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/k8ssweep"
	"github.com/leasecheck/leasecheck/vclient"
)

func testLease(holder, rv string, transitions int32) *coordinationv1.Lease {
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "leasecheck", ResourceVersion: rv}}
	if holder != "" {
		l.Spec.HolderIdentity = &holder
	}
	l.Spec.LeaseTransitions = &transitions
	return l
}

// The three tokens of a holder, from the Leases its client is answered
// with, as the Lease changes hands: each grows across holders, none is
// current while another holds the Lease.
func ExampleTokens() {
	a, b := NewTokens("a"), NewTokens("b")
	show := func(when string) {
		fmt.Printf("%-22s a: %d %d %d  b: %d %d %d\n", when,
			a.Token(TokenAcquired), a.Token(TokenHeld), a.Token(TokenTransitions),
			b.Token(TokenAcquired), b.Token(TokenHeld), b.Token(TokenTransitions))
	}
	// a creates the Lease (resourceVersion 1), renews it twice and reads it.
	a.observe(testLease("a", "1", 0), true)
	a.observe(testLease("a", "2", 0), true)
	a.observe(testLease("a", "3", 0), true)
	a.observe(testLease("a", "3", 0), false)
	show("a holds")
	// b reads it held by a, then takes it over once it expired.
	b.observe(testLease("a", "3", 0), false)
	b.observe(testLease("b", "4", 1), true)
	show("b took it over")
	// a, back from a pause, reads the Lease: b holds it.
	a.observe(testLease("b", "4", 1), false)
	show("a sees b holds it")
	// Output:
	// a holds                a: 1 3 1  b: 0 0 0
	// b took it over         a: 1 3 1  b: 4 4 2
	// a sees b holds it      a: 0 0 0  b: 4 4 2
}

func TestTokensFromLeases(t *testing.T) {
	tk := NewTokens("a")
	if got := tk.Token(TokenHeld); got != 0 {
		t.Fatalf("before any Lease: %d", got)
	}
	// A read of its own Lease makes no grant: only a write can.
	tk.observe(testLease("a", "7", 2), false)
	if got := tk.Token(TokenAcquired); got != 0 {
		t.Fatalf("acquired after a read only: %d", got)
	}
	if got := tk.Token(TokenHeld); got != 7 {
		t.Fatalf("held = %d, want 7", got)
	}
	if got := tk.Token(TokenTransitions); got != 3 {
		t.Fatalf("transitions = %d, want 3", got)
	}
	tk.observe(testLease("b", "8", 3), false)
	tk.observe(testLease("a", "9", 4), true)
	tk.observe(testLease("a", "10", 4), true) // a renewal: the acquiring version stays
	tk.observe(testLease("a", "10", 4), false)
	for k, want := range map[TokenKind]int64{TokenAcquired: 9, TokenHeld: 10, TokenTransitions: 5} {
		if got := tk.Token(k); got != want {
			t.Errorf("%s = %d, want %d", k, got, want)
		}
	}
	// A resourceVersion that is no integer gives no version token.
	u := NewTokens("a")
	u.observe(testLease("a", "abc", 0), true)
	if u.Token(TokenAcquired) != 0 || u.Token(TokenHeld) != 0 || u.Token(TokenTransitions) != 1 {
		t.Errorf("opaque version: %d %d %d", u.Token(TokenAcquired), u.Token(TokenHeld), u.Token(TokenTransitions))
	}
}

// tokenSchemes are the fenced variants whose tokens are the holder's own.
var tokenSchemes = []struct{ name, impl string }{
	{"rv-held", k8ssweep.FencedHeld},
	{"transitions", k8ssweep.FencedTransitions},
}

// TestTokenSchemesClean: the writes carrying a token a Kubernetes author
// builds — the resourceVersion of the Lease read while holding it, or
// leaseTransitions + 1 — violate nothing under any fault profile, on the
// safe timings; the history says the tokens are the holder's own
// ("tokens":"ordered"), so they are judged by stale-write, not by the
// grants' numbering. Overlapping beliefs where no stale write was accepted
// are warnings, as for Fenced. -seeds 10000 for the issue's claim:
//
//	go test ./vclient/k8slease -run 'TestTokenSchemesClean/rv-held/pause' -seeds 10000
func TestTokenSchemesClean(t *testing.T) {
	for _, s := range tokenSchemes {
		for _, p := range Profiles {
			t.Run(s.name+"/"+string(p), func(t *testing.T) {
				start := time.Now()
				r := sweep(t, s.impl, p, safeTimings(), seeds(10), nil)
				r.clean(t, s.name+", "+string(p))
				if r.sum.Seeds == 0 || r.sum.Ops == 0 {
					t.Fatalf("the sweep exercised nothing: %d seeds, %d ops", r.sum.Seeds, r.sum.Ops)
				}
				t.Logf("%s under %s: %d seeds, %d failed, %s", s.name, p, r.sum.Seeds, len(r.failures), time.Since(start).Round(time.Millisecond))
			})
		}
	}
}

// TestTokenSchemesUncheckedStoreCaught: the same tokens against a store
// that accepts every write (FenceUnchecked): a paused leader's write lands
// after the next leader's, and stale-write says so — the sweep that is
// clean above is not blind to the tokens' failing.
func TestTokenSchemesUncheckedStoreCaught(t *testing.T) {
	for _, s := range tokenSchemes {
		t.Run(s.name, func(t *testing.T) {
			r := sweep(t, s.impl, "pause", safeTimings(), seeds(200), func(c *campaign.Config) {
				c.Target.(*vclient.Target).Options.FenceUnchecked = true
				c.FailFast = true
				c.Save = campaign.SaveOptions{}
			})
			for _, f := range r.failures {
				if slices.Contains(f.Outcome.Failed(), checker.StaleWrite) {
					t.Logf("seed %d: %v", f.Seed, f.Outcome.Failed())
					return
				}
			}
			t.Fatalf("no stale-write in %d seeds of pauses against a store that checks no token", r.sum.Seeds)
		})
	}
}
