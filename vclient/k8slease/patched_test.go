package k8slease

import (
	"k8s.io/client-go/tools/leaderelection"

	patched "github.com/leasecheck/leasecheck/vclient/k8slease/internal/clientgopatched/leaderelection"
)

// The patched variants (ReleasePatched, ReleaseFencedPatched) run on a
// copy of client-go v0.37.2's leaderelection whose tryRelease checks that
// the Lease it just read names this elector before clearing it. The copy
// is imported here only, so it is linked into this package's test binary
// and nowhere else.
func init() { patchedElector = newPatched }

func newPatched(cfg leaderelection.LeaderElectionConfig) (leaderElector, error) {
	if cfg.WatchDog != nil {
		panic("k8slease: the patched elector takes no WatchDog") // the elector sets none
	}
	return patched.NewLeaderElector(patched.LeaderElectionConfig{
		Lock:          cfg.Lock,
		LeaseDuration: cfg.LeaseDuration,
		RenewDeadline: cfg.RenewDeadline,
		RetryPeriod:   cfg.RetryPeriod,
		Callbacks: patched.LeaderCallbacks{
			OnStartedLeading: cfg.Callbacks.OnStartedLeading,
			OnStoppedLeading: cfg.Callbacks.OnStoppedLeading,
			OnNewLeader:      cfg.Callbacks.OnNewLeader,
		},
		ReleaseOnCancel: cfg.ReleaseOnCancel,
		Name:            cfg.Name,
		Coordinated:     cfg.Coordinated,
	})
}
