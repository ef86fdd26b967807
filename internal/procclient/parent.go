package procclient

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/model"
)

// Spec says which client a child runs and on what.
type Spec struct {
	// Name is the client registered in the child (Register).
	Name string
	// Service, when set, is served to the child over its pipe
	// (Service.Backend in the child).
	Service backend.Backend
	// Addr and Arg are handed to the child's opener as they are.
	Addr, Arg string
	// Label names the child in errors and in its stderr lines (an owner).
	Label string
}

// Span is a time the kernel reported the child stopped: from the stop's
// report to the continue's (Open: not continued yet).
type Span struct {
	From, To time.Time
	Open     bool
}

// Sent counts what a child sent.
type Sent struct {
	// Service counts its requests to the parent's service, by kind.
	Service map[model.Kind]int
	// Renewals counts the background renewals its library reported.
	Renewals int
}

// Client is one client process as a backend.Backend. It is a
// backend.Stopper (SIGSTOP and SIGCONT, returning once the kernel has
// reported each), a backend.Clock (the child's own, or the parent's
// service's) and a backend.Cleaner; Holding tells whether the child's
// library holds while it says so, and SignalOf and ObserveRenewals are
// then its.
// Safe for concurrent use.
type Client struct {
	spec    Spec
	cmd     *exec.Cmd
	in      io.WriteCloser
	wmu     sync.Mutex
	enc     *json.Encoder
	holding bool
	clock   bool

	mu        sync.Mutex
	nextID    uint64
	pending   map[uint64]chan message
	observers []func(backend.Renewal)
	signals   map[[2]string]*signal
	stops     []Span
	exited    bool
	stopDepth int
	cut       bool // the service is partitioned from the child
	cutters   []func(on bool)
	sent      Sent
	// changed is closed and replaced whenever the kernel reports a state
	// change (stopped, continued, exited).
	changed    chan struct{}
	readerDone chan struct{}
}

// signal is the parent's copy of the signal of one grant.
type signal struct {
	fence int64
	ch    chan struct{}
}

// errNested: a child does not start children.
var errNested = errors.New("procclient: a client process may not start client processes")

// Start starts a child running spec.Name and waits until it has opened
// its client.
func Start(ctx context.Context, spec Spec) (*Client, error) {
	if os.Getenv(envName) != "" {
		return nil, errNested
	}
	if !registered(spec.Name) {
		return nil, fmt.Errorf("procclient: no client is registered as %q in this program: register it (leasetest.RegisterClient) in init or TestMain, so the re-executed program finds it", spec.Name)
	}
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	var args []string
	if strings.HasSuffix(exe, ".test") {
		// A test binary whose client is not registered before its tests
		// start must not run them in the child.
		args = append(args, "-test.run=^$")
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), envName+"="+spec.Name, envAddr+"="+spec.Addr, envArg+"="+spec.Arg)
	if spec.Service != nil {
		cmd.Env = append(cmd.Env, envService+"=1")
	}
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("procclient: start %s: %w", spec.Name, err)
	}
	c := &Client{spec: spec, cmd: cmd, in: in, enc: json.NewEncoder(in), pending: map[uint64]chan message{},
		signals: map[[2]string]*signal{}, changed: make(chan struct{}), readerDone: make(chan struct{}),
		sent: Sent{Service: map[model.Kind]int{}}}
	ready := make(chan message, 1)
	go c.reap()
	go c.read(bufio.NewReader(out), ready)
	timer := time.NewTimer(30 * time.Second)
	defer timer.Stop()
	select {
	case m := <-ready:
		if m.Err != "" {
			c.Kill()
			return nil, fmt.Errorf("procclient: %s: open: %s", spec.Name, m.Err)
		}
		c.holding, c.clock = m.Holding, m.Clock
		return c, nil
	case <-c.readerDone:
		c.Kill()
		return nil, fmt.Errorf("procclient: the client process %s ended before it served (is Register(%q) reached before the program does anything else?)", spec.Name, spec.Name)
	case <-timer.C:
	case <-ctx.Done():
	}
	c.Kill()
	return nil, fmt.Errorf("procclient: the client process %s did not start serving in time", spec.Name)
}

