package leasetest

import (
	"context"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/procclient"
)

// Service is what one owner's client process is opened on
// (RegisterClient).
type Service struct {
	// Backend is the harness's lease service, reached over the process's
	// pipe (Processes): the in-process coordinator of a test. The harness
	// counts each request the client sends it, and cuts it for a
	// partition.
	Backend backend.Backend
	// Addr is a real server's address, through the harness's proxy, when
	// the harness gives one (verify).
	Addr string
	// Arg is what the harness passes for the opener (verify: the keys'
	// prefix).
	Arg string
}

// RegisterClient names the client of a library as one owner's process runs
// it: open builds the adapter, the library inside it, on s. The harness
// runs each owner's client in an OS process of its own, re-executing the
// program the way Go test helpers are (an environment variable names the
// client): in that process RegisterClient opens the client, serves the
// harness over the process's stdin and stdout and exits. Call it from init
// (or TestMain, or main) before anything that must not run in a client
// process.
//
// A pause of such a client is SIGSTOP and SIGCONT: its goroutines, timers
// and GC all stop, and what fell due fires at resume. A crash is SIGKILL.
// The judges excuse a client only for the time the kernel reported its
// process stopped.
func RegisterClient(name string, open func(ctx context.Context, s Service) (backend.Backend, error)) {
	procclient.Register(name, func(ctx context.Context, s procclient.Service) (backend.Backend, error) {
		return open(ctx, Service{Backend: s.Backend, Addr: s.Addr, Arg: s.Arg})
	})
}

// Processes is the Factory of the client registered as name
// (RegisterClient) run as processes: every owner of a property gets a
// process of its own, opened on the lease service service returns (called
// once per property, as any Factory), which the harness serves to it over
// its pipe. It stops every process (each closes its client), then the
// service.
func Processes(name string, service Factory) Factory {
	return func() (backend.Backend, func(), error) {
		svc, stop, err := service()
		if err != nil {
			return nil, nil, err
		}
		b, err := procclient.NewOwners(context.Background(), func(ctx context.Context, owner string) (*procclient.Client, error) {
			return procclient.Start(ctx, procclient.Spec{Name: name, Service: svc, Label: owner})
		})
		if err != nil {
			if stop != nil {
				stop()
			}
			return nil, nil, err
		}
		return b, func() {
			b.Close()
			if stop != nil {
				stop()
			}
		}, nil
	}
}

// OpenClient starts a process running the client registered as name
// (RegisterClient), opened on s, and returns it as a backend.Backend: a
// backend.Stopper whose stop is SIGSTOP and SIGCONT, a backend.Holding
// when the library holds while it says so. A verify target's Open returns
// one per client (examples/selfrenew's Verify), so that verify's pauses
// stop the whole library for real.
func OpenClient(ctx context.Context, name string, s Service) (backend.Backend, error) {
	c, err := procclient.Start(ctx, procclient.Spec{Name: name, Service: s.Backend, Addr: s.Addr, Arg: s.Arg})
	if err != nil {
		return nil, err
	}
	if c.Holding() {
		return holdingClient{c}, nil
	}
	return c, nil
}

// holdingClient is a client process whose library holds while it says so.
type holdingClient struct{ *procclient.Client }

// Unwrap lets backend.As find the process behind it.
func (h holdingClient) Unwrap() backend.Backend { return h.Client }

// Signal implements backend.Holding.
func (h holdingClient) Signal(key, owner string) <-chan struct{} { return h.SignalOf(key, owner) }

// Observe implements backend.Holding.
func (h holdingClient) Observe(fn func(backend.Renewal)) { h.ObserveRenewals(fn) }
