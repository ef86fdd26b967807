package ctrlruntime

import (
	"fmt"
	"testing"

	"github.com/leasecheck/leasecheck/internal/k8ssweep"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/vclient"
	"github.com/leasecheck/leasecheck/vclient/k8slease"
)

// Implementations, as a scenario records them.
const (
	// Unfenced: a controller-runtime manager with its default lock and
	// identity, the leader's writes guarded by its Runnable's context.
	Unfenced = "vclient:ctrlruntime"
	// Fenced: the same, every write carrying the resourceVersion of the
	// Lease write that made its manager the holder, which the resource
	// checks.
	Fenced = "vclient:ctrlruntime-fenced"
)

// Target returns the campaign target an implementation name stands for,
// its runs bubbles of t; an unknown name is an error naming the known ones.
// Both declare the manager's belief advisory (vclient.Options), as
// k8slease's targets do client-go's: the manager's Runnable is cancelled
// only after client-go's OnStoppedLeading, which comes up to RetryPeriod +
// RenewDeadline after the last renewal the API server applied.
func Target(t *testing.T, impl string) (*vclient.Target, error) {
	switch impl {
	case Unfenced:
		return &vclient.Target{T: t, Name: impl, Client: &Manager{},
			Options: vclient.Options{Fences: model.NoFences, AdvisoryBelief: true,
				Server: func() vclient.Server { return k8ssweep.Holders(k8ssweep.NewServer()) }}}, nil
	case Fenced:
		return &vclient.Target{T: t, Name: impl, Client: &Manager{Fenced: true},
			Options: vclient.Options{Fenced: true, Fences: model.Increasing, AdvisoryBelief: true,
				Server: func() vclient.Server { s := k8ssweep.NewServer(); s.Fenced = true; return k8ssweep.Holders(s) }}}, nil
	}
	return nil, fmt.Errorf("implementation %q: want %s or %s", impl, Unfenced, Fenced)
}

// Generator returns the scenario of each seed of a sweep against impl
// under profile p: k8slease's (two to four candidates, the timing drawn
// from timings, nil: all of k8slease.Timings; the profile's faults), the
// fenced one in fenced-storage semantics.
func Generator(impl string, p k8slease.Profile, timings []k8slease.Timing) func(seed uint64) *scenario.Scenario {
	if len(timings) == 0 {
		timings = k8slease.Timings
	}
	house := make([]k8ssweep.Timing, len(timings))
	for i, t := range timings {
		house[i] = k8ssweep.Timing(t)
	}
	gen := k8ssweep.Generator(impl, k8ssweep.Profile(p), house)
	return func(seed uint64) *scenario.Scenario {
		sc := gen(seed)
		if impl == Fenced {
			sc.Semantics = "fenced-storage"
		}
		return sc
	}
}
