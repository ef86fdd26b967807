package k8slease

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"

	"github.com/leasecheck/leasecheck/vclient"
)

// Elector is the user's program around client-go's LeaderElector, as a
// vclient.Client: per candidate, a typed coordination/v1 client whose
// transport is the harness's (rest.Config.Timeout = RenewDeadline, as
// kube-controller-manager and kube-scheduler configure their
// leader-election client), a resourcelock.LeaseLock, and a LeaderElector
// with the scenario's LeaseDuration (the scenario's TTL), RenewDeadline
// (the holder's timeout) and RetryPeriod (its renew interval). While it
// leads — from OnStartedLeading until the context it gave ends — the
// user's work runs: the holder's work items in a loop, each a wait and
// then its writes, every write guarded by IsLeader(), to the resource. A
// candidate whose elector returned (it lost the lease) starts a new one,
// as a pod restarted by its kubelet would.
//
// Unfenced, the writes carry no token: nothing stops a write that left a
// leader before it noticed the lease had moved on. Fenced, every write
// presents the resourceVersion of the Lease update that made this
// candidate the holder (learned by wrapping the typed client, the user's
// side of the API), and the resource refuses a token below the highest it
// accepted.
//
// ReleaseOnCancel sets client-go's LeaderElectionConfig.ReleaseOnCancel:
// when its renew loop ends — its context cancelled (a graceful shutdown,
// faults.Shutdown) or a renewal failed — the elector clears the Lease's
// holderIdentity so that another need not wait out LeaseDuration. The
// belief such a candidate reports is then its work's own signal, the end
// of the context OnStartedLeading was given: client-go calls
// OnStoppedLeading only after the release's round trips, while the work
// stopped when its context ended.
type Elector struct {
	Fenced          bool
	ReleaseOnCancel bool
	// WriteWithTermContext makes the work write under the context
	// OnStartedLeading was given, as most controllers do, instead of its
	// own: when the term ends while a write is on its way (a pause held
	// it, and client-go cancels the context as the process resumes) the
	// client gives up on the write, which the store may still apply. Only
	// the store's log then shows it (campaign.Execution.Store).
	WriteWithTermContext bool
	// Namespace and Name of the Lease (default "default", "leasecheck").
	Namespace, Name string
	// New builds the elector from its configuration; nil is client-go's
	// leaderelection.NewLeaderElector. The tests put a patched copy of
	// client-go's package here (internal/clientgopatched).
	New func(leaderelection.LeaderElectionConfig) (LeaderElector, error)
}

// LeaderElector is what the user's program uses of client-go's
// *leaderelection.LeaderElector.
type LeaderElector interface {
	Run(ctx context.Context)
	IsLeader() bool
}

func newClientGo(cfg leaderelection.LeaderElectionConfig) (LeaderElector, error) {
	return leaderelection.NewLeaderElector(cfg)
}

// Use implements vclient.RandUser: client-go's jitter draws from the run's
// seeded source.
func (e *Elector) Use(r *rand.Rand) func() { return useJitter(r) }

// Parameters returns the three parameters a candidate's elector runs with:
// LeaseDuration is the scenario's TTL, RenewDeadline the holder's timeout
// (default 2/3 of it, as 10 s is of 15 s), RetryPeriod its renew interval
// (default 2/15 of it, as 2 s is of 15 s).
func Parameters(c *vclient.Candidate) (leaseDuration, renewDeadline, retryPeriod time.Duration) {
	ld := c.TTL
	rd, rp := c.Process.Timeout, c.Process.RenewEvery
	if rd <= 0 {
		rd = ld * 2 / 3
	}
	if rp <= 0 {
		rp = ld * 2 / 15
	}
	return time.Duration(ld) * time.Millisecond, time.Duration(rd) * time.Millisecond, time.Duration(rp) * time.Millisecond
}

