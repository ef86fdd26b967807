package ctrlruntime

import (
	"context"
	"math/rand/v2"
	"net/http"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/leasecheck/leasecheck/internal/k8ssweep"
	"github.com/leasecheck/leasecheck/vclient"
	"github.com/leasecheck/leasecheck/vclient/k8slease"
)

// Manager is the user's program around a controller-runtime manager, as a
// vclient.Client: per candidate, manager.New with leader election on and
// everything else of it at its defaults — the "leases" lock, the
// hostname_uuid identity (its UUID seeded: k8slease.SeedUUIDs), its event recorder (its
// "became leader" Events go to the API server, which accepts them) — with
// the scenario's LeaseDuration (its TTL), RenewDeadline (the holder's
// timeout) and RetryPeriod (its renew interval) as k8slease.Parameters
// maps them, its metrics and health probes off (no listening port in a
// bubble), and one Runnable that needs leader election: the leader's work
// (k8ssweep.Work), its writes guarded by nothing but the Runnable's
// context, which is the manager's word on leadership. The manager starts
// it once elected (Elected() closes with it) and cancels it when it stops;
// that span is the candidate's belief. A manager that lost its lease
// returns from Start ("leader election lost"), and a candidate's process
// would exit: a new manager is built (a new identity), as a pod restarted
// by its kubelet would.
//
// Unfenced, the writes carry no token. Fenced, every write presents the
// resourceVersion of the Lease write that made this manager the holder,
// read from the API server's answers by a WrapTransport on the manager's
// rest.Config (k8slease.TokenTransport): a user cannot reach the lock the
// manager builds, only its transport.
type Manager struct {
	Fenced bool
	// WriteWithTermContext makes the work write under the Runnable's
	// context (k8ssweep.WorkOptions.TermContext).
	WriteWithTermContext bool
	// Namespace and LeaderElectionID, the Lease's namespace and name
	// (default "default", "leasecheck").
	Namespace, LeaderElectionID string
}

// Use implements vclient.RandUser: client-go's jitter (which the manager's
// leader election draws from) comes from the run's seeded source; the
// identities' UUIDs from each candidate's (k8slease.SeedUUIDs).
func (m *Manager) Use(r *rand.Rand) func() { return k8slease.UseJitter(r) }

// Start implements vclient.Client.
func (m *Manager) Start(ctx context.Context, c *vclient.Candidate) {
	ns, name := m.Namespace, m.LeaderElectionID
	if ns == "" {
		ns = "default"
	}
	if name == "" {
		name = "leasecheck"
	}
	ld, rd, rp := k8slease.Parameters(c)
	ctx = klog.NewContext(ctx, logr.Discard())
	for ctx.Err() == nil {
		var mgr manager.Manager
		var fence func() int64
		err := k8slease.SeedUUIDs(c, func() error {
			// The rest of the configuration at client-go's defaults: its
			// content types, protobuf where the type has one.
			cfg := &rest.Config{Host: "http://kube-apiserver.invalid", Transport: c.Transport(), QPS: -1}
			if m.Fenced {
				cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
					// The identity is the manager's own (hostname_uuid),
					// learned from its first Lease write.
					rt, fence = k8slease.TokenTransport(rt, "")
					return rt
				}
			}
			var err error
			mgr, err = manager.New(cfg, manager.Options{
				Logger:                  logr.Discard(),
				LeaderElection:          true,
				LeaderElectionNamespace: ns,
				LeaderElectionID:        name,
				LeaseDuration:           &ld,
				RenewDeadline:           &rd,
				RetryPeriod:             &rp,
				Metrics:                 metricsserver.Options{BindAddress: "0"},
				HealthProbeBindAddress:  "0",
			})
			return err
		})
		if err != nil {
			c.Trace("refused", "manager.New: "+err.Error())
			<-ctx.Done()
			return
		}
		if m.Fenced && fence == nil {
			c.Trace("refused", "the manager built no client through its rest.Config's transport")
			<-ctx.Done()
			return
		}
		l := &leader{c: c, o: k8ssweep.WorkOptions{Fence: fence, TermContext: m.WriteWithTermContext}}
		if err := mgr.Add(l); err != nil {
			c.Trace("refused", "manager.Add: "+err.Error())
			<-ctx.Done()
			return
		}
		err = mgr.Start(ctx)
		l.close()
		if err != nil && ctx.Err() == nil {
			select {
			case <-mgr.Elected():
				c.Trace("manager exited", err.Error())
			default:
				// Never elected, yet it stopped: it refused its
				// configuration (client-go's checks of the three
				// parameters), as the user's binary would at start.
				c.Trace("refused", "manager.Start: "+err.Error())
				<-ctx.Done()
				return
			}
		}
	}
}

// leader is the Runnable that needs leader election: the leader's work.
type leader struct {
	c *vclient.Candidate
	o k8ssweep.WorkOptions

	mu      sync.Mutex
	closed  bool
	running sync.WaitGroup
}

// NeedLeaderElection implements manager.LeaderElectionRunnable.
func (l *leader) NeedLeaderElection() bool { return true }

// Start implements manager.Runnable: called once the manager is elected,
// its context cancelled when the manager stops.
func (l *leader) Start(ctx context.Context) error {
	l.mu.Lock()
	if l.closed {
		// The manager returned before its runnable group got to it.
		l.mu.Unlock()
		return nil
	}
	l.running.Add(1)
	l.mu.Unlock()
	defer l.running.Done()
	l.c.Leading("Runnable started (elected)")
	stopped := make(chan struct{})
	go func() {
		// The belief ends with the context, not with the work: a write
		// the work has on its way does not end when the context does.
		<-ctx.Done()
		l.c.Stopped("the Runnable's context ended")
		close(stopped)
	}()
	k8ssweep.Work(ctx, l.c, l.o)
	<-stopped
	return nil
}

// close waits for Start to return, and keeps it from starting after: a
// manager that lost its lease returns without waiting for its runnables
// (controller-runtime skips the graceful shutdown then), but a candidate's
// Start must not return before every goroutine it began has.
func (l *leader) close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.running.Wait()
}
