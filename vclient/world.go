package vclient

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/faultsupport"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/internal/sim"
	"github.com/leasecheck/leasecheck/model"
)

// A Server is the in-process lease service the candidates' client library
// talks to, over HTTP as it would to the real one. The harness calls Serve
// for one request at a time, at a whole millisecond of virtual time, so it
// needs no locking and sees a total order of requests.
type Server interface {
	// Serve answers req (its body already read) from candidate c at
	// virtual time now (ms). When the request did something to the lease —
	// granted, renewed, released, or was refused for the lease's sake — op
	// says what, in the history's terms (Kind, Owner, TTL, Fence, OK,
	// Error); the harness fills in the process and the times. A request
	// that touched no lease (a read of it, a refused stale write) returns
	// a nil op, and detail says what happened, for the trace.
	Serve(now int64, c *Candidate, req *http.Request, body []byte) (resp *http.Response, op *model.Op, detail string)
}

// Unserved begins the detail a Server gives a request for something it
// does not serve at all (a resource it lacks): the harness then names
// that answer as a run's first failed request, not the NotFound a lease
// protocol expects of a lease that does not exist yet.
const Unserved = "unserved: "

// A Client is the user's client code: Start runs one incarnation of one
// candidate until ctx is done, and returns only once every goroutine it
// started has returned. It reaches the lease server through c.Transport()
// and the resource through c.Write, and tells its beliefs with c.Leading
// and c.Stopped.
type Client interface {
	Start(ctx context.Context, c *Candidate)
}

// A RandUser is a Client that draws random numbers (a retry jitter): Use
// is called at the start of every run with the run's own source, drawn
// from the scenario's seed, and returns a function that undoes it. A
// client whose library draws from a process-wide source (client-go's
// wait.Jitter) points that source here; runs are then one at a time in
// the process (the harness serializes them), which keeps every run replayable.
type RandUser interface {
	Use(r *rand.Rand) (undo func())
}

// Options say what a run judges the client against.
type Options struct {
	// Server returns a fresh lease server for one run.
	Server func() Server
	// Fenced makes the resource a fenced store: it accepts a write iff its
	// fence is at least the highest it has accepted (docs/specification.md §1, fenced
	// storage); the history is then in fenced-storage semantics. Without
	// it, the resource accepts every write, and the history is judged in
	// seed semantics: a write counts only from the owner of a live lease.
	Fenced bool
	// Fences is how the server numbers grants, for the history's header:
	// model.NoFences for a client that grants no token.
	Fences model.FenceOrder
	// Tokens is what the fence a write presents is, for the history's
	// header: model.OrderedTokens for a client whose writes carry tokens
	// of its own making (a Lease's resourceVersion read while holding it,
	// leaseTransitions + 1) rather than the grant's number. Only with
	// Fenced.
	Tokens model.WriteTokens
	// AdvisoryBelief declares the client's belief (Candidate.Leading and
	// Stopped) a hint its library gives, not a promise that it ends before
	// the lease can move (client-go's elector makes none). With Fenced, an
	// exclusive-belief overlap that no accepted stale write came of is then
	// a warning, not a violation (the result's AdvisoryBelief, package runprop).
	AdvisoryBelief bool
	// FenceUnchecked is a planted bug of the fenced resource: it accepts
	// every write, whatever its fence (a store meant to compare tokens
	// that does not). The history stays in fenced-storage semantics, so
	// the checker and exclusive-belief catch what it lets through.
	FenceUnchecked bool
}

// Kinds are the fault kinds the harness injects (package doc; the
// virtual-time column of the drivers' table in docs/design.md); a scenario
// with another is refused, never run as if the fault had struck.
var Kinds = faultsupport.Kinds(faultsupport.VirtualTime)

// runs serializes runs whose client draws from a process-wide source.
var runs sync.Mutex

// world is one run: the candidates, the lease server, the resource, the
// fault plan, and what was recorded, all in one synctest bubble.
type world struct {
	sc     *scenario.Scenario
	opts   Options
	client Client
	srv    Server
	start  time.Time

	mu       sync.Mutex
	arrivals []*call
	arrive   chan struct{}
	events   []*event
	nodes    []*node
	closing  bool
	live     int // Start calls not yet returned
	exited   chan struct{}
	// running are the incarnations whose Start has not returned, and stuck
	// those the shutdown gave up waiting for (leak.go).
	running map[*Candidate]bool
	stuck   []string
	highest map[string]int64 // each fenced resource's highest accepted fence, by Lease key
	sent    int              // requests enqueued: the arrivals' last tie-break
	// outstanding are the requests not answered yet (lost ones included),
	// so that the shutdown can answer every one.
	outstanding map[*call]struct{}
	// aborts are the requests whose client's context ended, waiting for
	// the harness to let the client go on.
	aborts []*call
	// cancels end every incarnation's context, at the latest at shutdown.
	cancels []context.CancelFunc

	rec recorder
}