// reap waits for the kernel's reports on the child: stopped, continued,
// exited. Nothing else waits for it (exec.Cmd.Wait is never called).
func (c *Client) reap() {
	pid := c.cmd.Process.Pid
	for {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(pid, &ws, syscall.WUNTRACED|syscall.WCONTINUED, nil)
		now := time.Now()
		if err == syscall.EINTR {
			continue
		}
		c.mu.Lock()
		switch {
		case err != nil || ws.Exited() || ws.Signaled():
			c.exited = true
			if n := len(c.stops); n > 0 && c.stops[n-1].Open {
				c.stops[n-1].To, c.stops[n-1].Open = now, false
			}
		case ws.Stopped():
			if n := len(c.stops); n == 0 || !c.stops[n-1].Open {
				c.stops = append(c.stops, Span{From: now, Open: true})
			}
		case ws.Continued():
			if n := len(c.stops); n > 0 && c.stops[n-1].Open {
				c.stops[n-1].To, c.stops[n-1].Open = now, false
			}
		}
		close(c.changed)
		c.changed = make(chan struct{})
		done := c.exited
		c.mu.Unlock()
		if done {
			return
		}
	}
}

// read handles the child's messages until its stdout ends.
func (c *Client) read(r io.Reader, ready chan<- message) {
	defer close(c.readerDone)
	dec := json.NewDecoder(r)
	for {
		var m message
		if err := dec.Decode(&m); err != nil {
			c.mu.Lock()
			for id, ch := range c.pending {
				close(ch)
				delete(c.pending, id)
			}
			c.mu.Unlock()
			return
		}
		switch m.Op {
		case opReady:
			ready <- m
		case opReply:
			c.mu.Lock()
			ch := c.pending[m.ID]
			delete(c.pending, m.ID)
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		case opRenewal:
			c.mu.Lock()
			c.sent.Renewals++
			obs := append([]func(backend.Renewal){}, c.observers...)
			c.mu.Unlock()
			for _, fn := range obs {
				fn(*m.Renewal)
			}
		case opLost:
			c.mu.Lock()
			if s := c.signals[[2]string{m.Key, m.Owner}]; s != nil && s.fence == m.Fence {
				select {
				case <-s.ch:
				default:
					close(s.ch)
				}
			}
			c.mu.Unlock()
		case opService:
			c.mu.Lock()
			c.sent.Service[m.Req.Kind]++
			cut := c.cut
			c.mu.Unlock()
			if !cut {
				go c.serve(m)
			}
		}
	}
}

// serve answers one of the child's requests to the parent's service.
func (c *Client) serve(m message) {
	r := message{Op: opServiceReply, ID: m.ID}
	if c.spec.Service == nil {
		r.Err = "no service"
		c.send(r)
		return
	}
	timeout := m.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	resp, err := c.spec.Service.Do(ctx, *m.Req)
	cancel()
	c.mu.Lock()
	cut := c.cut
	c.mu.Unlock()
	if cut {
		return // the reply is lost with the connection
	}
	r.Resp, r.Answered = &resp, err == nil
	if err != nil {
		r.Err = err.Error()
	}
	c.send(r)
}

func (c *Client) send(m message) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.enc.Encode(m)
}

// call sends m as a request and waits for its reply or ctx.
func (c *Client) call(ctx context.Context, m message) (message, error) {
	ch := make(chan message, 1)
	c.mu.Lock()
	c.nextID++
	m.ID = c.nextID
	c.pending[m.ID] = ch
	c.mu.Unlock()
	if d, ok := ctx.Deadline(); ok {
		m.Timeout = time.Until(d)
	}
	if err := c.send(m); err != nil {
		c.forget(m.ID)
		return message{}, fmt.Errorf("procclient: %s: %w", c.spec.Name, err)
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return message{}, fmt.Errorf("procclient: the client process %s ended", c.spec.Name)
		}
		return r, nil
	case <-ctx.Done():
		c.forget(m.ID)
		if m.Op == opDo {
			c.send(message{Op: opCancel, ID: m.ID})
		}
		return message{}, ctx.Err()
	}
}

func (c *Client) forget(id uint64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// Do implements backend.Backend: the child's client does req.
func (c *Client) Do(ctx context.Context, req backend.Request) (backend.Response, error) {
	r, err := c.call(ctx, message{Op: opDo, Req: &req})
	if err != nil {
		return backend.Response{}, err
	}
	if !r.Answered {
		return backend.Response{}, errors.New(r.Err)
	}
	if r.Holding {
		// The library holds this grant while it says so: its signal.
		c.mu.Lock()
		c.signals[[2]string{req.Key, req.Owner}] = &signal{fence: r.Resp.Fence, ch: make(chan struct{})}
		c.mu.Unlock()
	}
	return *r.Resp, nil
}

// Holding reports whether the child's library holds while it says so
// (backend.Holding).
func (c *Client) Holding() bool { return c.holding }

// SignalOf is the child's library's signal for owner's latest grant on
// key. (Client is no backend.Holding by itself: a wrapper is, when
// Holding reports the library holds.)
func (c *Client) SignalOf(key, owner string) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.signals[[2]string{key, owner}]; s != nil {
		return s.ch
	}
	return nil
}

