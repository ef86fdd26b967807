package leasetest

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/impl/mutants"
)

// TestProjectMutants runs the suite against internal/impl/mutants' coordinator
// mutants (the project's planted bugs, switches on the reference). Those
// whose bug a real-clock, crash-free run can show must be caught; the
// others (a bug at the exact expiry millisecond, on restart, or with a
// stepped wall clock) are logged.
func TestProjectMutants(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite against every coordinator mutant")
	}
	mustCatch := map[string]bool{
		"greedy-grant": true, "fence-not-bumped": true, "renew-after-expiry": true,
		"no-expiry": true, "release-twice-frees-next": true, "write-skips-expiry": true,
	}
	var ms []*mutants.Mutant
	for _, m := range mutants.All() {
		if m.Component == mutants.Coordinator && m.Machines().NewCoordinator != nil {
			ms = append(ms, m)
		}
	}
	if len(ms) < len(mustCatch) {
		t.Fatalf("internal/impl/mutants has %d coordinator mutants, want at least the %d this test names", len(ms), len(mustCatch))
	}
	results := make([][]*Result, len(ms))
	sem := make(chan struct{}, 3)
	var wg sync.WaitGroup
	for i, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			newC := m.Machines().NewCoordinator
			results[i] = Evaluate(context.Background(), func() (backend.Backend, func(), error) {
				return backend.InProcessCoordinator(newC(), time.Millisecond, nil), nil, nil
			}, Options{Info: backend.InProcessInfo(m.Name), TTL: testTTL})
		}()
	}
	wg.Wait()
	for i, m := range ms {
		var failing []string
		for _, r := range results[i] {
			if r.Failed() {
				failing = append(failing, r.Property)
			}
		}
		switch {
		case len(failing) > 0:
			t.Logf("mutant %-26s caught by %s", m.Name, strings.Join(failing, ", "))
		case mustCatch[m.Name]:
			t.Errorf("mutant %s (%s) passed every property", m.Name, m.Failure)
		default:
			t.Logf("mutant %-26s not caught (%s)", m.Name, m.Failure)
		}
	}
}