// node is one scenario holder and its incarnations.
type node struct {
	proc   Process
	cur    *Candidate // the live incarnation, nil when none
	cancel context.CancelFunc
	inc    int
	// stopping is the incarnation shut down (its context cancelled) whose
	// Start has not returned yet: it is still cur, so what it sends on its
	// way out goes through.
	stopping *Candidate
	// The pause in force: until pausedUntil, its crossings wait on resume.
	pausedUntil time.Duration
	resume      chan struct{}
	// Pauses armed and not struck yet (plan indices), in At order.
	armed []int
	// beliefs are the live incarnation's beliefs that it holds a Lease,
	// by the Lease's key ("": the run's one lease), each since when.
	beliefs map[string]*belief
}

// belief is one held: since when, under what fence, from which trace line.
type belief struct {
	from, fence int64
	line        int
}

// heldKeys returns the keys n believes it holds, in order.
func (n *node) heldKeys() []string {
	keys := make([]string, 0, len(n.beliefs))
	for k := range n.beliefs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// event is a step the harness takes at a whole millisecond: serve a
// request, deliver its answer, or a fault's transition.
type event struct {
	at   time.Duration
	kind eventKind
	call *call
	// A transition's node and plan index.
	node  *node
	fault int
	// The answer to deliver.
	rep reply
	// extra is the response leg's share of a delay fault.
	extra int64
}

type eventKind uint8

const (
	evStart eventKind = iota // a candidate's first incarnation starts
	evCrash
	evRestart
	evArm // a pause may strike from now on
	evResume
	evServe
	evDeliver
	evAbort
	// evShutdown is a transition, numbered after the requests' kinds so
	// that theirs (which key the order's draw) stay what they were.
	evShutdown
)

// transition reports whether e is a fact of the scenario (a start, a
// fault's transition), taken before the requests due at the same instant.
func (e *event) transition() bool { return e.kind < evServe || e.kind == evShutdown }

const ms = time.Millisecond

func ceilMs(d time.Duration) time.Duration { return (d + ms - 1) / ms * ms }

func (w *world) now() time.Duration { return time.Since(w.start) }
func (w *world) nowMs() int64       { return int64(w.now() / ms) }

// record is a run as Target judges it: what the run produced, the stores'
// own log of the run, and the first failed request.
type record struct {
	*sim.Result
	// Store is the stores' log: every op the lease server and the resource
	// applied, in the order they applied them, each answered when it was
	// applied, whatever the client heard of it (campaign.Execution.Store).
	Store *model.History
	// FirstError is the first answer of the lease server's that was an
	// error other than the NotFound and Conflict a lease protocol expects
	// (else the first error at all): the request, its content type and the
	// answer; "" when none failed. A sweep that exercised nothing gives it
	// as its cause (a campaign summary's Unexercised).
	FirstError string
}

// run runs scenario sc against client in a synctest bubble and records it:
// the history (with fault records), what the run properties judge (the
// candidates' beliefs, the pauses, the trace), the stores' log and the
// first failed request. t is the test the bubble belongs to
// (testing/synctest needs one: sweeps run as go test).
func run(t *testing.T, sc *scenario.Scenario, client Client, opts Options) (rec *record, err error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	if opts.Server == nil {
		return nil, fmt.Errorf("vclient: Options.Server is nil")
	}
	for i, f := range sc.Faults {
		if err := refuseClock(i, f); err != nil {
			return nil, err
		}
		if faultsupport.Needs(f.Kind, faultsupport.VirtualTime) == faultsupport.Never {
			return nil, fmt.Errorf("vclient: fault %d (%s): %s is not injected in virtual time (these are: %v)", i, f, f.Kind, Kinds)
		}
	}
	if len(sc.Clients) > 0 || sc.ReadEvery > 0 || sc.Space != nil || sc.Schedule != nil {
		return nil, fmt.Errorf("vclient: adversarial clients, a reader and explored spaces are the simulator's, not run in virtual time")
	}
	ru, serial := client.(RandUser)
	if serial {
		runs.Lock()
		defer runs.Unlock()
	}
	var leak error
	defer func() {
		// A bubble whose goroutines outlive its main one ends in synctest's
		// deadlock panic; the leak it found is the run's error instead.
		if r := recover(); r != nil {
			if !isSynctestDeadlock(r) {
				panic(r)
			}
			if leak == nil {
				leak = fmt.Errorf("vclient: seed %d (%s): the run's goroutines were all blocked and it could not end (synctest: %v)", sc.Seed, sc.Implementation, r)
			}
			rec, err = nil, leak
		}
	}()
	synctest.Test(t, func(*testing.T) {
		w := &world{sc: sc, opts: opts, client: client, srv: opts.Server(),
			arrive: make(chan struct{}, 1), exited: make(chan struct{}, 1),
			outstanding: map[*call]struct{}{}, highest: map[string]int64{}, running: map[*Candidate]bool{}}
		w.rec.init(sc, opts)
		w.rec.waiting = w.someoneWaiting
		if serial {
			undo := ru.Use(rand.New(rand.NewPCG(sc.Seed, 0x6a6974746572)))
			defer undo()
		}
		w.start = time.Now()
		w.plan()
		w.loop()
		rec = &record{Result: w.rec.result(w), Store: w.rec.store, FirstError: w.rec.firstError()}
		leak = w.leaks()
	})
	if leak != nil {
		return nil, leak
	}
	if rec == nil {
		return nil, fmt.Errorf("vclient: the run of seed %d did not finish", sc.Seed)
	}
	return rec, nil
}

// plan schedules the candidates' starts and the faults' transitions.
func (w *world) plan() {
	for _, p := range w.sc.Holders {
		n := &node{proc: p, beliefs: map[string]*belief{}}
		w.nodes = append(w.nodes, n)
		w.events = append(w.events, &event{at: time.Duration(p.Start) * ms, kind: evStart, node: n})
	}
	for i, f := range w.sc.Faults {
		n := w.node(f.Target)
		at := time.Duration(f.At) * ms
		switch f.Kind {
		case faults.Crash, faults.OwnerReuse:
			w.events = append(w.events, &event{at: at, kind: evCrash, node: n, fault: i})
			if f.Duration > 0 {
				w.events = append(w.events, &event{at: at + time.Duration(f.Duration)*ms, kind: evRestart, node: n, fault: i})
			}
		case faults.Pause:
			w.events = append(w.events, &event{at: at, kind: evArm, node: n, fault: i})
		case faults.Shutdown:
			w.events = append(w.events, &event{at: at, kind: evShutdown, node: n, fault: i})
			if f.Duration > 0 {
				w.events = append(w.events, &event{at: at + time.Duration(f.Duration)*ms, kind: evRestart, node: n, fault: i})
			}
		}
	}
}

func (w *world) node(name string) *node {
	for _, n := range w.nodes {
		if n.proc.Name == name {
			return n
		}
	}
	return nil
}

// loop is the harness: at each instant, once every goroutine of the bubble
// is blocked, it takes the due steps one at a time — admitting the requests
// sent, serving, delivering, striking faults — in an order drawn from the
// seed, and lets the clients run to their next block after each; when none
// is due it sleeps to the next one (or until a request arrives), and the
// bubble's clock jumps there.
func (w *world) loop() {
	horizon := time.Duration(w.sc.Horizon) * ms
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		synctest.Wait()
		now := w.now()
		w.mu.Lock()
		w.admit(now)
		ev := w.pick(now)
		w.mu.Unlock()
		if ev != nil {
			w.step(ev, now)
			continue
		}
		if now >= horizon {
			break
		}
		next := horizon
		w.mu.Lock()
		for _, e := range w.events {
			next = min(next, e.at)
		}
		w.mu.Unlock()
		timer.Reset(next - now)
		select {
		case <-w.arrive:
		case <-timer.C:
		}
		timer.Stop()
	}
	w.shutdown()
}

