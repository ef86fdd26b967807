package leasetest

import (
	"context"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/realrun"
	"github.com/leasecheck/leasecheck/model"
)

// A scripted check that B's acquire came after A's lease expired counts
// the renewals A's library made by itself: one answered ok after A's last
// scripted request keeps the lease live, one with no answer (its reply
// held by a stop at a pause's boundary) may have, so neither is judged
// expired; a refused one, or another owner's, changes nothing.
func TestSurelyExpiredCountsOwnRenewals(t *testing.T) {
	rec, err := realrun.NewRecorder(context.Background(), backend.Info{Name: "t"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-rec.Now()) // the recorder's zero, to a few µs
	const ttl = 300_000                 // µs
	g := reply{req: backend.Request{Kind: model.Acquire}, owner: "A", answered: true, before: 1000, after: 1100, ttl: ttl,
		Response: backend.Response{OK: true, Fence: 1, At: time.UnixMicro(1050)}}
	p := reply{req: backend.Request{Kind: model.Acquire}, owner: "B", answered: true, before: 350_000, after: 350_100,
		Response: backend.Response{OK: true, Fence: 2, At: time.UnixMicro(350_050)}}
	renewal := func(owner string, answered, ok bool) backend.Renewal {
		return backend.Renewal{Key: "k", Owner: owner, Fence: 1, Start: start.Add(200 * time.Millisecond), End: start.Add(200*time.Millisecond + 100*time.Microsecond),
			Answered: answered, OK: ok, TTL: ttl * time.Microsecond, At: time.UnixMicro(200_050)}
	}
	for _, tc := range []struct {
		name string
		own  []backend.Renewal
		want bool
	}{
		{"none", nil, true},
		{"answered ok", []backend.Renewal{renewal("A", true, true)}, false},
		{"no answer", []backend.Renewal{renewal("A", false, false)}, false},
		{"refused", []backend.Renewal{renewal("A", true, false)}, true},
		{"another owner's", []backend.Renewal{renewal("C", true, true)}, true},
	} {
		e := &env{info: backend.Info{ServerTime: true}, rec: rec, key: "k", own: tc.own}
		if got := e.surelyExpired(g, p); got != tc.want {
			t.Errorf("%s: surelyExpired = %v, want %v", tc.name, got, tc.want)
		}
	}
}
