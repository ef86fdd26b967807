package vclient

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/liveness"
	"github.com/leasecheck/leasecheck/internal/recording"
	"github.com/leasecheck/leasecheck/internal/runrecord"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/internal/sim"
	"github.com/leasecheck/leasecheck/model"
)

// recorder keeps what the run showed: the ops as the stores applied them,
// the trace, the beliefs and pauses, and when each fault struck. Its
// methods run under world.mu.
type recorder struct {
	sc    *scenario.Scenario
	opts  Options
	ops   []model.Op
	seqs  []int // each op's number among its candidate's requests to its store
	trace []sim.TraceEvent
	// grants counts the successful acquires so far on each key: a
	// fence-less run's term numbers.
	grants map[string]int64
	// granted is the fence of each owner's latest grant on each key
	// (fenced runs).
	granted map[[2]string]int64
	// Fault records' facts: when each plan entry struck, on which process.
	struckAt   map[int]int64
	struckProc map[int]string
	struckWhy  map[int]string
	beliefs    []sim.Belief
	stops      []sim.Stop
	// meter follows the lease as the lease server applied it and measures
	// recovery and handoff (internal/liveness, the simulator's definition);
	// its owners are incarnations, so that a new elector under a crashed
	// one's identity is another holder. waiting is the world's
	// someoneWaiting.
	meter   liveness.Meter
	waiting func(except string) bool
	// store is the stores' log, built with the result (storeLog).
	store *model.History
	// The lease server's first error answer, and its first other than the
	// NotFound and Conflict a lease protocol expects (record.FirstError).
	firstErr, firstOdd string
}

func (r *recorder) init(sc *scenario.Scenario, opts Options) {
	r.sc, r.opts = sc, opts
	r.struckAt, r.struckProc, r.struckWhy = map[int]int64{}, map[int]string{}, map[int]string{}
	r.granted, r.grants = map[[2]string]int64{}, map[string]int64{}
}

// key is the history's key of the Lease key names ("": the run's one).
func (r *recorder) key(key string) string {
	if key == "" {
		return r.sc.Key
	}
	return key
}

// beliefKey is the key a belief in the Lease key names records: none for
// the run's one lease, whose beliefs are all the run has.
func (r *recorder) beliefKey(key string) string { return key }

// process is c's process name for the Lease key names: its own name for the
// run's one lease, and "h1@default/shard-a" for one of several, so that
// each (candidate, Lease) pair is a process of its own on its own key.
func (r *recorder) process(c *Candidate, key string) string {
	if key == "" {
		return c.Name
	}
	return runrecord.OnKey(c.Name, key)
}

func (r *recorder) traceLocked(t int64, node, what, detail string) int {
	r.trace = append(r.trace, sim.TraceEvent{T: t, Node: node, What: what, Detail: detail})
	return len(r.trace)
}

func (r *recorder) struck(fault int, t int64, proc, why string) {
	if _, ok := r.struckAt[fault]; ok {
		return
	}
	r.struckAt[fault], r.struckProc[fault], r.struckWhy[fault] = t, proc, why
}

// op records an op a store applied at t, sent by c; it returns its index.
// The op's call is when the candidate sent it (the millisecond it was in),
// its at when the store applied it; its return comes when it is delivered.
func (r *recorder) op(c *call, op *model.Op, t int64) int {
	o := *op
	key := o.Key // the lease server's word for a Lease op ("": the run's one lease)
	if o.Kind == model.Write {
		key = c.key
	}
	o.Process = r.process(c.cand, key)
	if o.Kind == model.Write {
		o.Process += "/work"
	}
	if o.Owner == "" {
		o.Owner = c.cand.Identity
	}
	o.Key = r.key(key)
	o.Call = int64(c.sent / time.Millisecond)
	o.At, o.HasAt = t, true
	r.ops = append(r.ops, o)
	r.seqs = append(r.seqs, c.seq)
	if o.OK && key == "" {
		// Liveness is measured on the run's one lease (a run of several
		// Leases is judged on their safety, key by key).
		r.observe(&o, t)
	}
	if o.Kind == model.Acquire && o.OK {
		r.grants[o.Key]++
		r.granted[[2]string{o.Key, o.Owner}] = o.Fence
		// A fence-less server grants no token: its trace names the holder
		// only, not a "fence=0" the run never had.
		detail := o.Owner
		if r.opts.Fences != model.NoFences {
			detail = fmt.Sprintf("%s fence=%d", o.Owner, o.Fence)
		}
		if key != "" {
			detail += " on " + key
		}
		r.traceLocked(t, "server", "granted", detail)
	}
	return len(r.ops) - 1
}