// admit turns the requests sent since the last step into serve events,
// drawing each one's network delay (in the order of the candidates' names
// and their own request counts, never the order the goroutines ran in).
//
// A request whose context had already ended when the harness admits it
// never goes out: the client's timer that ended it and the goroutine that
// sent it fired at the same virtual instant, and which of the two ran
// first is the goroutine scheduler's choice (a ticker and a deadline
// RetryPeriod·k = RenewDeadline apart, a work loop's timer and the end of
// the term). The harness resolves every such tie the same way — the
// context first — so the request takes no number, draws nothing and is
// not recorded; its client is let go on (with its context's error) as an
// abort step, like any request it gave up on.
func (w *world) admit(now time.Duration) {
	if len(w.arrivals) > 0 {
		slices.SortFunc(w.arrivals, cmpArrival)
		dropped := map[[2]string]int{}
		kept := w.arrivals[:0]
		for _, c := range w.arrivals {
			if c.ctx.Err() != nil {
				// Its number among the dropped of its candidate and store at
				// this instant orders its abort step.
				k := [2]string{c.cand.Name, fmt.Sprint(c.store)}
				dropped[k]++
				// Its client has abandoned it already, or (paused) does so
				// when it resumes: the abort step answers it.
				c.seq = -dropped[k]
				continue
			}
			c.seq = c.cand.seq[c.store]
			c.cand.seq[c.store]++
			if c.store == storeResource && c.value == "" {
				c.cand.writes++
				c.value = fmt.Sprintf("%s:w%d", c.cand.Name, c.cand.writes)
			}
			kept = append(kept, c)
		}
		w.arrivals = kept
	}
	for _, c := range w.aborts {
		w.events = append(w.events, &event{at: now, kind: evAbort, call: c})
	}
	w.aborts = w.aborts[:0]
	if len(w.arrivals) == 0 {
		return
	}
	// A write strikes its candidate's armed pause (one due by now); a
	// pause aimed at the coordinator, a request to the lease server.
	for _, c := range w.arrivals {
		n := w.node(c.cand.Node)
		if n.cur != c.cand || n.resume != nil || len(n.armed) == 0 {
			continue
		}
		if f := w.sc.Faults[n.armed[0]]; f.At*int64(ms) <= int64(now) && c.store == pauseStore(f) {
			w.strike(n, now, c)
		}
	}
	for _, c := range w.arrivals {
		// A paused process sends nothing until it resumes.
		if until, ok := w.paused(c.cand, c.sent); ok {
			c.sent = until
		} else if until, ok := w.paused(c.cand, now); ok {
			c.sent = until
		}
		d1, d2 := w.delays(c)
		w.events = append(w.events, &event{at: ceilMs(c.sent) + time.Duration(d1)*ms, kind: evServe, call: c, extra: d2})
	}
	w.arrivals = w.arrivals[:0]
}

