package leasetest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/impl/memstore"
	"github.com/leasecheck/leasecheck/leasetest"
)

// An Info that leaves Fences or Writes at its zero value is refused with
// what to declare, never run with the checks those declarations decide
// turned off: every property fails, unrun, and Check says why. A complete
// declaration of the same backend runs.
func TestUndeclaredInfoRefused(t *testing.T) {
	factory := func() (backend.Backend, func(), error) {
		return backend.InProcess(memstore.New(), time.Millisecond, nil), nil, nil
	}
	full := backend.InProcessInfo("memstore")
	for _, tc := range []struct {
		name string
		info backend.Info
		want []string
	}{
		{"writes", backend.Info{Name: "mine", Fences: backend.SequentialFences, ServerTime: true}, []string{"Writes is not declared", "backend.CheckedWrites"}},
		{"fences", backend.Info{Name: "mine", Writes: backend.CheckedWrites, ServerTime: true}, []string{"Fences is not declared", "backend.NoFences"}},
		{"both", backend.Info{Name: "mine"}, []string{"Fences is not declared", "Writes is not declared"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := leasetest.Options{Info: tc.info, TTL: time.Second}
			err := leasetest.Check(context.Background(), factory, opts)
			if err == nil {
				t.Fatal("Check: nil, want the undeclared fields refused")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Check: %v; want it to say %q", err, w)
				}
			}
			for _, r := range leasetest.Evaluate(context.Background(), factory, opts) {
				if !r.Failed() || r.Skipped != "" || r.History != nil {
					t.Errorf("%s: failed %v, skipped %q, ran %v; want failed unrun", r.Property, r.Failed(), r.Skipped, r.History != nil)
				}
			}
		})
	}
	if err := full.Check(); err != nil {
		t.Fatalf("InProcessInfo: %v", err)
	}
}
