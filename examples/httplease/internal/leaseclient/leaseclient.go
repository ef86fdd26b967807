// Package leaseclient is the lease client examples/httplease adapts, a
// stand-in for a team's own: goroutines, timers, an HTTP API.
//
// The client (Client.Run) acquires a lease over HTTP, renews it every
// TTL/3 on a goroutine of its own, and runs the caller's work while it
// holds it; every write carries the fence the server granted. Its planted
// bug (IgnoreRenewFailure) keeps the work running after a renewal failed.
package leaseclient

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// Client is the lease client: what a team ships.
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

// Request is the body of every call: who asks, for how long, and the
// fence of the lease it renews.
type Request struct {
	Owner string `json:"owner"`
	TTLMs int64  `json:"ttl_ms"`
	Fence int64  `json:"fence,omitempty"`
}

// Answer is the server's reply: granted or not, and the lease's fence.
type Answer struct {
	OK    bool  `json:"ok"`
	Fence int64 `json:"fence"`
}

func (c *Client) call(ctx context.Context, path string, fence int64) (Answer, error) {
	b, _ := json.Marshal(Request{Owner: c.Owner, TTLMs: c.TTL.Milliseconds(), Fence: fence})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://lease.invalid"+path, bytes.NewReader(b))
	if err != nil {
		return Answer{}, err
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return Answer{}, err
	}
	defer resp.Body.Close()
	var a Answer
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