// ObserveRenewals hears every background renewal the child's library
// reports.
func (c *Client) ObserveRenewals(fn func(backend.Renewal)) {
	c.mu.Lock()
	c.observers = append(c.observers, fn)
	c.mu.Unlock()
}

// ServerNow implements backend.Clock: the parent's service's clock when it
// serves one, else the child's.
func (c *Client) ServerNow(ctx context.Context) (time.Time, error) {
	if clk, ok := backend.As[backend.Clock](c.spec.Service); ok {
		return clk.ServerNow(ctx)
	}
	r, err := c.call(ctx, message{Op: opNow})
	if err != nil {
		return time.Time{}, err
	}
	if !r.Answered {
		return time.Time{}, errors.New(r.Err)
	}
	return r.At, nil
}

// Cleanup implements backend.Cleaner: the child's, when it has one.
func (c *Client) Cleanup(ctx context.Context) error {
	r, err := c.call(ctx, message{Op: opCleanup})
	if err != nil {
		return err
	}
	if r.Err != "" {
		return errors.New(r.Err)
	}
	return nil
}

// StopClient implements backend.Stopper: SIGSTOP, returning once the
// kernel reports the process stopped; resume sends SIGCONT and returns
// once it reports it running. Stops nest: the process runs again when the
// last one is resumed.
func (c *Client) StopClient(string) (resume func()) {
	c.mu.Lock()
	c.stopDepth++
	first := c.stopDepth == 1
	c.mu.Unlock()
	if first {
		c.signalAndWait(syscall.SIGSTOP, func() bool { n := len(c.stops); return n > 0 && c.stops[n-1].Open })
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			c.stopDepth--
			last := c.stopDepth == 0
			c.mu.Unlock()
			if last {
				c.signalAndWait(syscall.SIGCONT, func() bool { n := len(c.stops); return n == 0 || !c.stops[n-1].Open })
			}
		})
	}
}

// signalAndWait sends sig and waits (a bounded while) until the kernel's
// report makes done true (under mu) or the process has exited.
func (c *Client) signalAndWait(sig syscall.Signal, done func() bool) {
	_ = c.cmd.Process.Signal(sig)
	deadline := time.NewTimer(5 * time.Second)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		ok, ch := done() || c.exited, c.changed
		c.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			return
		}
	}
}

// stopped reports whether a StopClient is in force.
func (c *Client) stopped() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopDepth > 0
}

// Stops is the kernel's record of the child's stops so far.
func (c *Client) Stops() []Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Span(nil), c.stops...)
}

// Pid is the child's process id.
func (c *Client) Pid() int { return c.cmd.Process.Pid }

// Sent counts what the child has sent so far.
func (c *Client) Sent() Sent {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := Sent{Service: map[model.Kind]int{}, Renewals: c.sent.Renewals}
	for k, n := range c.sent.Service {
		s.Service[k] = n
	}
	return s
}

// Partition cuts (on) or restores the child's connection to the parent's
// service: while cut, its requests get no answer (they time out in the
// child), and answers due to it are lost.
//
// The child's own connections to a server (Spec.Addr) are cut by what
// CutWith registered: the proxy the harness put between them.
func (c *Client) Partition(on bool) {
	c.mu.Lock()
	c.cut = on
	cutters := append([]func(bool){}, c.cutters...)
	c.mu.Unlock()
	for _, fn := range cutters {
		fn(on)
	}
}

// CutWith adds fn to what Partition does: cut (true) or restore (false)
// the child's connections, at a proxy in front of its server.
func (c *Client) CutWith(fn func(on bool)) {
	c.mu.Lock()
	c.cutters = append(c.cutters, fn)
	c.mu.Unlock()
}

// Kill crashes the child (SIGKILL) and returns once the kernel reports it
// dead.
func (c *Client) Kill() {
	c.signalAndWait(syscall.SIGKILL, func() bool { return c.exited })
	c.in.Close()
}

// Close implements backend.Backend: the child closes its client and
// exits; one that does not within a few seconds is killed.
func (c *Client) Close() error {
	c.mu.Lock()
	exited := c.exited
	stopped := c.stopDepth > 0
	c.stopDepth = 0
	c.mu.Unlock()
	if exited {
		return nil
	}
	if stopped {
		c.signalAndWait(syscall.SIGCONT, func() bool { n := len(c.stops); return n == 0 || !c.stops[n-1].Open })
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := c.call(ctx, message{Op: opClose})
	c.in.Close()
	select {
	case <-c.readerDone:
	case <-ctx.Done():
	}
	c.mu.Lock()
	exited = c.exited
	ch := c.changed
	c.mu.Unlock()
	if !exited {
		select {
		case <-ch:
		case <-time.After(2 * time.Second):
		}
	}
	c.Kill()
	return err
}