// cmpArrival orders the requests sent since the last step: by candidate,
// store and what they ask; only two alike from one candidate at one
// instant fall back on the order they were sent in.
//
// Two byte-identical requests of one candidate at one instant (two of its
// goroutines asking the same) are the one tie left to the order they were
// sent in: nothing in them says which goroutine is which.
func cmpArrival(a, b *call) int {
	if a.cand.Name != b.cand.Name {
		return strings.Compare(a.cand.Name, b.cand.Name)
	}
	if a.store != b.store {
		return int(a.store) - int(b.store)
	}
	if c := strings.Compare(a.content(), b.content()); c != 0 {
		return c
	}
	return a.order - b.order
}

// content is everything a request says: method, URL and body, or the
// write's Lease, value and fence (two shards' writes sent at one instant
// are told apart by their Lease, not by the goroutines' order).
func (c *call) content() string {
	if c.store == storeResource {
		return fmt.Sprintf("%s\x00%s\x00%d", c.key, c.value, c.fence)
	}
	return c.req.Method + " " + c.req.URL.String() + "\x00" + string(c.body)
}

// delays draws a request's two legs: the network's delay each way, plus
// half a delay fault's amount each.
func (w *world) delays(c *call) (out, back int64) {
	nw := w.sc.Network
	r := w.draw(c, 1)
	leg := func() int64 { return nw.MinDelay + r.Int64N(nw.MaxDelay-nw.MinDelay+1) }
	out, back = leg(), leg()
	sent := int64(c.sent / ms)
	for _, f := range w.sc.Faults {
		if f.Kind == faults.Delay && f.Target == c.cand.Node && faultsupport.During(f, sent) && f.Amount > 0 {
			// Half each way: a slow API server or network is slow both
			// ways (a skewed split is a different fault: a slow answer
			// followed by a slow request silences the lease for two
			// round trips).
			out, back = out+f.Amount/2, back+f.Amount-f.Amount/2
		}
	}
	return out, back
}

