package leasetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/contract"
	"github.com/leasecheck/leasecheck/internal/procclient"
	"github.com/leasecheck/leasecheck/internal/realrun"
	"github.com/leasecheck/leasecheck/internal/recording"
	"github.com/leasecheck/leasecheck/model"
)

// env is one property's run: a backend, the recorder of its history, and
// the result being built.
type env struct {
	ctx  context.Context
	opts Options
	info backend.Info
	b    backend.Backend
	rec  *realrun.Recorder
	key  string
	res  *Result
	// fences and fenced: what Info declares (the capabilities the script
	// adapts to).
	fences, fenced bool
	// faults injected by the script, recorded into the history.
	faults []model.FaultRecord
	// holding and stopper: the backend's capabilities for a library that
	// renews by itself (backend.Holding, backend.Stopper); resumes holds
	// each stopped owner's resume.
	holding backend.Holding
	stopper backend.Stopper
	resumes map[string]func()
	// procs is set when every owner's client is a process of its own
	// (Processes): the kernel's record of its stops, its connection to cut.
	procs *procclient.Owners
	// own are the background renewals the library reported, as it made
	// them: a scripted check counts them (surelyExpired).
	ownMu sync.Mutex
	own   []backend.Renewal
	// after, when set, judge the finished history (a property whose
	// verdict needs the server's record, as read back: LossSignal).
	after []func(h *model.History)
}

// heard keeps a background renewal of the library's.
func (e *env) heard(rn backend.Renewal) {
	e.ownMu.Lock()
	e.own = append(e.own, rn)
	e.ownMu.Unlock()
}

// failNow ends a property early (after a failure that makes the rest moot).
type failNow struct{}

func runProperty(ctx context.Context, f Factory, opts Options, name, dir string) *Result {
	res := &Result{Property: name}
	b, stop, err := f()
	if err != nil {
		res.Failures = append(res.Failures, fmt.Sprintf("factory: %v", err))
		return res
	}
	if stop != nil {
		defer stop()
	}
	clk, _ := b.(backend.Clock)
	rec, err := realrun.NewRecorder(ctx, opts.Info, clk)
	if err != nil {
		res.Failures = append(res.Failures, err.Error())
		return res
	}
	e := &env{ctx: ctx, opts: opts, info: opts.Info, b: b, rec: rec, key: opts.Key + "/" + name, res: res,
		fences: opts.Info.Fences != backend.NoFences, fenced: opts.Info.Writes == backend.CheckedWrites, resumes: map[string]func(){}}
	if h, ok := backend.As[backend.Holding](b); ok {
		e.holding = h
		h.Observe(func(rn backend.Renewal) { // its own renewals, into the history
			rec.RecordRenewal(rn)
			e.heard(rn)
		})
	}
	e.stopper, _ = backend.As[backend.Stopper](b)
	e.procs, _ = backend.As[*procclient.Owners](b)
	defer e.resumeAll()
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(failNow); !ok {
					panic(r)
				}
			}
		}()
		properties[name].run(e)
	}()
	if res.Skipped != "" {
		return res
	}
	if res.History == nil { // Linearizable records its own
		h, err := rec.Finish(ctx)
		if err != nil {
			res.Failures = append(res.Failures, err.Error())
			return res
		}
		h.Faults = append(h.Faults, e.faults...)
		recording.Finish(h)
		res.History = h
		for _, judge := range e.after {
			judge(h)
		}
	}
	res.History.Name = opts.Info.Name + " " + name
	judge(ctx, res, opts)
	res.save(dir)
	return res
}

// note records something worth knowing that is not a failure.
func (e *env) note(format string, args ...any) {
	e.res.Notes = append(e.res.Notes, fmt.Sprintf(format, args...))
}

// fail records a failed check.
func (e *env) fail(format string, args ...any) {
	e.res.Failures = append(e.res.Failures, fmt.Sprintf(format, args...))
}

// fatal records a failed check and ends the property.
func (e *env) fatal(format string, args ...any) {
	e.fail(format, args...)
	panic(failNow{})
}

// reply is one request's outcome, with when it ran on the recorder's
// timeline: before and after bracket the recorded call and return.
type reply struct {
	req   backend.Request
	owner string
	backend.Response
	answered bool
	err      error // why there is no answer
	// before and after (microseconds on the recorder's timeline) bracket
	// the call and return the recorder wrote: before <= call, return <= after.
	before, after int64
	// ttl is the TTL the op carries in the history, in microseconds.
	ttl int64
}

// granted reports whether the reply is a definite ok.
func (r reply) granted() bool { return r.answered && r.OK }

