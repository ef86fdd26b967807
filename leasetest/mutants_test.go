package leasetest

import (
	"context"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/impl/mutants"
)

// TestProjectMutants runs the suite against impl/mutants' coordinator
// mutants (the project's planted bugs). Those whose bug a real-clock,
// crash-free run can show must be caught; the others (a bug at the exact
// expiry millisecond, on restart, or with a stepped wall clock) are logged.
func TestProjectMutants(t *testing.T) {
	mustCatch := map[string]bool{
		"greedy-grant": true, "fence-not-bumped": true, "renew-after-expiry": true,
		"no-expiry": true, "release-twice-frees-next": true, "write-skips-expiry": true,
	}
	var ms []*mutants.Mutant
	for _, m := range mutants.All() {
		if m.Component == mutants.Coordinator && m.Options().NewCoordinator != nil {
			ms = append(ms, m)
		}
	}
	if len(ms) == 0 {
		t.Skip("impl/mutants has no coordinator mutants")
	}
	var wg sync.WaitGroup
	results := make([]map[string][]string, len(ms))
	for i, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			newC := m.Options().NewCoordinator
			results[i] = checkAll(context.Background(), func() (backend.Backend, func(), error) {
				return backend.InProcessCoordinator(newC(), time.Millisecond, nil), nil, nil
			}, Options{Info: backend.InProcessInfo(m.Name), TTL: testTTL})
		}()
	}
	wg.Wait()
	for i, m := range ms {
		var failing []string
		for p, msgs := range results[i] {
			if len(msgs) > 0 {
				failing = append(failing, p)
			}
		}
		sort.Strings(failing)
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