// pick removes and returns one due event, drawn from the seed among those
// due now (sorted first, so that the draw alone decides), or nil.
func (w *world) pick(now time.Duration) *event {
	var due []int
	for i, e := range w.events {
		if e.at <= now {
			due = append(due, i)
		}
	}
	if len(due) == 0 {
		return nil
	}
	// Transitions first, in plan order: a crash or a pause's end is a fact
	// of the scenario, not a race; the requests and answers due at the same
	// instant are ordered by the draw.
	for _, i := range due {
		if e := w.events[i]; e.transition() {
			w.events = slices.Delete(w.events, i, i+1)
			return e
		}
	}
	// The event with the smallest draw goes first: a draw of the event's
	// own (its request, its kind, the instant), so the order depends on
	// neither the goroutines nor how the set of due events came together.
	i := due[0]
	best := w.rank(w.events[i], now)
	for _, j := range due[1:] {
		if r := w.rank(w.events[j], now); r < best || r == best && cmpEvent(w.events[j], w.events[i]) < 0 {
			i, best = j, r
		}
	}
	e := w.events[i]
	w.events = slices.Delete(w.events, i, i+1)
	return e
}

// draw returns a source for one request's choices (purpose: 1 its delays,
// 2 a partition's), seeded from the scenario's seed and the request's
// identity — its candidate, store and number — alone.
func (w *world) draw(c *call, purpose uint64) *rand.Rand {
	return rand.New(rand.NewPCG(w.sc.Seed^0x9e3779b97f4a7c15*purpose, w.key(c)))
}

func (w *world) key(c *call) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d/%d", c.cand.Name, c.store, c.seq)
	return h.Sum64()
}

// rank is an event's draw for its place in the order at instant now.
func (w *world) rank(e *event, now time.Duration) uint64 {
	return rand.New(rand.NewPCG(w.sc.Seed^uint64(now), w.key(e.call)^uint64(e.kind)<<56)).Uint64()
}

func cmpEvent(a, b *event) int {
	if a.kind != b.kind {
		return int(a.kind) - int(b.kind)
	}
	x, y := a.call, b.call
	if x.cand.Name != y.cand.Name {
		if x.cand.Name < y.cand.Name {
			return -1
		}
		return 1
	}
	if x.store != y.store {
		return int(x.store) - int(y.store)
	}
	return x.seq - y.seq
}

// step takes one event.
func (w *world) step(e *event, now time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := e.node
	switch e.kind {
	case evStart:
		w.launch(n, n.proc.Name, n.proc.Name)
	case evCrash:
		w.crash(n, e.fault)
	case evShutdown:
		w.shutDown(n, e.fault)
	case evRestart:
		if n.cur != nil {
			if n.stopping == n.cur {
				// Shut down and still on its way out: the restart waits for
				// it to return (a pod's new container starts once the old
				// one has exited).
				e.at = now + ms
				w.events = append(w.events, e)
			}
			break
		}
		n.inc++
		name := faultsupport.Incarnation(n.proc.Name, n.inc+1)
		id := name
		if faultsupport.KeepsOwner(w.sc.Faults[e.fault].Kind) {
			id = n.proc.Name
		}
		w.rec.traceLocked(w.nowMs(), name, "restarted", "identity "+id)
		w.launch(n, name, id)
	case evArm:
		n.armed = append(n.armed, e.fault)
	case evResume:
		if n.resume != nil && now >= n.pausedUntil {
			close(n.resume)
			n.resume, n.pausedUntil = nil, 0
			if n.cur != nil {
				w.rec.traceLocked(w.nowMs(), n.cur.Name, "resumed", "")
			}
		}
	case evServe:
		w.serve(e, now)
	case evDeliver:
		w.deliver(e, now)
	case evAbort:
		if _, ok := w.outstanding[e.call]; ok {
			delete(w.outstanding, e.call)
			e.call.done <- reply{err: e.call.why}
		}
	}
}