// beliefFence is the fence a belief of owner's starting now is under, for
// the run properties: in a fenced run, that of the owner's latest grant
// (the token its writes present, which the properties match its refused
// writes and its grant by); in a fence-less one, the number of grants so
// far (a term number: it orders the beliefs, and names no token).
func (r *recorder) beliefFence(key, owner string) int64 {
	if f, ok := r.granted[[2]string{key, owner}]; ok && r.opts.Fences != model.NoFences && f > 0 {
		return f
	}
	return r.grants[key]
}

// answered notes the lease server's answer to c when it is an error.
func (r *recorder) answered(c *call, resp *http.Response, detail string) {
	if resp == nil || resp.StatusCode < 400 || r.firstOdd != "" {
		return
	}
	odd := resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusConflict || strings.HasPrefix(detail, Unserved)
	if r.firstErr != "" && !odd {
		return
	}
	ct := c.req.Header.Get("Content-Type")
	if ct == "" {
		ct = "none"
	}
	what := detail
	if what == "" {
		what = resp.Status
	}
	e := fmt.Sprintf("%s %s (Content-Type %s, from %s): %s", c.req.Method, c.req.URL.Path, ct, c.cand.Name, what)
	if r.firstErr == "" {
		r.firstErr = e
	}
	if odd {
		r.firstOdd = e
	}
}

// firstError is record.FirstError. A NotFound or Conflict is what a lease
// protocol expects (the Lease GET before its create), not why a run
// exercised nothing: where no other answer failed it is told as such.
func (r *recorder) firstError() string {
	if r.firstOdd != "" || r.firstErr == "" {
		return r.firstOdd
	}
	return "none but the answers a lease protocol expects (the first: " + r.firstErr + ")"
}

func (r *recorder) returned(i int, t int64) {
	r.ops[i].Return, r.ops[i].Returned = t, true
}

// result builds the simulator-shaped result the run properties and the
// reports read: the history, the trace, the beliefs, the stops, the
// liveness measurements.
func (r *recorder) result(w *world) *sim.Result {
	end := r.sc.Horizon
	// Beliefs still held at the end run to it.
	for _, n := range w.nodes {
		if n.cur == nil {
			continue
		}
		for _, k := range n.heldKeys() {
			b := n.beliefs[k]
			r.beliefs = append(r.beliefs, sim.Belief{Process: r.process(n.cur, k), Key: r.beliefKey(k), Owner: n.cur.Identity, Fence: b.fence,
				From: b.from, To: max(end, b.from), FromLine: b.line, Open: true})
		}
	}
	slices.SortStableFunc(r.beliefs, func(a, b sim.Belief) int { return cmp64(a.From, b.From) })
	h := &model.History{Name: fmt.Sprintf("seed-%d", r.sc.Seed), Header: model.DefaultHeader()}
	h.Header.Fences, h.Header.Tokens = r.opts.Fences, r.opts.Tokens
	if r.opts.Fenced {
		h.Header.Semantics = model.FencedStorage
	}
	// Each process's ops in the order it issued them: by call, then by
	// process and the order it issued them in (a request held by a pause
	// is sent when it resumes, with those issued after it).
	idx := make([]int, len(r.ops))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		x, y := &r.ops[a], &r.ops[b]
		if c := cmp64(x.Call, y.Call); c != 0 {
			return c
		}
		if x.Process != y.Process {
			return strings.Compare(x.Process, y.Process)
		}
		return r.seqs[a] - r.seqs[b]
	})
	ops := make([]model.Op, len(idx))
	for i, j := range idx {
		ops[i] = r.ops[j]
	}
	h.Ops = ops
	h.Faults = r.faultRecords()
	partial := make([]bool, len(h.Faults)) // one record a fault, in plan order
	for i := range h.Faults {
		partial[i] = h.Faults[i].Partial
	}
	// An acquire the candidate never heard the answer to loses the fence
	// the lease server applied: r.ops keeps it for the stores' log.
	recording.Finish(h)
	res := &sim.Result{Scenario: r.sc, History: h, Trace: r.trace, Plan: r.sc.Faults, Beliefs: r.beliefs, Stops: r.stops,
		AdvisoryBelief: r.opts.AdvisoryBelief, HarnessFences: true}
	r.store = r.storeLog(h, idx)
	res.Stats = sim.Stats{End: end, Ops: len(ops), Faults: map[faults.Kind]int{}, NotApplied: map[faults.Kind]int{}}
	// A fault whose record is partial never reached the client — a pause
	// armed for a write that never came, a skewed clock nobody read, a
	// shutdown with nothing running, 409s for updates never sent — and is
	// counted as drawn and not injected, so that a sweep of such faults
	// alone is an error, not a pass.
	for i, f := range r.sc.Faults {
		if partial[i] {
			res.Stats.NotApplied[f.Kind]++
		} else {
			res.Stats.Faults[f.Kind]++
		}
	}
	lm := r.meter.Measures()
	res.Stats.Recoveries, res.Stats.RecoveryAt = lm.Recoveries, lm.RecoveryAt
	res.Stats.Unrecovered, res.Stats.UnrecoveredSince = lm.Unrecovered, lm.UnrecoveredSince
	res.Stats.Handoffs, res.Stats.HandoffAt = lm.Handoffs, lm.HandoffAt
	return res
}

