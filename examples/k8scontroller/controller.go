// Package k8scontroller is a controller as its author ships it: client-go's
// leader election over a Lease, 15 s / 10 s / 2 s, its work run while it
// leads under the context leadership gave it. Nothing in this file knows
// leasecheck: controller_test.go sweeps it as it is, handing it what its
// main would (a rest.Config, an identity, the work) and nothing else.
package k8scontroller

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Config is what main gives the controller.
type Config struct {
	// Rest is the API server's address and credentials (in a Pod:
	// rest.InClusterConfig()).
	Rest *rest.Config
	// Namespace and Lease name the Lease the replicas elect over;
	// Identity is this replica's (in a Pod: its name).
	Namespace, Lease, Identity string
	// Work is what the controller does while it leads; its context ends
	// when leadership does, and Run waits for it to return.
	Work func(ctx context.Context)
}

// Run campaigns for the Lease and runs the work while this replica leads.
// It returns once leadership is lost (or ctx ends) and the work has
// returned: the replica's process then exits and is restarted, as
// client-go's own examples have it.
func Run(ctx context.Context, cfg Config) error {
	cs, err := kubernetes.NewForConfig(cfg.Rest)
	if err != nil {
		return err
	}
	// client-go starts OnStartedLeading in a goroutine of its own and
	// returns from Run without waiting for it: the work outlives no Run
	// here (once Run is over, a term that had not begun does not).
	var (
		mu      sync.Mutex
		over    bool
		working sync.WaitGroup
	)
	defer func() {
		mu.Lock()
		over = true
		mu.Unlock()
		working.Wait()
	}()
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: cfg.Namespace, Name: cfg.Lease},
			Client:     cs.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: cfg.Identity},
		},
		LeaseDuration: 15 * time.Second,
		RenewDeadline: 10 * time.Second,
		RetryPeriod:   2 * time.Second,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				mu.Lock()
				if over {
					mu.Unlock()
					return
				}
				working.Add(1)
				mu.Unlock()
				defer working.Done()
				cfg.Work(ctx)
			},
			OnStoppedLeading: func() {},
		},
		Name: cfg.Lease,
	})
	if err != nil {
		return fmt.Errorf("k8scontroller: %w", err)
	}
	le.Run(ctx)
	return nil
}