// Start implements vclient.Client.
func (e *Elector) Start(ctx context.Context, c *vclient.Candidate) {
	ns, name := e.Namespace, e.Name
	if ns == "" {
		ns = "default"
	}
	if name == "" {
		name = "leasecheck"
	}
	ld, rd, rp := Parameters(c)
	ctx = klog.NewContext(ctx, logr.Discard())
	cfg := &rest.Config{Host: "http://kube-apiserver.invalid", Transport: c.Transport(), QPS: -1, Timeout: rd,
		ContentConfig: rest.ContentConfig{ContentType: "application/json", AcceptContentTypes: "application/json"}}
	cs, err := coordinationv1client.NewForConfig(cfg)
	if err != nil {
		c.Trace("refused", "client: "+err.Error())
		return
	}
	// One goroutine does the leader's work; each term's OnStartedLeading
	// hands it the term's context (and returns once the term ends).
	jobs := make(chan job)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case j := <-jobs:
				e.work(j.ctx, c, j.le, j.tok)
			case <-ctx.Done():
				return
			}
		}
	}()
	defer func() { <-done }()
	for ctx.Err() == nil {
		tok := &token{id: c.Identity}
		var leases coordinationv1client.LeasesGetter = cs
		if e.Fenced {
			leases = tokenGetter{cs, tok}
		}
		lock := &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: ns, Name: name},
			Client:     leases,
			LockConfig: resourcelock.ResourceLockConfig{Identity: c.Identity},
		}
		build := e.New
		if build == nil {
			build = newClientGo
		}
		var le LeaderElector
		le, err = build(leaderelection.LeaderElectionConfig{
			Lock:            lock,
			LeaseDuration:   ld,
			RenewDeadline:   rd,
			RetryPeriod:     rp,
			Name:            name,
			ReleaseOnCancel: e.ReleaseOnCancel,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(lctx context.Context) {
					c.Leading("OnStartedLeading")
					select {
					case jobs <- job{lctx, le, tok}:
					case <-lctx.Done():
					}
					if e.ReleaseOnCancel {
						// One signal only: the term's end and OnStoppedLeading
						// may come at one instant, in two goroutines.
						<-lctx.Done()
						c.Stopped("the end of OnStartedLeading's context")
					}
				},
				OnStoppedLeading: func() {
					if !e.ReleaseOnCancel {
						c.Stopped("OnStoppedLeading")
					}
				},
			},
		})
		if err != nil {
			// client-go refuses the parameters (LeaseDuration must exceed
			// RenewDeadline, which must exceed RetryPeriod·1.2): this
			// candidate never runs, as the user's binary would not.
			c.Trace("refused", "NewLeaderElector: "+err.Error())
			<-ctx.Done()
			return
		}
		le.Run(ctx)
	}
}

type job struct {
	ctx context.Context
	le  LeaderElector
	tok *token
}

// work is the leader's side effect (Work), each write guarded by
// IsLeader() and, fenced, carrying the token of this candidate's grant.
func (e *Elector) work(ctx context.Context, c *vclient.Candidate, le LeaderElector, tok *token) {
	o := WorkOptions{Leading: le.IsLeader, TermContext: e.WriteWithTermContext}
	if e.Fenced {
		o.Fence = tok.get
	}
	Work(ctx, c, o)
}

// token is the fenced user's token: the resourceVersion of the Lease
// update that made this candidate the holder. It is learned from the
// answers of the typed client (wrapped: the user's side of the API, not
// client-go's), so it is exactly what the API server wrote.
type token struct {
	id   string
	mu   sync.Mutex
	seen string // the holder of the last Lease seen
	rv   int64
}

func (t *token) get() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.rv
}

// observe notes a Lease the API server returned.
func (t *token) observe(l *coordinationv1.Lease, written bool) {
	if l == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	h := ""
	if l.Spec.HolderIdentity != nil {
		h = *l.Spec.HolderIdentity
	}
	if written && h == t.id && t.seen != t.id {
		if rv, err := strconv.ParseInt(l.ResourceVersion, 10, 64); err == nil {
			t.rv = rv
		}
	}
	if h != t.id {
		t.rv = 0 // another holds it: no token of ours is current
	}
	t.seen = h
}

type tokenGetter struct {
	coordinationv1client.LeasesGetter
	tok *token
}

func (g tokenGetter) Leases(ns string) coordinationv1client.LeaseInterface {
	return tokenLeases{g.LeasesGetter.Leases(ns), g.tok}
}

type tokenLeases struct {
	coordinationv1client.LeaseInterface
	tok *token
}

func (l tokenLeases) Get(ctx context.Context, name string, o metav1.GetOptions) (*coordinationv1.Lease, error) {
	r, err := l.LeaseInterface.Get(ctx, name, o)
	if err == nil {
		l.tok.observe(r, false)
	}
	return r, err
}

func (l tokenLeases) Create(ctx context.Context, lease *coordinationv1.Lease, o metav1.CreateOptions) (*coordinationv1.Lease, error) {
	r, err := l.LeaseInterface.Create(ctx, lease, o)
	if err == nil {
		l.tok.observe(r, true)
	}
	return r, err
}

func (l tokenLeases) Update(ctx context.Context, lease *coordinationv1.Lease, o metav1.UpdateOptions) (*coordinationv1.Lease, error) {
	r, err := l.LeaseInterface.Update(ctx, lease, o)
	if err == nil {
		l.tok.observe(r, true)
	}
	return r, err
}
