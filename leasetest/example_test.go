package leasetest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/impl/memstore"
	"github.com/leasecheck/leasecheck/leasetest"
)

// Check runs the suite outside `go test`, here against the reference
// coordinator running in-process on the real clock.
func ExampleCheck() {
	factory := func() (backend.Backend, func(), error) {
		return backend.InProcess(memstore.New(), time.Millisecond, nil), nil, nil
	}
	err := leasetest.Check(context.Background(), factory, leasetest.Options{
		Info: backend.InProcessInfo("memstore"),
		TTL:  300 * time.Millisecond,
	})
	fmt.Println("conforms:", err == nil)
	// Output: conforms: true
}

// Run is the `go test` entry point: every property a parallel subtest.
// A networked backend's factory dials it; its Info declares its fences and
// how late its leases may expire.
func ExampleRun() {
	var t *testing.T // your test's
	leasetest.Run(t, func() (backend.Backend, func(), error) {
		b := backend.InProcess(memstore.New(), time.Millisecond, nil)
		return b, func() { b.Close() }, nil
	}, leasetest.Options{Info: backend.InProcessInfo("memstore"), TTL: time.Second})
}