// launch starts an incarnation.
func (w *world) launch(n *node, name, identity string) {
	if n.cur != nil {
		return // still running: a second crash's restart found it up
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancels = append(w.cancels, cancel)
	c := &Candidate{Name: name, Node: n.proc.Name, Identity: identity, Process: n.proc, TTL: w.sc.TTL, w: w}
	n.cur, n.cancel = c, cancel
	w.live++
	w.running[c] = true
	w.rec.traceLocked(w.nowMs(), name, "started", "identity "+identity)
	go func() {
		w.client.Start(ctx, c)
		w.mu.Lock()
		w.live--
		delete(w.running, c)
		if n.stopping == c {
			// A shut-down incarnation is gone once its Start returned.
			n.stopping = nil
			if n.cur == c && !w.closing {
				w.endBeliefs(n, w.nowMs(), "stopped", "its Start returned")
				t := w.nowMs()
				w.rec.traceLocked(t, c.Name, "exited", "after its shutdown")
				n.cur = nil
				w.rec.meter.Finished(t, c.Name, t, w.someoneWaiting)
				w.noteNobodyWaits()
			}
		}
		w.mu.Unlock()
		select {
		case w.exited <- struct{}{}:
		default:
		}
	}()
}

// crash kills n's live incarnation: its context ends, nothing it sends
// from now on arrives, its answers in flight are lost; a request it sent
// before is still on the wire and may be applied.
func (w *world) crash(n *node, fault int) {
	c := n.cur
	if c == nil {
		return
	}
	t := w.nowMs()
	w.endBeliefs(n, t, "crashed", "")
	w.rec.traceLocked(t, c.Name, "crashed", "")
	w.rec.struck(fault, t, c.Name, "")
	n.cur = nil
	w.rec.meter.Crashed(t, c.Name, t, w.someoneWaiting)
	w.noteNobodyWaits()
	if n.stopping == c {
		n.stopping = nil
	}
	n.cancel()
	if n.resume != nil {
		close(n.resume)
		n.resume, n.pausedUntil = nil, 0
	}
}

// someoneWaiting reports whether an incarnation other than except is up
// to take the lease over: every running one not shut down (an elector
// campaigns for as long as it runs).
func (w *world) someoneWaiting(except string) bool {
	for _, n := range w.nodes {
		if c := n.cur; c != nil && n.stopping != c && c.Name != except {
			return true
		}
	}
	return false
}

// noteNobodyWaits drops the pending liveness measurements once nobody is
// left to take the lease over: the next grant would time a restart.
func (w *world) noteNobodyWaits() {
	if !w.someoneWaiting("") {
		w.rec.meter.NobodyWaits()
	}
}

// shutDown shuts n's live incarnation down gracefully: its context ends,
// and unlike a crash it stays the live incarnation until its Start
// returns, so that what it sends on its way out (client-go's release
// under ReleaseOnCancel) reaches the server and is answered. Its belief
// ends when its own code says so.
func (w *world) shutDown(n *node, fault int) {
	c := n.cur
	if c == nil || n.stopping == c {
		return // nothing running to shut down: the fault record says so
	}
	t := w.nowMs()
	w.rec.traceLocked(t, c.Name, "shutting-down", "its context cancelled (a graceful shutdown)")
	w.rec.struck(fault, t, c.Name, "")
	n.stopping = c
	n.cancel()
}

// pauseStore is where a pause strikes: at a write (the resource), or, aimed
// at the coordinator (Peer), at any request to the lease server — in a renew
// loop, between a read of the lease and its update.
func pauseStore(f faults.Fault) store {
	if f.Peer == faults.Coordinator {
		return storeLease
	}
	return storeResource
}

// strike strikes an armed pause of n's at the request c its live
// incarnation just issued: a write, between the check it made and the
// write going out (the article's GC pause), or a request to the lease
// server, before it goes out. It runs in the harness, at admission, so
// that every request the candidate issued at that instant is held alike,
// whatever order its goroutines ran in.
func (w *world) strike(n *node, now time.Duration, at *call) {
	c := n.cur
	i := n.armed[0]
	n.armed = n.armed[1:]
	from := ceilMs(now)
	until := from + time.Duration(w.sc.Faults[i].Duration)*ms
	n.pausedUntil, n.resume = until, make(chan struct{})
	w.events = append(w.events, &event{at: until, kind: evResume, node: n})
	t0, t1 := int64(from/ms), int64(until/ms)
	where := "between its leadership check and its write"
	if at.store == storeLease {
		where = "as it sent " + at.what() + " to the lease server"
	}
	w.rec.traceLocked(t0, c.Name, "paused", fmt.Sprintf("until t=%d, %s", t1, where))
	w.rec.struck(i, t0, c.Name, fmt.Sprintf("%s paused %s", c.Name, where))
	w.rec.stops = append(w.rec.stops, sim.Stop{Node: c.Node, Process: c.Name, Kind: faults.Pause, From: t0, To: t1})
}

// hold blocks the caller while its incarnation is paused (ignoring its
// context: a paused process cannot notice it), and refuses a dead one.
func (w *world) hold(c *Candidate) error {
	for {
		w.mu.Lock()
		n := w.node(c.Node)
		if w.closing || n == nil || n.cur != c {
			w.mu.Unlock()
			return ErrCrashed
		}
		r := n.resume
		w.mu.Unlock()
		if r == nil {
			return nil
		}
		<-r
	}
}

// enqueue puts a request in the arrivals; false when its candidate is dead.
// Its number among its candidate's requests is given at admission.
func (w *world) enqueue(ctx context.Context, c *Candidate, cl *call) bool {
	w.mu.Lock()
	n := w.node(c.Node)
	if w.closing || n == nil || n.cur != c {
		w.mu.Unlock()
		return false
	}
	cl.cand, cl.op, cl.ctx = c, -1, ctx
	cl.sent = w.now()
	w.sent++
	cl.order = w.sent
	cl.done = make(chan reply, 1)
	w.arrivals = append(w.arrivals, cl)
	w.outstanding[cl] = struct{}{}
	w.mu.Unlock()
	select {
	case w.arrive <- struct{}{}:
	default:
	}
	return true
}

// pauseOf returns the channel closed when c's pause ends, nil when c is not
// paused.
func (w *world) pauseOf(c *Candidate) chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.node(c.Node)
	if n == nil || n.cur != c {
		return nil
	}
	return n.resume
}