// storeLog is the stores' own log of the run (campaign.Execution.Store):
// every op the Lease server and the resource applied, in the order they
// applied them, each answered at the instant it was applied (call =
// return = at) with the outcome the store gave, whatever the client heard
// of it. The harness serves one request at a time at whole milliseconds,
// so the order is total and every time exact. Each op keeps its line in
// the clients' view h (idx: h's ops as indices into r.ops), so that a
// violation found here cites the saved history's lines. A write whose
// client gave up on it (its context ended first) or whose answer a
// partition lost is unknown in h and applied here.
func (r *recorder) storeLog(h *model.History, idx []int) *model.History {
	line := make([]int, len(r.ops))
	for i, j := range idx {
		line[j] = h.Ops[i].Line
	}
	s := &model.History{Name: h.Name + " (store)", Header: h.Header, Faults: h.Faults, Ops: make([]model.Op, len(r.ops))}
	for j := range r.ops {
		o := r.ops[j]
		o.Call, o.Return, o.Returned = o.At, o.At, true
		o.Line = line[j]
		s.Ops[j] = o
	}
	return s
}

// faultRecords writes the plan as the history's fault records: when each
// fault struck and ended, on what. A pause that never found a write to
// strike at is kept, marked partial.
func (r *recorder) faultRecords() []model.FaultRecord {
	var out []model.FaultRecord
	for i, f := range r.sc.Faults {
		fr := recording.Fault(f, f.Target, f.At, f.Duration)
		switch f.Kind {
		case faults.Pause:
			t, ok := r.struckAt[i]
			if !ok {
				fr.Partial = true
				fr.Detail = fmt.Sprintf("armed at t=%d; %s wrote nothing after it, so it never struck", f.At, f.Target)
				break
			}
			fr.Target, fr.Start, fr.End, fr.HasEnd = r.struckProc[i], t, t+f.Duration, true
			fr.Detail = r.struckWhy[i]
		case faults.Crash, faults.OwnerReuse:
			if p, ok := r.struckProc[i]; ok {
				fr.Target = p
			}
			fr.Detail = "the candidate's context was cancelled; restarted under a new identity"
			if f.Kind == faults.OwnerReuse {
				fr.Detail = "the candidate's context was cancelled; a new elector restarted under the same identity"
			}
			if f.Duration == 0 {
				fr.Detail = "the candidate's context was cancelled; not restarted"
			}
		case faults.Shutdown:
			p, ok := r.struckProc[i]
			if !ok {
				fr.Partial = true
				fr.Detail = fmt.Sprintf("%s had no running incarnation at t=%d: nothing to shut down", f.Target, f.At)
				break
			}
			fr.Target = p
			fr.Detail = "the candidate's context was cancelled (a graceful shutdown): what it sent on its way out reached the server; not restarted"
			if f.Duration > 0 {
				fr.Detail = "the candidate's context was cancelled (a graceful shutdown): what it sent on its way out reached the server; restarted under the same identity"
			}
		case faults.ClockOffset, faults.ClockDrift:
			clockRecord(&fr, f, r.struckProc[i], r.struckWhy[i])
		case faults.Conflict:
			conflictRecord(&fr, f, r.struckProc[i], r.struckWhy[i])
		case faults.CoordinatorCrash:
			fr.Detail = "the lease server answered 503 to every request"
		case faults.Partition:
			fr.Detail = "each request either lost, or applied with its answer lost"
		case faults.Delay:
			fr.Detail = "every request's round trip longer by amount ms, half each way"
		}
		out = append(out, fr)
	}
	return out
}

// observe feeds an op the lease server applied, ok, at t to the meter. A
// renewal by an incarnation other than the lease's holder is a grant to
// it: a new elector under a crashed one's identity takes the lease over by
// renewing the record that names it.
func (r *recorder) observe(o *model.Op, t int64) {
	ttl := o.TTL
	if ttl <= 0 {
		ttl = r.sc.TTL
	}
	switch o.Kind {
	case model.Acquire:
		r.meter.Granted(t, o.Process, t+ttl)
	case model.Renew:
		if o.Process != r.meter.Owner() {
			r.meter.Granted(t, o.Process, t+ttl)
		} else {
			r.meter.Renewed(t + ttl)
		}
	case model.Release:
		r.meter.Released(t, o.Process, r.waiting)
	}
}

func cmp64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
