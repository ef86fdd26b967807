// Package httplease is a third party's lease client — goroutines, timers,
// an HTTP API — and the in-process server it is tested against in virtual
// time with package vclient: the harness's entry point for any client
// whose transport can be pointed at an in-process server.
//
// The client (Client.Run) acquires a lease over HTTP, renews it every
// TTL/3 on a goroutine of its own, and runs the caller's work while it
// holds it; every write carries the fence the server granted, and the
// resource refuses a stale one. Its planted bug (IgnoreRenewFailure) keeps
// the work running after a renewal failed — the article's iron rule
// broken — which the same sweep catches.
package httplease

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/vclient"
)

// Client is the user's lease client: what a team ships.
type Client struct {
	// HTTP reaches the lease server (its Transport is the only thing a
	// test changes).
	HTTP  *http.Client
	Owner string
	TTL   time.Duration
	// IgnoreRenewFailure is the planted bug: a failed renewal does not
	// stop the work.
	IgnoreRenewFailure bool
}

type request struct {
	Owner string `json:"owner"`
	TTLMs int64  `json:"ttl_ms"`
	Fence int64  `json:"fence,omitempty"`
}

type answer struct {
	OK    bool  `json:"ok"`
	Fence int64 `json:"fence"`
}

func (c *Client) call(ctx context.Context, path string, fence int64) (answer, error) {
	b, _ := json.Marshal(request{Owner: c.Owner, TTLMs: c.TTL.Milliseconds(), Fence: fence})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://lease.invalid"+path, bytes.NewReader(b))
	if err != nil {
		return answer{}, err
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	var a answer
	err = json.NewDecoder(resp.Body).Decode(&a)
	return a, err
}

// Run competes for the lease until ctx ends; while it holds one, work
// runs with the fence and a context that ends when the lease is lost.
func (c *Client) Run(ctx context.Context, work func(ctx context.Context, fence int64)) {
	for ctx.Err() == nil {
		actx, cancel := context.WithTimeout(ctx, c.TTL/3)
		a, err := c.call(actx, "/acquire", 0)
		cancel()
		if err != nil || !a.OK {
			sleep(ctx, c.TTL/10)
			continue
		}
		c.hold(ctx, a.Fence, work)
	}
}

// hold renews every TTL/3 (each try bounded by TTL/3, so a renewal that
// is not answered in time counts as failed), and ends the work at the
// first failure — unless the planted bug says otherwise.
func (c *Client) hold(ctx context.Context, fence int64, work func(context.Context, int64)) {
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); work(wctx, fence) }()
	defer func() { stop(); <-done }()
	for sleep(ctx, c.TTL/3) {
		rctx, cancel := context.WithTimeout(ctx, c.TTL/3)
		a, err := c.call(rctx, "/renew", fence)
		cancel()
		if (err != nil || !a.OK) && !c.IgnoreRenewFailure {
			return
		}
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Server is the lease service, in process: the reference semantics of
// docs/specification.md §1 over HTTP (acquire when free or expired, with a new
// fence; renew by the holder before expiry).
type Server struct {
	holder string
	expiry int64
	fence  int64
}

// Serve implements vclient.Server.
func (s *Server) Serve(now int64, _ *vclient.Candidate, req *http.Request, body []byte) (*http.Response, *model.Op, string) {
	var r request
	if err := json.Unmarshal(body, &r); err != nil {
		return vclient.Response(http.StatusBadRequest, []byte(`{}`)), nil, "400: " + err.Error()
	}
	op := &model.Op{Owner: r.Owner, TTL: r.TTLMs}
	var a answer
	switch req.URL.Path {
	case "/acquire":
		op.Kind = model.Acquire
		if s.holder == "" || now >= s.expiry {
			s.fence++
			s.holder, s.expiry = r.Owner, now+r.TTLMs
			a = answer{OK: true, Fence: s.fence}
			op.Fence = s.fence
		} else {
			op.Error = "held"
		}
	case "/renew":
		op.Kind, op.Fence = model.Renew, r.Fence
		if s.holder == r.Owner && r.Fence == s.fence && now < s.expiry {
			s.expiry = now + r.TTLMs
			a = answer{OK: true, Fence: s.fence}
		} else {
			op.Error = "expired"
			if s.holder != r.Owner {
				op.Error = "not-holder"
			}
		}
	default:
		return vclient.Response(http.StatusNotFound, []byte(`{}`)), nil, "404 " + req.URL.Path
	}
	op.OK = a.OK
	b, _ := json.Marshal(a)
	return vclient.Response(http.StatusOK, b), op, ""
}

// Adapter runs the Client as a vclient candidate: its HTTP transport is
// the harness's, its work writes to the harness's resource, and it tells
// the harness when it believes it holds the lease.
type Adapter struct {
	IgnoreRenewFailure bool
}

// Start implements vclient.Client.
func (a *Adapter) Start(ctx context.Context, c *vclient.Candidate) {
	cl := &Client{HTTP: &http.Client{Transport: c.Transport()}, Owner: c.Identity,
		TTL: time.Duration(c.TTL) * time.Millisecond, IgnoreRenewFailure: a.IgnoreRenewFailure}
	cl.Run(ctx, func(wctx context.Context, fence int64) {
		c.Leading("acquired")
		defer c.Stopped("work stopped")
		for _, it := range c.Process.Work {
			if !sleep(wctx, time.Duration(max(it.Work, 1))*time.Millisecond) {
				return
			}
			for range it.Writes {
				if _, err := c.Write(wctx, "", fence); err != nil && !errors.Is(err, context.Canceled) {
					return
				}
			}
		}
		<-wctx.Done()
	})
}

// Options are the harness options for this client: its server, fenced
// storage, sequential fences.
func Options() vclient.Options {
	return vclient.Options{Server: func() vclient.Server { return &Server{} }, Fenced: true, Fences: model.Sequential}
}
