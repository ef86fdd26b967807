package verify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/procclient"
	"github.com/leasecheck/leasecheck/leasetest"
)

// Where each owner's client runs (--clients).
const (
	// clientsProcess: each owner's client is a child process of the
	// program (the program re-executed, as Go test helpers are): a pause is
	// SIGSTOP and SIGCONT, which stops the library's goroutines, timers and
	// GC alike, a crash SIGKILL, and the judges excuse a client only for
	// the time the kernel reported its process stopped. The default.
	clientsProcess = "process"
	// clientsInProcess: every client in the program's own process, a pause
	// gating its connections (or the backend's own backend.Stopper):
	// faster, and true to the world only for a library that can really
	// stop.
	clientsInProcess = "in-process"
)

// clientName is the name verify's client processes are registered under
// (procclient.Register): one for every backend, the backend named in the
// process's argument.
const clientName = "leasecheck-verify"

// servedEarly records that ServeClients ran before Command.Run: in a test
// binary only then does the re-executed binary serve the clients (its
// tests, and with them Run, do not run in the child).
var (
	servedMu    sync.Mutex
	servedEarly bool
)

// ServeClients makes this program serve verify's client processes for
// backends: run in a child verify started for one owner's client, it
// opens that client and serves it, and the process exits when the parent
// closes it; run in any other process it only records the backends.
//
// Main and Command.Run call it first, before they parse a flag, so a
// program whose main is (or starts with) one of them needs nothing more.
// A test binary runs Command.Run from a test, which the child never
// reaches: call ServeClients from its init or TestMain, with the backends
// its tests run, or its verify runs fall back to clients in the test's
// process (the summary says so).
//
// In a client process, a backend's Open is called again to build the one
// client (Opened.Target.Open, to the address the parent gives: the
// client's own proxy); InClientProcess tells Open that it is, so that it
// starts nothing there (no server: the parent's is used).
func ServeClients(backends ...Backend) { serveClients(backends, true) }

// serveClients is ServeClients; early: called before Command.Run.
func serveClients(backends []Backend, early bool) {
	bs := slices.Clone(backends)
	if early {
		servedMu.Lock()
		servedEarly = true
		servedMu.Unlock()
	}
	procclient.Register(clientName, func(ctx context.Context, s procclient.Service) (backend.Backend, error) {
		return openChild(ctx, bs, s)
	})
}

// clientArg is what a client process is told: which backend, opened how
// (the parent's spec and prefix), and where the parent's server is.
type clientArg struct {
	Backend string `json:"backend"`
	Spec    string `json:"spec"`
	Prefix  string `json:"prefix"`
	Addr    string `json:"addr"`
}

// clientKey is InClientProcess's context key.
type clientKey struct{}

// InClientProcess reports whether Open is called in one of verify's
// client processes, and the address of the parent's target there
// (RunTarget.Addr as the parent's Open returned it). Open must then start
// nothing — no server, no cluster: the parent's is the one — and return a
// target whose Open connects a client to the address it is given: only
// that is used. An Open that starts a server for a bare name, say, builds
// the target of the server's URL form on addr instead.
func InClientProcess(ctx context.Context) (addr string, ok bool) {
	addr, ok = ctx.Value(clientKey{}).(string)
	return addr, ok
}

// openChild opens the client a child process serves.
func openChild(ctx context.Context, backends []Backend, s procclient.Service) (backend.Backend, error) {
	var a clientArg
	if err := json.Unmarshal([]byte(s.Arg), &a); err != nil {
		return nil, fmt.Errorf("verify: a client process with no backend: %w", err)
	}
	i := slices.IndexFunc(backends, func(b Backend) bool { return b.Name == a.Backend })
	if i < 0 {
		return nil, fmt.Errorf("verify: this program serves no backend %q in its client processes", a.Backend)
	}
	o, err := backends[i].Open(context.WithValue(ctx, clientKey{}, a.Addr), a.Spec, a.Prefix)
	if err != nil {
		return nil, err
	}
	if o.Target.Open == nil {
		if o.Close != nil {
			o.Close()
		}
		return nil, errors.New("verify: Open returned a target without a client (Target.Open)")
	}
	cl, err := o.Target.Open(ctx, s.Addr)
	if err != nil || o.Close == nil {
		if err != nil && o.Close != nil {
			o.Close()
		}
		return cl, err
	}
	return &closing{Backend: cl, close: o.Close}, nil
}

// closing is a client process's client, which also closes what its
// backend's Open started there.
type closing struct {
	backend.Backend
	close func()
}

func (c *closing) Close() error {
	err := c.Backend.Close()
	c.close()
	return err
}

