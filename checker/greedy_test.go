package checker

import (
	"context"
	"slices"
	"testing"

	"github.com/leasecheck/leasecheck/internal/timed"
	"github.com/leasecheck/leasecheck/model"
)

// greedyOnKeys runs the greedy pass on every key of h: per key, whether it
// placed every op, and the judge's word on the order it proposed.
func greedyOnKeys(t *testing.T, h *model.History) (placed, accepted, keys int) {
	t.Helper()
	c := timed.Compile(h)
	b := newBudget(context.Background(), 0, -1)
	for k := range c.Keys {
		ko := &c.Keys[k]
		p := newPreparer(h.Header, c.Names, factsOf(h, ko.Index))
		kops := make([]kop, len(ko.Index))
		var events []event
		for i, idx := range ko.Index {
			p.prepare(&h.Ops[idx], &ko.Inputs[i], &kops[i])
			kops[i].hidx = idx
		}
		for i := range kops {
			events = eventsOf(&kops[i], events)
		}
		slices.SortFunc(events, compareEvents)
		g := greedyWitness(b, timed.RulesOf(h.Header), events, pinsAhead(events), len(kops))
		keys++
		if g.stuck != nil {
			continue
		}
		placed++
		order := make([]timed.Placement, len(g.log))
		for i, st := range g.log {
			order[i] = timed.Placement{Op: st.k.hidx, Applied: st.applied}
		}
		if err := timed.VerifyLinearization(h, ko, order); err != nil {
			t.Errorf("%s key %q: the greedy pass placed every op, but the judge refuses its order: %v", h.Name, ko.Key, err)
			continue
		}
		accepted++
	}
	return placed, accepted, keys
}

// Over the class (correct histories of every axis), the greedy pass is
// what decides: it places the ops of nearly every key, and each order it
// proposes is one the model accepts (timed.VerifyLinearization, written
// apart from it). On a history with a planted violation of linearizable,
// no key's order is accepted that the checker then calls violated.
func TestGreedyDecidesTheClass(t *testing.T) {
	placed, accepted, keys := 0, 0, 0
	for _, p := range classSample(testing.Short()) {
		h, _ := p.History()
		pl, ac, ks := greedyOnKeys(t, h)
		placed, accepted, keys = placed+pl, accepted+ac, keys+ks
		if pl < ks {
			t.Logf("%s: %d of %d keys left to the sweeps", p.Name(), ks-pl, ks)
		}
	}
	t.Logf("correct histories: the greedy pass placed %d of %d keys, the judge accepted %d", placed, keys, accepted)
	if accepted < keys*9/10 {
		t.Errorf("the greedy pass decided %d of %d keys of correct histories, want at least 90%%", accepted, keys)
	}
}
