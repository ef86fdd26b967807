package selfrenew_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"example.com/leasecheck-examples/selfrenew"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/leasetest"
	"github.com/leasecheck/leasecheck/model"
)

const ttl = 300 * time.Millisecond

func factory(delay time.Duration) leasetest.Factory {
	return func() (backend.Backend, func(), error) {
		a := selfrenew.NewAdapter(delay)
		return a, func() { a.Close() }, nil
	}
}

// The library that renews by itself passes the whole suite: its renewals
// are in the history as it makes them, a scripted pause stops its whole
// client, and its loss signal comes in time (LossSignal runs, not skipped).
func TestLeasetest(t *testing.T) {
	leasetest.Run(t, factory(0), leasetest.Options{Info: selfrenew.Info(ttl), TTL: ttl})
}

// The same library with its context cancelled 5 s after it found the lock
// lost breaks its promise, and LossSignal says so, naming the property,
// the server's record and the overlap with the next holder.
func TestLateLossSignalCaught(t *testing.T) {
	var skip []string
	for _, p := range leasetest.Properties() {
		if p != "LossSignal" {
			skip = append(skip, p)
		}
	}
	rs := leasetest.Evaluate(context.Background(), factory(5*time.Second), leasetest.Options{Info: selfrenew.Info(ttl), TTL: ttl, Skip: skip})
	if len(rs) != 1 || rs[0].Skipped != "" {
		t.Fatalf("LossSignal did not run: %+v", rs)
	}
	r := rs[0]
	if !r.Failed() {
		t.Fatalf("a loss signalled 5 s late passed:\n%s", r.Report())
	}
	report := r.Report()
	for _, w := range []string{leasetest.LossSignalProperty + ": A's library said the lock was lost", "more than the declared LossLateness", "exclusive-belief: A and B both believed"} {
		if !strings.Contains(report, w) {
			t.Errorf("report does not say %q:\n%s", w, report)
		}
	}
	if !slices.ContainsFunc(r.History.Ops, func(op model.Op) bool { return op.Process == "A/renewer" && op.OK }) {
		t.Errorf("no background renewal of A's in the history:\n%s", report)
	}
}
