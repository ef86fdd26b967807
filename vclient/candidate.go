package vclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net/http"
	"time"
)

// Candidate is one incarnation of one candidate: what the harness hands to
// Client.Start. Everything the candidate does that another party can see
// goes through it — its requests to the lease server (Transport), its
// writes to the resource (Write), what it believes (Leading, Stopped) — so
// that the harness can serve them one at a time, hold them while the
// candidate is paused, and record them.
type Candidate struct {
	// Name is the incarnation's process name in the history ("h1", and
	// "h1#2" after a restart); Node the scenario holder it runs ("h1").
	Name, Node string
	// Identity is the owner it presents to the lease server: Node for the
	// first incarnation and after an owner-reuse restart, Name after a
	// crash restart.
	Identity string
	// Process is the scenario holder: its start, work program and the
	// timing parameters (Timeout, RenewEvery, RetryMax) a client maps onto
	// its own.
	Process Process
	// TTL is the scenario's lease duration in milliseconds.
	TTL int64

	w      *world
	seq    [2]int // requests admitted, per store
	writes int    // writes admitted that the harness named
	rnd    *rand.Rand
}

// Rand is the incarnation's own seeded source, drawn from the run's seed
// and the incarnation's name: what a client draws the random part of its
// identity from (a UUID: k8slease.SeedUUIDs), so that a replay draws the
// same and no two incarnations of a run draw alike. Each call goes on
// from where the last left off; it is for one goroutine at a time.
func (c *Candidate) Rand() *rand.Rand {
	if c.rnd == nil {
		h := fnv.New64a()
		h.Write([]byte(c.Name))
		c.rnd = rand.New(rand.NewPCG(c.w.sc.Seed, h.Sum64()))
	}
	return c.rnd
}

// Errors a candidate's calls return.
var (
	// ErrCrashed: the incarnation was crashed; nothing it sends arrives.
	ErrCrashed = errors.New("vclient: the candidate crashed")
	// ErrUnavailable: the lease server was down (a coordinator-crash
	// fault); the request was refused before it reached the store.
	ErrUnavailable = errors.New("vclient: the lease server is unavailable")
)

// Transport returns the http.RoundTripper through which the candidate's own
// client library reaches the in-process lease server: point the library's
// transport at it (a rest.Config's Transport, an http.Client's). A request
// is served once the bubble is idle, after the network's delay, in an order
// drawn from the seed; it honours the request's context (a timed-out
// request may still have been applied, as on a real network).
func (c *Candidate) Transport() http.RoundTripper { return transport{c} }

type transport struct{ c *Candidate }

func (t transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	r, err := t.c.cross(req.Context(), &call{store: storeLease, req: req, body: body})
	if err != nil {
		return nil, err
	}
	r.resp.Request = req
	return r.resp, nil
}

// Write asks the resource to store value on the candidate's behalf: the
// leader's side effect, through the user's own code path. An empty value
// is named by the harness when the write goes out, unique in the run
// ("h1#2:w7": the incarnation's writes in the order they went out, so
// that a write the harness never sent takes no number). fence is the
// token it presents (0: none — the resource then accepts every write, as
// a store that knows nothing of leases does). It reports whether the
// resource accepted the write; an error means no answer (the candidate
// crashed, or ctx ended first: the write may still have been applied,
// unless ctx had ended before it went out).
func (c *Candidate) Write(ctx context.Context, value string, fence int64) (bool, error) {
	r, err := c.cross(ctx, &call{store: storeResource, value: value, fence: fence})
	if err != nil {
		return false, err
	}
	return r.ok, nil
}

// Leading records that the candidate believes it leads from now on (its
// client said so: a callback, an IsLeader that turned true). how names the
// signal for the trace ("OnStartedLeading").
func (c *Candidate) Leading(how string) { c.w.believe(c, "", true, how) }

// Stopped records that the candidate no longer believes it leads.
func (c *Candidate) Stopped(how string) { c.w.believe(c, "", false, how) }

// Lease is the candidate's part in one of several Leases it may hold at
// once (shards, one per controller; the lease server judges each apart,
// as k8slease.SweepConfig.Leases names them): the writes it makes under
// that Lease and what it believes of it. Each is judged on the Lease's
// own key, as a process of its own ("h1@default/shard-a", its writes
// "h1@default/shard-a/work"), so that two shards writing at once are two
// writers of two resources, not one process overlapping itself.
type Lease struct {
	c   *Candidate
	key string
}

// Lease returns the candidate's part in the Lease name ("namespace/name",
// as the lease server keys it).
func (c *Candidate) Lease(name string) *Lease { return &Lease{c: c, key: name} }

// Write is Candidate.Write under the Lease: to the Lease's own resource,
// its fence checked against that resource's highest.
func (l *Lease) Write(ctx context.Context, value string, fence int64) (bool, error) {
	r, err := l.c.cross(ctx, &call{store: storeResource, key: l.key, value: value, fence: fence})
	if err != nil {
		return false, err
	}
	return r.ok, nil
}

// Leading records that the candidate believes it holds the Lease from now on.
func (l *Lease) Leading(how string) { l.c.w.believe(l.c, l.key, true, how) }

// Stopped records that the candidate no longer believes it holds the Lease.
func (l *Lease) Stopped(how string) { l.c.w.believe(l.c, l.key, false, how) }

// Trace adds a line to the run's trace, at the current virtual time.
func (c *Candidate) Trace(what, detail string) { c.w.trace(c.Name, what, detail) }

// Now is the virtual time since the run began, in milliseconds.
func (c *Candidate) Now() int64 { return c.w.nowMs() }

// cross takes a request through the harness: queued (the harness holds it
// while the candidate is paused), refused when the candidate is dead, and
// answered when the harness delivers the reply. While the candidate is
// paused it cannot notice its context ending either; it does when it
// resumes.
func (c *Candidate) cross(ctx context.Context, cl *call) (reply, error) {
	w := c.w
	if !w.enqueue(ctx, c, cl) {
		return reply{}, ErrCrashed
	}
	for {
		select {
		case r := <-cl.done:
			if r.err != nil {
				return reply{}, r.err
			}
			return r, nil
		case <-ctx.Done():
			if r := w.pauseOf(c); r != nil {
				<-r
				continue
			}
			// Giving up is a step of the harness's too: the client goes on
			// (draws its jitter, retries) only when the harness says so, one
			// candidate at a time — timeouts that end at the same instant
			// would otherwise race. An answer delivered first still counts.
			w.abandon(cl, ctx.Err())
			r := <-cl.done
			if r.err != nil {
				return reply{}, r.err
			}
			return r, nil
		}
	}
}

// store names where a request goes.
type store uint8

const (
	storeLease store = iota
	storeResource
)

// call is one request in flight.
type call struct {
	cand  *Candidate
	ctx   context.Context
	store store
	seq   int // its number among its candidate's requests to store (at admission)
	order int // when it was enqueued, among all
	sent  time.Duration
	// The lease server's request.
	req  *http.Request
	body []byte
	// The resource's: key is the Lease it writes under ("": the run's one).
	key   string
	value string
	fence int64

	done      chan reply
	abandoned bool
	why       error // why it was abandoned
	op        int   // index of its op in the history, -1 when it has none
}

type reply struct {
	resp *http.Response
	ok   bool
	err  error
}

// Response builds an HTTP response for a Server: status, a JSON body.
func Response(status int, body []byte) *http.Response {
	return &http.Response{
		StatusCode: status, Status: fmt.Sprintf("%d %s", status, http.StatusText(status)),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": []string{"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
	}
}
