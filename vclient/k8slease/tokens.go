package k8slease

import (
	"context"
	"strconv"
	"sync"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
)

// Fencing tokens as a Kubernetes controller builds them from its Lease.
//
// A LeaderElector holder is not told a token: it has the Lease objects the
// API server answered with. Three numbers in them only grow across holder
// changes, so a store that keeps the highest token it accepted and refuses
// a lower one keeps a deposed holder's late write out once the next
// holder has written:
//
//   - the resourceVersion of the create or update that made this candidate
//     the holder (TokenAcquired): every later holder's acquiring update
//     comes after it, with a higher resourceVersion;
//   - the resourceVersion of the Lease read (or written) while this
//     candidate holds it (TokenHeld): the version it read was written
//     before the next holder's acquiring update;
//   - leaseTransitions + 1 of the Lease while this candidate holds it
//     (TokenTransitions): client-go's elector adds one to leaseTransitions
//     whenever the holder changes, and keeps it when the holder renews.
//
// resourceVersion is opaque by the API's contract; the Kubernetes API
// server (etcd's revision) and the one a sweep runs against write
// integers that only grow, and the tokens assume that. leaseTransitions starts again if
// the Lease is deleted and created anew.
//
// A store given any of them judges with "tokens":"ordered" in the
// history's header (model.OrderedTokens) — except TokenAcquired, which is
// the number a sweep's API server records for the grant itself.

// TokenKind names one of the three tokens.
type TokenKind uint8

const (
	// TokenAcquired: the resourceVersion of the update (or create) that
	// made this candidate the holder.
	TokenAcquired TokenKind = iota
	// TokenHeld: the resourceVersion of the latest Lease the API server
	// answered with while this candidate is its holder.
	TokenHeld
	// TokenTransitions: leaseTransitions + 1 of that Lease.
	TokenTransitions
)

func (k TokenKind) String() string {
	switch k {
	case TokenHeld:
		return "resourceVersion-held"
	case TokenTransitions:
		return "leaseTransitions+1"
	}
	return "resourceVersion-acquired"
}

// resourceVersionToken reads a Lease's resourceVersion as a token: ok is
// false when it is not a positive integer (a server whose versions are
// not numbers cannot be ordered this way).
func resourceVersionToken(l *coordinationv1.Lease) (token int64, ok bool) {
	rv, err := strconv.ParseInt(l.ResourceVersion, 10, 64)
	return rv, err == nil && rv > 0
}

// transitionsToken is leaseTransitions + 1: 1 for the first holder of a
// new Lease.
func transitionsToken(l *coordinationv1.Lease) int64 {
	if l.Spec.LeaseTransitions == nil {
		return 1
	}
	return int64(*l.Spec.LeaseTransitions) + 1
}

// Tokens learns a candidate's tokens from the Leases the API server
// answers its typed client with: wrap the client given to
// resourcelock.LeaseLock with Leases, and read Token before each write.
// Every token is 0 while the Lease last seen is held by another (or by
// nobody): there is nothing current to present. It is safe for use by
// several goroutines.
type Tokens struct {
	id          string
	mu          sync.Mutex
	seen        string // the holder of the last Lease seen
	acquired    int64
	held        int64
	transitions int64
}

// NewTokens returns the tokens of the candidate whose identity
// (resourcelock.ResourceLockConfig.Identity) is id.
func NewTokens(id string) *Tokens { return &Tokens{id: id} }

// Token returns the current token of kind k, or 0 when there is none.
func (t *Tokens) Token(k TokenKind) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch k {
	case TokenHeld:
		return t.held
	case TokenTransitions:
		return t.transitions
	}
	return t.acquired
}

// observe notes a Lease the API server answered with; written says whether
// it answered a create or update (only a write can make this candidate the
// holder): what Leases and TokenTransport do with every Lease answer.
func (t *Tokens) observe(l *coordinationv1.Lease, written bool) {
	if l == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	h := ""
	if l.Spec.HolderIdentity != nil {
		h = *l.Spec.HolderIdentity
	}
	if h != t.id {
		// Another holds it: no token of ours is current.
		t.acquired, t.held, t.transitions, t.seen = 0, 0, 0, h
		return
	}
	rv, ok := resourceVersionToken(l)
	if written && t.seen != t.id && ok {
		t.acquired = rv
	}
	if ok && rv > t.held {
		t.held = rv
	}
	t.transitions = max(t.transitions, transitionsToken(l))
	t.seen = h
}

// identity is the holder these tokens are of ("" until learned).
func (t *Tokens) identity() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.id
}

// learn takes id as the holder these tokens are of, where none was given.
func (t *Tokens) learn(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.id == "" {
		t.id = id
	}
}

// Leases wraps a typed client's LeasesGetter: every Lease its Get, Create
// and Update answer with is observed.
func (t *Tokens) Leases(c coordinationv1client.LeasesGetter) coordinationv1client.LeasesGetter {
	return tokenGetter{c, t}
}

type tokenGetter struct {
	coordinationv1client.LeasesGetter
	tok *Tokens
}

func (g tokenGetter) Leases(ns string) coordinationv1client.LeaseInterface {
	return tokenLeases{g.LeasesGetter.Leases(ns), g.tok}
}

type tokenLeases struct {
	coordinationv1client.LeaseInterface
	tok *Tokens
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
