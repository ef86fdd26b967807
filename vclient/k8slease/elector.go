package k8slease

import (
	"context"
	"fmt"
	"math/rand/v2"
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
	utilptr "k8s.io/utils/ptr"

	"github.com/leasecheck/leasecheck/internal/k8ssweep"
	"github.com/leasecheck/leasecheck/vclient"
)

// elector is leasecheck's own program around client-go's LeaderElector,
// as a vclient.Client: per candidate, a typed coordination/v1 client whose
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
// presents a token learned from the Leases the typed client is answered
// with (Tokens, wrapping the client: the user's side of the API) — by
// default the resourceVersion of the Lease update that made this candidate
// the holder — and the resource refuses a token below the highest it
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
type elector struct {
	Fenced          bool
	ReleaseOnCancel bool
	// WriteWithTermContext makes the work write under the context
	// OnStartedLeading was given, as most controllers do, instead of its
	// own: when the term ends while a write is on its way (a pause held
	// it, and client-go cancels the context as the process resumes) the
	// client gives up on the write, which the store may still apply. Only
	// the store's log then shows it.
	WriteWithTermContext bool
	// ContentType is the media type the candidates' client sends and
	// prefers: "" for JSON, runtime.ContentTypeProtobuf for what a
	// clientset made by kubernetes.NewForConfig sends by default.
	ContentType string
	// Token is the token a fenced write presents (tokens.go): by default
	// the resourceVersion of the update that made this candidate holder.
	Token TokenKind
	// Namespace and Name of the Lease (default "default", "leasecheck").
	Namespace, Name string
	// New builds the elector from its configuration; nil is client-go's
	// leaderelection.NewLeaderElector. leasecheck's tests put a patched
	// copy of client-go's package here.
	New func(leaderelection.LeaderElectionConfig) (leaderElector, error)
}

// leaderElector is what elector uses of client-go's
// *leaderelection.LeaderElector (or of the patched copy its tests build).
type leaderElector interface {
	Run(ctx context.Context)
	IsLeader() bool
}

func newClientGo(cfg leaderelection.LeaderElectionConfig) (leaderElector, error) {
	return leaderelection.NewLeaderElector(cfg)
}

// Use implements vclient.RandUser: client-go's jitter draws from the run's
// seeded source.
func (e *elector) Use(r *rand.Rand) func() { return useJitter(r) }

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
func (e *elector) Start(ctx context.Context, c *vclient.Candidate) {
	ns, name := e.Namespace, e.Name
	if ns == "" {
		ns = "default"
	}
	if name == "" {
		name = "leasecheck"
	}
	ld, rd, rp := Parameters(c)
	ctx = klog.NewContext(ctx, logr.Discard())
	cc := rest.ContentConfig{ContentType: "application/json", AcceptContentTypes: "application/json"}
	if e.ContentType != "" && e.ContentType != cc.ContentType {
		// As kubernetes.NewForConfig sets its default: JSON is still
		// accepted, for the resources without a protobuf form.
		cc = rest.ContentConfig{ContentType: e.ContentType, AcceptContentTypes: e.ContentType + ",application/json"}
	}
	cfg := &rest.Config{Host: "http://kube-apiserver.invalid", Transport: c.Transport(), QPS: -1, Timeout: rd, ContentConfig: cc}
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
		tok := NewTokens(c.Identity)
		var leases coordinationv1client.LeasesGetter = cs
		if e.Fenced {
			leases = tok.Leases(cs)
		}
		var rw *releaseWatch
		if e.ReleaseOnCancel {
			rw = &releaseWatch{c: c}
			leases = releaseGetter{leases, rw}
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
		var le leaderElector
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
		if rw != nil && err == nil {
			rw.mu.Lock()
			rw.le = le
			rw.mu.Unlock()
		}
		if err != nil {
			// client-go refuses the parameters (LeaseDuration must exceed
			// RenewDeadline, which must exceed RetryPeriod·1.2): this
			// candidate never runs, as the user's binary would not.
			c.Trace("refused", "NewLeaderElector: "+err.Error())
			<-ctx.Done()
			return
		}
		if err := useClock(le, c); err != nil {
			c.Trace("refused", "clock: "+err.Error()) // its skew would reach nothing
			<-ctx.Done()
			return
		}
		le.Run(ctx)
	}
}

type job struct {
	ctx context.Context
	le  leaderElector
	tok *Tokens
}

// work is the leader's side effect (k8ssweep.Work), each write guarded by
// IsLeader() and, fenced, carrying the token of this candidate's grant.
func (e *elector) work(ctx context.Context, c *vclient.Candidate, le leaderElector, tok *Tokens) {
	o := k8ssweep.WorkOptions{Leading: le.IsLeader, TermContext: e.WriteWithTermContext}
	if e.Fenced {
		o.Fence = func() int64 { return tok.Token(e.Token) }
	}
	k8ssweep.Work(ctx, c, o)
}

// releaseWatch tells, in the trace, what a ReleaseOnCancel elector knew
// when it released: what its last Lock.Get read (the Lease its LeaseLock
// caches, whose resourceVersion the release's Update sends) and what
// IsLeader() and GetLeader() — observedRecord — said. It watches the typed
// client's calls only (the user's side of the API, as the fenced token
// does), from the elector's own goroutine, one answer at a time.
type releaseWatch struct {
	c  *vclient.Candidate
	mu sync.Mutex
	le leaderElector
	// The last Lease a Get returned.
	holder, rv string
	got        bool
}

func (w *releaseWatch) read(l *coordinationv1.Lease) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.holder, w.rv, w.got = utilptr.Deref(l.Spec.HolderIdentity, ""), l.ResourceVersion, true
}

// releasing traces an Update that clears the holder: client-go's release.
func (w *releaseWatch) releasing(l *coordinationv1.Lease) {
	if l == nil || utilptr.Deref(l.Spec.HolderIdentity, "") != "" {
		return
	}
	w.mu.Lock()
	le, holder, rv, got := w.le, w.holder, w.rv, w.got
	w.mu.Unlock()
	read := "no Lock.Get before it"
	if got {
		read = fmt.Sprintf("Lock.Get read holderIdentity=%q resourceVersion=%s", holder, rv)
	}
	believed := ""
	if g, ok := le.(interface{ GetLeader() string }); ok {
		believed = fmt.Sprintf(" (observedRecord holderIdentity=%q)", g.GetLeader())
	}
	leader := le != nil && le.IsLeader()
	w.c.Trace("releases", fmt.Sprintf("tryRelease: %s; IsLeader()=%t%s; Update sets holderIdentity=\"\" with resourceVersion=%s",
		read, leader, believed, l.ResourceVersion))
}

type releaseGetter struct {
	coordinationv1client.LeasesGetter
	w *releaseWatch
}

func (g releaseGetter) Leases(ns string) coordinationv1client.LeaseInterface {
	return releaseLeases{g.LeasesGetter.Leases(ns), g.w}
}

type releaseLeases struct {
	coordinationv1client.LeaseInterface
	w *releaseWatch
}

func (l releaseLeases) Get(ctx context.Context, name string, o metav1.GetOptions) (*coordinationv1.Lease, error) {
	r, err := l.LeaseInterface.Get(ctx, name, o)
	if err == nil && r != nil {
		l.w.read(r)
	}
	return r, err
}

func (l releaseLeases) Update(ctx context.Context, lease *coordinationv1.Lease, o metav1.UpdateOptions) (*coordinationv1.Lease, error) {
	l.w.releasing(lease)
	return l.LeaseInterface.Update(ctx, lease, o)
}