// Unwrap lets backend.As find what the client is.
func (c *closing) Unwrap() backend.Backend { return c.Backend }

// isTestBinary reports whether this program is a Go test binary, which
// runs no Command.Run in a child (procclient starts it with no test to run).
func isTestBinary() bool {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return strings.HasSuffix(exe, ".test")
}

// clientLog is where one invocation's clients ran: every client process
// it opened, and what the kernel reported of their stops.
type clientLog struct {
	mode string // clientsProcess or clientsInProcess, as run
	note string // how they ran, for the header and the summary

	mu    sync.Mutex
	procs []*procclient.Client
}

// counting wraps open to record every client process it opens.
func (l *clientLog) counting(open func(context.Context, string) (backend.Backend, error)) func(context.Context, string) (backend.Backend, error) {
	return func(ctx context.Context, addr string) (backend.Backend, error) {
		b, err := open(ctx, addr)
		if c, ok := backend.As[*procclient.Client](b); ok && err == nil {
			l.mu.Lock()
			l.procs = append(l.procs, c)
			l.mu.Unlock()
		}
		return b, err
	}
}

// ClientsSummary says where the run's clients ran (Summary.Clients).
type ClientsSummary struct {
	// Mode is "process" or "in-process" (--clients), as run; Note says how
	// (and, when processes were asked for and not run, why).
	Mode string `json:"mode"`
	Note string `json:"note"`
	// Processes counts the client processes the run started; Pids are
	// the process ids of the first 100 of them (a long run starts a few a
	// round, and a summary does not grow with the rounds).
	Processes int   `json:"processes"`
	Pids      []int `json:"pids,omitempty"`
	// KernelStops counts the stops of those processes the kernel reported
	// (wait4: stopped, then continued), and KernelStopped sums their
	// lengths, in µs: what the judges may excuse.
	KernelStops   int   `json:"kernel_stops"`
	KernelStopped int64 `json:"kernel_stopped"`
}

// maxListedPids bounds ClientsSummary.Pids.
const maxListedPids = 100

func (l *clientLog) summary() ClientsSummary {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := ClientsSummary{Mode: l.mode, Note: l.note, Processes: len(l.procs)}
	for _, c := range l.procs {
		if len(s.Pids) < maxListedPids {
			s.Pids = append(s.Pids, c.Pid())
		}
		for _, sp := range c.Stops() {
			s.KernelStops++
			if !sp.Open {
				s.KernelStopped += int64(sp.To.Sub(sp.From) / time.Microsecond)
			}
		}
	}
	return s
}

// chooseClients decides where tg's clients run for mode (--clients),
// probing one client (checkReachable) first: a backend whose clients are
// processes already (leasetest.OpenClient) runs them as they are; one
// that gives no address runs in process (a child has nothing to dial).
// It returns the target to run, with every client process it opens
// recorded in log.
func chooseClients(ctx context.Context, mode, spec, prefix, name string, tg RunTarget, log *clientLog) (RunTarget, error) {
	own, err := checkReachable(ctx, tg)
	if err != nil {
		return tg, err
	}
	servedMu.Lock()
	early := servedEarly
	servedMu.Unlock()
	switch {
	case own:
		log.mode, log.note = clientsProcess, "each owner's client a child process (the backend's own: leasetest.OpenClient)"
		if mode == clientsInProcess {
			log.note += "; --clients in-process does not apply to it"
		}
	case mode == clientsInProcess:
		log.mode, log.note = clientsInProcess, "in verify's process (--clients in-process): a pause gates the client's connections unless the library can stop itself"
	case tg.Addr == "":
		log.mode, log.note = clientsInProcess, "in verify's process: the target gives no address a client process could connect to"
	case isTestBinary() && !early:
		log.mode, log.note = clientsInProcess, "in verify's process: this test binary serves no client processes (call verify.ServeClients from its init or TestMain)"
	default:
		arg, err := json.Marshal(clientArg{Backend: name, Spec: spec, Prefix: prefix, Addr: tg.Addr})
		if err != nil {
			return tg, err
		}
		tg.Open = func(ctx context.Context, addr string) (backend.Backend, error) {
			return leasetest.OpenClient(ctx, clientName, leasetest.Service{Addr: addr, Arg: string(arg)})
		}
		// One client opened the way every round's are, so a program that
		// cannot serve them says so before the rounds.
		if _, err := checkReachable(ctx, tg); err != nil {
			return tg, fmt.Errorf("%w (--clients in-process runs the clients in this process)", err)
		}
		log.mode, log.note = clientsProcess, "each owner's client a child process of this program: a pause is SIGSTOP, a crash SIGKILL"
	}
	tg.Open = log.counting(tg.Open)
	return tg, nil
}