// abandon asks the harness to let c's client give up waiting (its context
// ended with err).
func (w *world) abandon(c *call, err error) {
	w.mu.Lock()
	c.abandoned = true
	c.why = err
	w.aborts = append(w.aborts, c)
	w.mu.Unlock()
	select {
	case w.arrive <- struct{}{}:
	default:
	}
}

// paused reports until when c's node is paused, when c is its live
// incarnation and it is.
func (w *world) paused(c *Candidate, now time.Duration) (time.Duration, bool) {
	n := w.node(c.Node)
	if n == nil || n.cur != c || n.resume == nil || now >= n.pausedUntil {
		return 0, false
	}
	return n.pausedUntil, true
}

// serve applies one request at the store it is for.
func (w *world) serve(e *event, now time.Duration) {
	c := e.call
	// Not held by a pause: one sent during a pause was admitted as sent
	// when the pause ends; one sent before it is on the wire.
	t := int64(now / ms)
	lost, loseAnswer := w.partitioned(c, t)
	if lost {
		w.rec.traceLocked(t, c.cand.Name, "lost", c.what()+": the partition dropped the request")
		return
	}
	var rep reply
	switch c.store {
	case storeLease:
		if w.down(t) {
			rep.resp = Response(http.StatusServiceUnavailable, unavailable)
			w.rec.traceLocked(t, c.cand.Name, "refused", c.what()+": the lease server is down (503)")
			break
		}
		if w.conflict(c, t, &rep) {
			break
		}
		resp, op, detail := w.srv.Serve(t, c.cand, c.req, c.body)
		rep.resp = resp
		w.rec.answered(c, resp, detail)
		if detail != "" {
			w.rec.traceLocked(t, c.cand.Name, "served", detail)
		}
		if op != nil {
			c.op = w.rec.op(c, op, t)
		}
	case storeResource:
		ok := true
		if w.opts.Fenced {
			ok = c.fence > 0 && c.fence >= w.highest[c.key] || w.opts.FenceUnchecked
			if ok {
				w.highest[c.key] = max(w.highest[c.key], c.fence)
			}
		}
		rep.ok = ok
		op := &model.Op{Kind: model.Write, Owner: c.cand.Identity, Value: c.value, HasValue: true, OK: ok}
		if w.opts.Fences != model.NoFences {
			op.Fence = c.fence // the token it presented, checked or not
		}
		if !ok {
			op.Error = "stale-fence"
		}
		c.op = w.rec.op(c, op, t)
	}
	if loseAnswer {
		w.rec.traceLocked(t, c.cand.Name, "lost", c.what()+": applied, the partition dropped the answer")
		return
	}
	w.events = append(w.events, &event{at: now + time.Duration(e.extra)*ms, kind: evDeliver, call: c, rep: rep})
}