// refused reports whether the reply is a definite refusal.
func (r reply) refused() bool { return r.answered && !r.OK }

// call describes the request the way failure lines name it:
// Acquire(A), Renew(B, fence 3), Write(A, fence 2, "a1"), Read().
func (r reply) call() string {
	fence := func() string {
		if r.req.Fence == 0 {
			return "no fence"
		}
		return fmt.Sprintf("fence %d", r.req.Fence)
	}
	switch r.req.Kind {
	case model.Acquire:
		return fmt.Sprintf("Acquire(%s)", r.owner)
	case model.Renew:
		return fmt.Sprintf("Renew(%s, %s)", r.owner, fence())
	case model.Release:
		return fmt.Sprintf("Release(%s, %s)", r.owner, fence())
	case model.Write:
		return fmt.Sprintf("Write(%s, %s, %q)", r.owner, fence(), r.req.Value)
	case model.Read:
		return "Read()"
	}
	return r.req.Kind.String()
}

// got describes the answer: ok, ok with fence 3, refused (held),
// "a1", nothing written, no answer (timeout).
func (r reply) got() string {
	switch {
	case !r.answered:
		if errors.Is(r.err, context.DeadlineExceeded) {
			return "no answer (timeout)"
		}
		return fmt.Sprintf("no answer (error: %v)", r.err)
	case r.req.Kind == model.Read && r.HasValue:
		return fmt.Sprintf("%q", r.Value)
	case r.req.Kind == model.Read:
		return "nothing written"
	case !r.OK && r.Reason != "":
		return "refused (" + r.Reason + ")"
	case !r.OK:
		return "refused"
	case r.Fence != 0:
		return fmt.Sprintf("ok with fence %d", r.Fence)
	}
	return "ok"
}

// capture keeps the error of one Do, which the recorder writes only as
// the op's missing return.
type capture struct {
	backend.Backend
	err error
}

func (c *capture) Do(ctx context.Context, req backend.Request) (backend.Response, error) {
	resp, err := c.Backend.Do(ctx, req)
	c.err = err
	return resp, err
}

func (e *env) do(owner string, req backend.Request) reply {
	if e.stopper != nil && e.holding != nil && owner != "reader" {
		// A scripted client does nothing between its requests; a library
		// that renews by itself would keep renewing, so its whole client
		// is stopped between them, and runs only during its own.
		e.resume(owner)
		defer e.stop(owner)
	}
	req.Key = e.key
	if req.Kind == model.Acquire || req.Kind == model.Renew {
		req.TTL = e.opts.TTL
	}
	req.Owner = owner
	c := &capture{Backend: e.b}
	before := e.rec.Now()
	resp, ok := e.rec.Do(e.ctx, c, owner, owner, req, e.opts.OpTimeout, false)
	after := e.rec.Now()
	r := reply{req: req, owner: owner, Response: resp, answered: ok, err: c.err,
		before: int64(before / time.Microsecond), after: int64((after + time.Microsecond - 1) / time.Microsecond)}
	if req.Kind == model.Acquire || req.Kind == model.Renew {
		ttl := e.rec.GrantTTL(req.TTL)
		if resp.TTL > 0 {
			ttl = resp.TTL
		}
		r.ttl = int64(ttl / time.Microsecond)
	}
	if !ok && r.err == nil {
		r.err = context.DeadlineExceeded
	}
	return r
}

func (e *env) acquire(owner string) reply {
	return e.do(owner, backend.Request{Kind: model.Acquire})
}
func (e *env) renew(owner string, fence int64) reply {
	return e.do(owner, backend.Request{Kind: model.Renew, Fence: fence})
}
func (e *env) release(owner string, fence int64) reply {
	return e.do(owner, backend.Request{Kind: model.Release, Fence: fence})
}
func (e *env) write(owner string, fence int64, v string) reply {
	return e.do(owner, backend.Request{Kind: model.Write, Fence: fence, Value: v})
}
func (e *env) read() reply {
	return e.do("reader", backend.Request{Kind: model.Read})
}

// rule names a contract rule in a failure line, so that a reader can look
// it up in impl/backend's table.
func rule(id string) string {
	if _, ok := contract.RuleByID(id); !ok {
		panic("leasetest: no contract rule " + id)
	}
	return " [" + id + "]"
}

// wantOK checks a definite ok.
func (e *env) wantOK(r reply, id, why string) bool {
	if r.granted() {
		return true
	}
	e.fail("%s = %s, want ok: %s%s", r.call(), r.got(), why, rule(id))
	return false
}

