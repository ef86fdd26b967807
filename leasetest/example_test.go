package leasetest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/impl/memstore"
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

// A lock library without fencing tokens, whose data is a plain key: Info
// says exactly that (backend.NoFences, backend.UncheckedWrites; neither has
// a default, so neither can be forgotten). The suite skips what
// presupposes fences, saying why, and reports the missing protection once,
// as Zombie's finding; Expect records that the caller knows.
// examples/redislock does this for github.com/bsm/redislock.
func ExampleRun_lockLibrary() {
	var t *testing.T // your test's
	var openMyLock leasetest.Factory
	leasetest.Run(t, openMyLock, leasetest.Options{
		Info:   backend.Info{Name: "mylock", Fences: backend.NoFences, Writes: backend.UncheckedWrites, Uncertainty: 2 * time.Millisecond},
		Expect: []string{"Zombie"},
	})
}

// Evaluate returns a Result per property, for tools and for tests that
// assert more than pass or fail.
func ExampleEvaluate() {
	factory := func() (backend.Backend, func(), error) {
		return backend.InProcess(memstore.New(), time.Millisecond, nil), nil, nil
	}
	for _, r := range leasetest.Evaluate(context.Background(), factory, leasetest.Options{
		Info: backend.InProcessInfo("memstore"),
		TTL:  300 * time.Millisecond,
		Skip: []string{"Linearizable", "NoEarlyExpiry", "Expiry", "Renew"},
	}) {
		fmt.Println(r.Property, r.Failed())
	}
	// Output:
	// Acquire false
	// MutualExclusion false
	// RenewAfterExpiry false
	// Release false
	// NotHolder false
	// FenceIncreases false
	// StaleFence false
	// WriteAfterExpiry false
	// Zombie false
	// LossSignal false
}
