package procclient

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/leasecheck/leasecheck/impl/backend"
)

// Owners is a backend.Backend that gives every owner a client of its own —
// a process, when open starts one — and routes each request to its
// owner's: stopping one owner stops nothing of another's. It is a
// backend.Stopper (the owner's client's), a backend.Clock and a
// backend.Cleaner; NewOwners returns one that is also a backend.Holding
// when the clients' library holds while it says so.
type Owners struct {
	open func(ctx context.Context, owner string) (*Client, error)

	mu      sync.Mutex
	clients map[string]*Client
	// spare is the next owner's client, started ahead (the first one to
	// learn what the clients offer).
	spare     *Client
	refilling bool
	obs       []func(backend.Renewal)
	closed    bool
}

// holdingOwners is Owners for a library that holds while it says so.
type holdingOwners struct{ *Owners }

// NewOwners opens a first client (to learn what the clients offer, and to
// serve the first owner) and returns the router.
func NewOwners(ctx context.Context, open func(ctx context.Context, owner string) (*Client, error)) (backend.Backend, error) {
	first, err := open(ctx, "")
	if err != nil {
		return nil, err
	}
	o := &Owners{open: open, clients: map[string]*Client{}, spare: first}
	if first.Holding() {
		return holdingOwners{o}, nil
	}
	return o, nil
}

// Unwrap lets backend.As find the router behind holdingOwners.
func (h holdingOwners) Unwrap() backend.Backend { return h.Owners }

// Signal implements backend.Holding: owner's client's signal.
func (h holdingOwners) Signal(key, owner string) <-chan struct{} {
	c, err := h.client(context.Background(), owner)
	if err != nil {
		return nil
	}
	return c.SignalOf(key, owner)
}

// Observe implements backend.Holding: every client's renewals, the
// clients opened later included.
func (h holdingOwners) Observe(fn func(backend.Renewal)) {
	h.mu.Lock()
	h.obs = append(h.obs, fn)
	cs := h.all()
	h.mu.Unlock()
	for _, c := range cs {
		c.ObserveRenewals(fn)
	}
}

// all lists every client (under mu).
func (o *Owners) all() []*Client {
	var cs []*Client
	if o.spare != nil {
		cs = append(cs, o.spare)
	}
	for _, c := range o.clients {
		cs = append(cs, c)
	}
	return cs
}

// Client is owner's client, opened on first use.
func (o *Owners) Client(owner string) (*Client, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	c := o.clients[owner]
	return c, c != nil
}

func (o *Owners) client(ctx context.Context, owner string) (*Client, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil, errors.New("procclient: closed")
	}
	if c := o.clients[owner]; c != nil {
		return c, nil
	}
	c := o.spare
	o.spare = nil
	if c == nil {
		// Starting a process takes longer than many a request may: it is
		// not charged to the request's deadline.
		var err error
		if c, err = o.open(context.WithoutCancel(ctx), owner); err != nil {
			return nil, err
		}
		for _, fn := range o.obs { // the spare heard them when they came
			c.ObserveRenewals(fn)
		}
	}
	o.clients[owner] = c
	if !o.refilling {
		o.refilling = true
		go o.refill()
	}
	return c, nil
}

// refill starts the next owner's process ahead of its first request.
func (o *Owners) refill() {
	c, err := o.open(context.Background(), "")
	o.mu.Lock()
	defer o.mu.Unlock()
	o.refilling = false
	if err != nil {
		return // the next owner starts its own, and says why it cannot
	}
	if o.closed || o.spare != nil {
		go c.Close()
		return
	}
	for _, fn := range o.obs {
		c.ObserveRenewals(fn)
	}
	o.spare = c
}

// Do implements backend.Backend.
func (o *Owners) Do(ctx context.Context, req backend.Request) (backend.Response, error) {
	c, err := o.client(ctx, req.Owner)
	if err != nil {
		return backend.Response{}, err
	}
	return c.Do(ctx, req)
}

// StopClient implements backend.Stopper: owner's process is stopped.
func (o *Owners) StopClient(owner string) func() {
	c, err := o.client(context.Background(), owner)
	if err != nil {
		return func() {}
	}
	return c.StopClient(owner)
}

// Stops is the kernel's record of owner's process's stops.
func (o *Owners) Stops(owner string) []Span {
	if c, ok := o.Client(owner); ok {
		return c.Stops()
	}
	return nil
}

// Partition cuts or restores owner's connection to the parent's service.
func (o *Owners) Partition(owner string, on bool) {
	if c, err := o.client(context.Background(), owner); err == nil {
		c.Partition(on)
	}
}

// ServerNow implements backend.Clock, through a client that is not
// stopped (a stopped one would answer when it resumes).
func (o *Owners) ServerNow(ctx context.Context) (time.Time, error) {
	o.mu.Lock()
	cs := o.all()
	o.mu.Unlock()
	for _, c := range cs {
		if !c.stopped() {
			return c.ServerNow(ctx)
		}
	}
	return time.Time{}, errors.New("procclient: no running client to read the server's clock")
}

// Cleanup implements backend.Cleaner, through any one running client.
func (o *Owners) Cleanup(ctx context.Context) error {
	o.mu.Lock()
	cs := o.all()
	o.mu.Unlock()
	for _, c := range cs {
		if !c.stopped() {
			return c.Cleanup(ctx)
		}
	}
	return nil
}

// Close closes every client, in parallel.
func (o *Owners) Close() error {
	o.mu.Lock()
	o.closed = true
	cs := o.all()
	o.spare, o.clients = nil, map[string]*Client{}
	o.mu.Unlock()
	errs := make([]error, len(cs))
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = c.Close() }()
	}
	wg.Wait()
	return errors.Join(errs...)
}
