package procclient

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/model"
)

// Service is what a client process is opened on.
type Service struct {
	// Backend is the parent's own service, reached over the pipe, when
	// the parent serves one (nil otherwise): the in-process coordinator of
	// a test, which a client in another process can reach no other way.
	Backend backend.Backend
	// Addr is a server's address (through the harness's proxy), when the
	// parent gives one.
	Addr string
	// Arg is what the parent passed for the opener (verify: the keys'
	// prefix).
	Arg string
}

// Opener opens one owner's client in the child process.
type Opener func(ctx context.Context, s Service) (backend.Backend, error)

var (
	regMu    sync.Mutex
	registry = map[string]Opener{}
)

// Register names open. In the parent it only records it; in a child
// started for name it opens the client, serves the parent until told to
// close (or until its stdin ends), and exits: call it from init, TestMain
// or main, before anything that must not run in a child.
func Register(name string, open Opener) {
	regMu.Lock()
	registry[name] = open
	regMu.Unlock()
	if os.Getenv(envName) == name {
		os.Exit(serveChild(open))
	}
}

// registered reports whether name was registered in this process.
func registered(name string) bool {
	regMu.Lock()
	defer regMu.Unlock()
	return registry[name] != nil
}

// child is the child's side of the pipe.
type child struct {
	b   backend.Backend
	out *json.Encoder
	wmu sync.Mutex

	mu      sync.Mutex
	cancels map[uint64]context.CancelFunc
	svc     map[uint64]chan message
	nextSvc uint64
}

func (c *child) send(m message) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.out.Encode(m); err != nil {
		os.Exit(3) // the parent is gone
	}
}

// serveChild is the child's life: the protocol goes out on a copy of
// stdout, and stdout itself goes to stderr, so that nothing the library
// prints can corrupt a message.
func serveChild(open Opener) int {
	fd, err := syscall.Dup(1)
	if err == nil {
		err = syscall.Dup2(2, 1)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "procclient: child: %v\n", err)
		return 2
	}
	c := &child{out: json.NewEncoder(os.NewFile(uintptr(fd), "protocol")), cancels: map[uint64]context.CancelFunc{}, svc: map[uint64]chan message{}}
	in := json.NewDecoder(bufio.NewReader(os.Stdin))
	s := Service{Addr: os.Getenv(envAddr), Arg: os.Getenv(envArg)}
	if os.Getenv(envService) != "" {
		s.Backend = &serviceStub{c: c}
	}
	// The parent's answers to the service requests must be read while the
	// opener runs (it may use the service), so the reader starts first.
	msgs := make(chan message, 64)
	go func() {
		defer close(msgs)
		for {
			var m message
			if err := in.Decode(&m); err != nil {
				return
			}
			if m.Op == opServiceReply {
				c.mu.Lock()
				ch := c.svc[m.ID]
				delete(c.svc, m.ID)
				c.mu.Unlock()
				if ch != nil {
					ch <- m
				}
				continue
			}
			msgs <- m
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	b, err := open(ctx, s)
	cancel()
	if err != nil {
		c.send(message{Op: opReady, Err: err.Error()})
		return 1
	}
	c.b = b
	h, holding := backend.As[backend.Holding](b)
	_, clock := backend.As[backend.Clock](b)
	_, cleaner := backend.As[backend.Cleaner](b)
	if holding {
		h.Observe(func(r backend.Renewal) { c.send(message{Op: opRenewal, Renewal: &r}) })
	}
	c.send(message{Op: opReady, Holding: holding, Clock: clock, Cleaner: cleaner})
	for m := range msgs {
		switch m.Op {
		case opDo:
			go c.do(m, h)
		case opCancel:
			c.mu.Lock()
			if f := c.cancels[m.ID]; f != nil {
				f()
			}
			c.mu.Unlock()
		case opNow:
			go func() {
				r := message{Op: opReply, ID: m.ID}
				if clk, ok := backend.As[backend.Clock](b); ok {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					at, err := clk.ServerNow(ctx)
					cancel()
					r.At, r.Answered = at, err == nil
					if err != nil {
						r.Err = err.Error()
					}
				} else {
					r.Err = "the client has no server clock"
				}
				c.send(r)
			}()
		case opCleanup:
			r := message{Op: opReply, ID: m.ID, Answered: true}
			if cl, ok := backend.As[backend.Cleaner](b); ok {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				if err := cl.Cleanup(ctx); err != nil {
					r.Err = err.Error()
				}
				cancel()
			}
			c.send(r)
		case opClose:
			err := b.Close()
			r := message{Op: opReply, ID: m.ID, Answered: true}
			if err != nil {
				r.Err = err.Error()
			}
			c.send(r)
			return 0
		}
	}
	b.Close() // the parent is gone
	return 0
}

// do runs one request and answers it; a granted acquire of a library that
// holds while it says so is followed by its signal, watched here, so the
// parent hears of the loss without asking a process that may be stopped.
func (c *child) do(m message, h backend.Holding) {
	timeout := m.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	c.mu.Lock()
	c.cancels[m.ID] = cancel
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.cancels, m.ID)
		c.mu.Unlock()
		cancel()
	}()
	resp, err := c.b.Do(ctx, *m.Req)
	r := message{Op: opReply, ID: m.ID, Resp: &resp, Answered: err == nil}
	if err != nil {
		r.Err = err.Error()
	}
	var lost <-chan struct{}
	if err == nil && resp.OK && m.Req.Kind == model.Acquire && h != nil {
		lost = h.Signal(m.Req.Key, m.Req.Owner)
		r.Holding = lost != nil
	}
	c.send(r)
	if lost != nil {
		<-lost
		c.send(message{Op: opLost, Key: m.Req.Key, Owner: m.Req.Owner, Fence: resp.Fence})
	}
}

// serviceStub is the parent's service as the child's opener sees it: each
// request goes up the pipe and waits for its answer or its deadline.
type serviceStub struct{ c *child }

// errNoAnswer is a service request the parent did not answer in time.
var errNoAnswer = errors.New("procclient: no answer from the service")

func (s *serviceStub) Do(ctx context.Context, req backend.Request) (backend.Response, error) {
	c := s.c
	ch := make(chan message, 1)
	c.mu.Lock()
	c.nextSvc++
	id := c.nextSvc
	c.svc[id] = ch
	c.mu.Unlock()
	m := message{Op: opService, ID: id, Req: &req}
	if d, ok := ctx.Deadline(); ok {
		m.Timeout = time.Until(d)
	}
	c.send(m)
	select {
	case r := <-ch:
		if !r.Answered {
			return backend.Response{}, fmt.Errorf("service: %s", r.Err)
		}
		return *r.Resp, nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.svc, id)
		c.mu.Unlock()
		return backend.Response{}, errors.Join(errNoAnswer, ctx.Err())
	}
}

func (s *serviceStub) Close() error { return nil }

var _ io.Closer = (*serviceStub)(nil)
