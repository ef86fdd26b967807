// Package httplease is the template for testing your own lease client in
// virtual time with package vclient: a team's HTTP lease client —
// goroutines, timers, an HTTP API; internal/leaseclient, a stand-in for
// your own — adapted as a vclient.Client (Adapter), and the in-process
// server it is tested against (Server, a vclient.Server). It is the
// harness's entry point for any client whose transport can be pointed at
// an in-process server.
//
// The client acquires a lease over HTTP, renews it every TTL/3 on a
// goroutine of its own, and runs the caller's work while it holds it;
// every write carries the fence the server granted, and the resource
// refuses a stale one. Its planted bug (Adapter.IgnoreRenewFailure) keeps
// the work running after a renewal failed — the article's iron rule
// broken — which the same sweep catches.
//
// Its tests (httplease_test.go) import leasecheck's public packages only,
// so a module of yours can copy them: the sweep is vclient/k8slease's
// Sweep, the one door of a sweep, which takes any vclient.Client, not only
// a Kubernetes controller — SweepConfig.Client is the Adapter, Options its
// own server (Options, not leasecheck's API server), Timing the client's
// own (a TTL of 3 s), Kinds the faults mixed (pauses at a write, latency,
// crashes), Want what the sweep must show. The correct client sweeps
// clean; the planted bug is caught, shrunk and saved with a story told in
// lease terms (TTL, renewal, takeover, fence); Regressions replays the
// failure kept in testdata/regressions (run in examples/, a module of its
// own):
//
//	go test ./httplease -run TestInVirtualTime -seeds 10000
//	go test ./httplease -run TestPlantedBugCaught -v -save DIR
//	go test ./httplease -run TestPlantedBugCaught -count=1 -scenario DIR/seed-N.scenario.json
//	go test ./httplease -run TestRegressions
package httplease

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"example.com/leasecheck-examples/httplease/internal/leaseclient"
	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/vclient"
)

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
	var r leaseclient.Request
	if err := json.Unmarshal(body, &r); err != nil {
		return vclient.Response(http.StatusBadRequest, []byte(`{}`)), nil, "400: " + err.Error()
	}
	op := &model.Op{Owner: r.Owner, TTL: r.TTLMs}
	var a leaseclient.Answer
	switch req.URL.Path {
	case "/acquire":
		op.Kind = model.Acquire
		if s.holder == "" || now >= s.expiry {
			s.fence++
			s.holder, s.expiry = r.Owner, now+r.TTLMs
			a = leaseclient.Answer{OK: true, Fence: s.fence}
			op.Fence = s.fence
		} else {
			op.Error = "held"
		}
	case "/renew":
		op.Kind, op.Fence = model.Renew, r.Fence
		if s.holder == r.Owner && r.Fence == s.fence && now < s.expiry {
			s.expiry = now + r.TTLMs
			a = leaseclient.Answer{OK: true, Fence: s.fence}
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

// Adapter runs the lease client as a vclient candidate: its HTTP transport is
// the harness's, its work writes to the harness's resource, and it tells
// the harness when it believes it holds the lease.
type Adapter struct {
	// IgnoreRenewFailure plants the client's bug: a failed renewal does
	// not stop the work.
	IgnoreRenewFailure bool
}

// Start implements vclient.Client.
func (a *Adapter) Start(ctx context.Context, c *vclient.Candidate) {
	cl := &leaseclient.Client{HTTP: &http.Client{Transport: c.Transport()}, Owner: c.Identity,
		TTL: time.Duration(c.TTL) * time.Millisecond, IgnoreRenewFailure: a.IgnoreRenewFailure}
	cl.Run(ctx, func(wctx context.Context, fence int64) {
		c.Leading("acquired")
		defer c.Stopped("work stopped")
		for _, it := range c.Process.Work {
			t := time.NewTimer(time.Duration(max(it.Work, 1)) * time.Millisecond)
			select {
			case <-wctx.Done():
				t.Stop()
				return
			case <-t.C:
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