var unavailable = []byte(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server is currently unable to handle the request","reason":"ServiceUnavailable","code":503}`)

// down reports whether the lease server is down at t (coordinator-crash).
func (w *world) down(t int64) bool {
	for _, f := range w.sc.Faults {
		if f.Kind == faults.CoordinatorCrash && faultsupport.During(f, t) {
			return true
		}
	}
	return false
}

// partitioned draws what a partition between c's candidate and its store
// does to it at t: drop the request, or apply it and drop the answer.
func (w *world) partitioned(c *call, t int64) (lost, loseAnswer bool) {
	peer := faults.Coordinator
	if c.store == storeResource {
		peer = faults.Resource
	}
	for _, f := range w.sc.Faults {
		if f.Kind == faults.Partition && f.Target == c.cand.Node && f.Peer == peer && faultsupport.During(f, t) {
			if w.draw(c, 2).IntN(2) == 0 {
				return true, false
			}
			return false, true
		}
	}
	return false, false
}

// deliver hands an answer to the candidate that asked, unless it gave up
// waiting or died; a paused one gets it when it resumes.
func (w *world) deliver(e *event, now time.Duration) {
	c := e.call
	if until, ok := w.paused(c.cand, now); ok {
		e.at = until
		w.events = append(w.events, e)
		return
	}
	n := w.node(c.cand.Node)
	if c.abandoned || n == nil || n.cur != c.cand {
		return // nobody reads it: its op stays without a return
	}
	if _, ok := w.outstanding[c]; !ok {
		return
	}
	if c.op >= 0 {
		w.rec.returned(c.op, int64(now/ms))
	}
	delete(w.outstanding, c)
	c.done <- e.rep
}

// shutdown ends the run at the horizon: every incarnation's context ends,
// every request in flight and every new one is refused, and the harness
// waits (in the bubble: no time passes) until every Start has returned —
// for a run's length at most (leakGrace): a Start still running then has
// outlived its context, and the run ends in an error naming it (leak.go).
func (w *world) shutdown() {
	grace := time.NewTimer(w.leakGrace())
	defer grace.Stop()
	w.mu.Lock()
	w.closing = true
	for _, cancel := range w.cancels {
		cancel()
	}
	for _, n := range w.nodes {
		if n.resume != nil {
			close(n.resume)
			n.resume = nil
		}
	}
	w.mu.Unlock()
	for {
		w.mu.Lock()
		w.events = w.events[:0]
		w.arrivals = w.arrivals[:0]
		for c := range w.outstanding {
			delete(w.outstanding, c)
			c.done <- reply{err: ErrCrashed}
		}
		live := w.live
		w.mu.Unlock()
		if live == 0 {
			return
		}
		select {
		case <-w.exited:
		case <-w.arrive:
		case <-grace.C:
			w.mu.Lock()
			for c := range w.running {
				w.stuck = append(w.stuck, c.Name)
			}
			w.mu.Unlock()
			slices.Sort(w.stuck)
			return
		}
	}
}

// believe records a change of the candidate's belief that it leads. At
// the horizon nothing more is recorded: the shutdown ends every context at
// once, and the callbacks that follow would come in the goroutines' order;
// a belief held then runs to the end (recorder.result).
func (w *world) believe(c *Candidate, key string, leads bool, how string) {
	if err := w.hold(c); err != nil {
		return // a dead incarnation's callback says nothing anyone sees
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.node(c.Node)
	if w.closing || n == nil || n.cur != c {
		return
	}
	now := w.now()
	if leads {
		if n.beliefs[key] != nil {
			return
		}
		t := int64(now / ms)
		b := &belief{from: t, fence: w.rec.beliefFence(w.rec.key(key), c.Identity)}
		detail := "via " + how // a fence-less run has no fences to name
		if w.opts.Fences != model.NoFences {
			detail = fmt.Sprintf("fence=%d via %s", b.fence, how)
		}
		b.line = w.rec.traceLocked(t, w.rec.process(c, key), "believes", detail)
		n.beliefs[key] = b
		return
	}
	w.endBelief(n, key, int64(ceilMs(now)/ms), "gave-up", how)
}

// endBeliefs ends every belief of n's at t, in the order of their keys.
func (w *world) endBeliefs(n *node, t int64, what, how string) {
	for _, k := range n.heldKeys() {
		w.endBelief(n, k, t, what, how)
	}
}

// endBelief ends n's belief in the Lease key at t, recording it (what: the
// trace's word).
func (w *world) endBelief(n *node, key string, t int64, what, how string) {
	b := n.beliefs[key]
	if b == nil || n.cur == nil {
		return
	}
	proc := w.rec.process(n.cur, key)
	line := 0
	if what != "crashed" {
		line = w.rec.traceLocked(t, proc, what, how)
	} else {
		line = len(w.rec.trace) + 1
	}
	w.rec.beliefs = append(w.rec.beliefs, sim.Belief{Process: proc, Key: w.rec.beliefKey(key), Owner: n.cur.Identity, Fence: b.fence,
		From: b.from, To: max(t, b.from), FromLine: b.line, ToLine: line})
	delete(n.beliefs, key)
}

func (w *world) trace(node, what, detail string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.rec.traceLocked(w.nowMs(), node, what, detail)
}

func (c *call) what() string {
	if c.store == storeResource {
		return "write " + c.value
	}
	return c.req.Method + " " + c.req.URL.Path
}
