package verify

import (
	"strings"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/model"
)

// renewals is a round's history: owner's library renewing every every µs
// for n renewals, TTL 300ms.
func renewals(owner string, every int64, n int) *model.History {
	h := &model.History{}
	for i := range n {
		t := int64(i) * every
		h.Ops = append(h.Ops, model.Op{Process: model.RenewerProcess(owner), Owner: owner, Kind: model.Renew, TTL: 300_000,
			Call: t, Return: t + 100, Returned: true, OK: true})
	}
	return h
}

// renew-rate over verify's rounds: a library renewing every 10ms is
// reported with the round, the owner and the count; one renewing every
// half TTL (its declared interval) is not.
func TestRoundRates(t *testing.T) {
	for _, tc := range []struct {
		every int64
		ok    bool
		want  string
	}{
		{150_000, true, "renew-rate over the rounds: at most 2 background renewals"},
		{10_000, false, "renew-rate over the rounds: at most 30 background renewals of one owner within one TTL (300ms: h2 in round 7"},
	} {
		r := &roundRates{interval: 150 * time.Millisecond}
		r.add(3, renewals("h1", 150_000, 10))
		r.add(7, renewals("h2", tc.every, 40))
		bv := &BeliefVerdict{OK: true}
		r.judge(bv)
		if bv.OK != tc.ok || !strings.Contains(strings.Join(bv.Lines, "\n"), tc.want) {
			t.Errorf("every %dµs: ok %v, lines %q; want ok %v and %q", tc.every, bv.OK, bv.Lines, tc.ok, tc.want)
		}
	}
}