// wantRefused checks a definite refusal. The reason is informative (the
// checker ignores it too): a different one is noted, not failed.
func (e *env) wantRefused(r reply, reason, id, why string) bool {
	if !r.refused() {
		switch {
		case !r.answered && errors.Is(r.err, context.DeadlineExceeded):
			why += fmt.Sprintf("; no answer within OpTimeout (%v)", e.opts.OpTimeout)
		case !r.answered:
			why += "; an error means the outcome is unknown, and this one is known"
		}
		e.fail("%s = %s, want refused (%s): %s%s", r.call(), r.got(), reason, why, rule(id))
		return false
	}
	if r.Reason != reason {
		e.note("%s = %s: the contract's reason is %s (reasons are informative: not a failure)%s", r.call(), r.got(), reason, rule(id))
	}
	return true
}

// wantOKOrUnknown checks an ok or an error, never a refusal.
func (e *env) wantOKOrUnknown(r reply, id, why string) bool {
	if r.refused() {
		e.fail("%s = %s, want ok or an error (outcome unknown), never a refusal: %s%s", r.call(), r.got(), why, rule(id))
		return false
	}
	return true
}

// wantRefusedOrUnknown checks a refusal or an error, never an ok.
func (e *env) wantRefusedOrUnknown(r reply, reason, id, why string) bool {
	if r.granted() {
		e.fail("%s = %s, want refused (%s) or an error (outcome unknown), never ok: %s%s", r.call(), r.got(), reason, why, rule(id))
		return false
	}
	if r.refused() && r.Reason != reason {
		e.note("%s = %s: the contract's reason is %s (reasons are informative: not a failure)%s", r.call(), r.got(), reason, rule(id))
	}
	return true
}

// wantRead checks a read's value; v "" with !has means nothing written.
func (e *env) wantRead(r reply, v string, has bool, why string) bool {
	switch {
	case !r.answered:
		e.fail("%s = %s, want %s: %s%s", r.call(), r.got(), valueString(v, has), why, rule("read"))
	case r.HasValue != has || r.Value != v:
		e.fail("%s = %s, want %s: %s%s", r.call(), r.got(), valueString(v, has), why, rule("read"))
	default:
		return true
	}
	return false
}

func valueString(v string, has bool) string {
	if !has {
		return "nothing written"
	}
	return fmt.Sprintf("%q", v)
}

// fenceOf is the fence a holder presents: its grant's, or none without
// fences.
func (e *env) fenceOf(g reply) int64 {
	if !e.fences {
		return 0
	}
	return g.Fence
}

// wantGrant checks that an acquire was granted with the fence Info
// declares: >= 1 with fences, none without.
func (e *env) wantGrant(r reply, id, why string) bool {
	if !e.wantOK(r, id, why) {
		return false
	}
	switch {
	case e.fences && r.Fence < 1:
		e.fail("%s = %s, want ok with a fence >= 1: Info.Fences is %s%s", r.call(), r.got(), e.info.Fences, rule(id))
		return false
	case !e.fences && r.Fence != 0:
		e.fail("%s = %s, want ok with no fence: Info.Fences is NoFences (declare the fences the backend grants)%s", r.call(), r.got(), rule(id))
		return false
	}
	return true
}

// mustAcquire acquires or ends the property.
func (e *env) mustAcquire(owner, id, why string) reply {
	r := e.acquire(owner)
	if !e.wantGrant(r, id, why) {
		panic(failNow{})
	}
	return r
}

// sleepUntil waits until the recorder's clock reads t (microseconds).
func (e *env) sleepUntil(t int64) {
	d := time.Duration(t)*time.Microsecond - e.rec.Now()
	if d <= 0 {
		return
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-e.ctx.Done():
	case <-timer.C:
	}
}

// pause records a scripted pause of owner from start to end (microseconds
// on the recorder's timeline) as a fault: logged and in the history.
func (e *env) pause(owner string, start, end int64, detail string) {
	e.faults = append(e.faults, model.FaultRecord{Kind: "pause", Target: owner, Start: start, End: end, HasEnd: true, Detail: detail})
	e.note("fault: pause %s from %.3fs to %.3fs: %s", owner, float64(start)/1e6, float64(end)/1e6, detail)
}

// stop stops owner's whole client (backend.Stopper), if it is not already.
func (e *env) stop(owner string) {
	if e.stopper == nil || e.resumes[owner] != nil {
		return
	}
	e.resumes[owner] = e.stopper.StopClient(owner)
}

// resume lets owner's whole client run again.
func (e *env) resume(owner string) {
	if r := e.resumes[owner]; r != nil {
		r()
		delete(e.resumes, owner)
	}
}

func (e *env) resumeAll() {
	for o := range e.resumes {
		e.resume(o)
	}
}
