package realrun

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/faultsupport"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/internal/procclient"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/internal/timefmt"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

// proc is one client process of the run — a holder (one incarnation after
// another) or the reader — and the driver of its machine, as the simulator
// drives it (internal/sim/world.go): Tick when the machine's clock reaches the
// WakeAt it asked for, Receive for each reply, Ready after each step. Its
// clock is faultsupport.Clock over the run's true time in µs, so
// drift, freezes and steps change what the machine reads exactly as they
// do in simulation. One request is in flight at a time; each backend call
// runs in a goroutine of its own so the machine is ticked while it waits.
//
// Only its own goroutine touches a proc (step, apply, the fields below);
// the rest of the run sees it through the runner's locked tables.
type proc struct {
	r       *runner
	node    string // the scenario's name: h1, r1
	process string // the history's process: h1, then h1#2, ... after restarts
	owner   string
	reader  bool
	inc     int
	prog    scenario.Process
	start   int64 // true µs of the first tick

	m     machine.Holder
	clock faultsupport.Clock
	cl    *client

	started   bool
	wakeLocal int64 // the machine's WakeAt (its own clock)
	done      bool  // the machine's program ended
	believes  bool
	fence     int64
	belief    int // index of the open belief in runner.beliefs, -1 none

	queue []machine.Request // the last step's sends, not yet out
	held  []machine.Request // sends a pause holds back
	inbox []result          // replies that arrived while stopped

	armed       faultsupport.ArmedPause // pauses dealt, in µs, not struck yet
	pauseUntil  int64                   // stopped by a pause until then (true µs); 0 none
	freezeUntil int64                   // stopped, clock too, until then; 0 none
	pauseRec    int
	freezeRec   int
	dropUntil   int64 // renewals lost until then
	crashed     bool
	restartAt   int64 // crashed, restarting then; 0 none
	restartKind faults.Kind
	lifts       []lift // network faults to end

	// resumeClient resumes the whole client a pause or crash stopped
	// (backend.Stopper); nil when none is stopped.
	resumeClient func()

	out     *inflight
	results chan result
}

type client struct {
	b     backend.Backend
	proxy proxyGroup // nil without Target.Addr; one per address of a cluster
	net   netFaults  // the network faults in force on proxy
}

// inflight is the backend call in progress.
type inflight struct {
	id     uint64
	cancel context.CancelFunc
	done   chan struct{}
}

// result is a backend call's outcome: ok false when no answer came (an
// unknown outcome: the machine times the request out itself).
type result struct {
	rep machine.Reply
	ok  bool
}

// lift ends a network fault at at.
type lift struct {
	at  int64
	rec int
	fn  func()
	cut bool // a partition: the connection stays cut until it lifts
}

func (p *proc) connect(ctx context.Context) error {
	c := &client{}
	addr := p.r.t.Addr
	if addr != "" {
		px, err := newProxyGroup(addr)
		if err != nil {
			return err
		}
		c.proxy, addr = px, px.Addr()
	}
	octx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	b, err := p.r.t.Open(octx, addr)
	if err != nil {
		if c.proxy != nil {
			c.proxy.Close()
		}
		return fmt.Errorf("%s: connect: %w", p.r.t.Info.Name, err)
	}
	c.b = b
	p.cl = c
	p.r.hearRenewals(b)
	return nil
}

// reconnect gives a restarted incarnation a client of its own: a new
// process has a new connection (through the same proxy).
func (p *proc) reconnect(ctx context.Context) error {
	addr := p.r.t.Addr
	if p.cl.proxy != nil {
		addr = p.cl.proxy.Addr()
	}
	p.cl.b.Close()
	p.resumeWhole()
	octx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	b, err := p.r.t.Open(octx, addr)
	if err != nil {
		return err
	}
	p.cl.b = b
	p.r.hearRenewals(b)
	return nil
}

func (p *proc) disconnect() {
	if p.cl == nil {
		return
	}
	if p.cl.b != nil {
		p.cl.b.Close()
	}
	if p.cl.proxy != nil {
		p.cl.proxy.Close()
	}
}

// begin makes the first incarnation's machine.
func (p *proc) begin() {
	if p.reader {
		sc := p.r.sc
		p.m = &holder.Reader{Key: sc.Key, Owner: p.owner, Every: max(p.r.us(sc.ReadEvery), 1), Timeout: max(p.r.ttl/3, 1)}
		return
	}
	p.m = p.r.opt.NewHolder(p.r.holderConfig(p.prog, p.process, p.owner))
}

// run is the process's goroutine: it waits for the next thing due — a
// reply, the machine's wake-up, a fault, the end of a pause — and handles
// it, until the program ends, the process dies for good or the horizon.
func (p *proc) run(ctx context.Context) {
	p.begin()
	defer p.cancelOut()
	defer func() { p.endHolds(p.r.now(), "its program ended") }()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := p.r.now()
		p.advance(ctx, now)
		p.flush(ctx, now)
		if p.finished() || now >= p.r.end {
			return
		}
		next := min(p.next(now), p.r.end)
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(time.Duration(next-now) * time.Microsecond)
		var stop <-chan struct{}
		if p.reader {
			stop = p.r.holdersDone
		}
		select {
		case <-ctx.Done():
			return
		case <-stop:
			return
		case res := <-p.results:
			now := p.r.now()
			if p.out != nil && p.out.id == res.rep.ID {
				p.out = nil
			}
			p.deliver(now, res)
			p.flush(ctx, now)
		case <-timer.C:
		}
	}
}

// finished reports that nothing more will happen in this process.
func (p *proc) finished() bool {
	return p.done && p.out == nil && !p.stopped() || p.crashed && p.restartAt == 0
}

func (p *proc) stopped() bool { return p.pauseUntil > 0 || p.freezeUntil > 0 }

// next is the true time of the next thing due, after now.
func (p *proc) next(now int64) int64 {
	n := int64(1<<62 - 1)
	at := func(t int64) {
		if t > now && t < n {
			n = t
		}
	}
	if !p.started {
		at(p.start)
	}
	if p.pauseUntil > 0 {
		at(p.pauseUntil)
	}
	if p.freezeUntil > 0 {
		at(p.freezeUntil)
	}
	if p.restartAt > 0 {
		at(p.restartAt)
	}
	for _, l := range p.lifts {
		at(l.at)
	}
	if !p.reader {
		if t := p.r.board.next(p.node, now); t >= 0 {
			at(t)
		}
	}
	if p.started && !p.crashed && !p.stopped() && p.wakeLocal != machine.Never {
		if t := p.clock.When(p.wakeLocal, now); t >= 0 {
			at(max(t, now+1))
		}
	}
	return n
}

// advance does everything due at now: the first tick, the end of a stop
// (held sends leave, buffered replies are handled), a restart, the end of
// network faults, due faults, and the machine's wake-up.
func (p *proc) advance(ctx context.Context, now int64) {
	for i := 0; i < len(p.lifts); {
		if l := p.lifts[i]; l.at <= now {
			l.fn()
			p.r.ended(l.rec, now)
			p.lifts = append(p.lifts[:i], p.lifts[i+1:]...)
			continue
		}
		i++
	}
	if p.crashed {
		if p.restartAt > 0 && now >= p.restartAt {
			p.restart(ctx, now)
		}
		p.dropDue(now)
		return
	}
	if !p.reader {
		// A retargeted fault goes to a holder that believes it holds the
		// lease and is running; one that stops or ends it waits for one with
		// no pause armed.
		run := p.believes && !p.stopped()
		for _, pf := range p.r.board.take(p.node, now, run, run && p.armed.Total == 0, false) {
			if p.crashed {
				p.dropOne(pf)
				continue
			}
			p.apply(now, pf.f)
		}
		if p.crashed {
			return
		}
	}
	p.endStops(now)
	if !p.started && now >= p.start {
		p.started = true
		if !p.stopped() {
			p.step(now, nil)
		}
	}
	if p.started && !p.stopped() && p.wakeLocal != machine.Never && p.clock.Mono(now) >= p.wakeLocal {
		p.step(now, nil)
	}
}

// dropDue takes, unapplied, the faults due for a crashed process.
func (p *proc) dropDue(now int64) {
	if p.r.opt.Retarget {
		return // a retargeted fault waits for a live holder
	}
	for _, pf := range p.r.board.take(p.node, now, false, false, false) {
		p.dropOne(pf)
	}
}

func (p *proc) dropOne(pf *planned) {
	p.r.partialf(pf.f.Kind, model.FaultRecord{Kind: string(pf.f.Kind), Target: p.process,
		Detail: fmt.Sprintf("not applied: %s was down (crashed)", p.process)})
}

// endStops ends a pause or a freeze whose time has come; when the process
// runs again, the sends a pause held leave, the replies that arrived are
// handled, and the machine gets a tick (internal/sim/world.go's resume).
func (p *proc) endStops(now int64) {
	if !p.stopped() {
		return
	}
	if p.freezeUntil > 0 && now >= p.freezeUntil {
		p.clock.Unfreeze(now)
		p.freezeUntil = 0
		p.r.ended(p.freezeRec, now)
	}
	if p.pauseUntil > 0 && now >= p.pauseUntil {
		p.pauseUntil = 0
		p.resumeWhole()
		end := now
		if k, ok := backend.As[kernelStops](p.cl.b); ok {
			// The pause ends when the kernel reported the process running.
			if sp := k.Stops(); len(sp) > 0 && !sp[len(sp)-1].Open {
				end = max(now, int64(p.r.rec.Since(sp[len(sp)-1].To)/time.Microsecond))
			}
		}
		p.r.ended(p.pauseRec, end)
	}
	if p.stopped() {
		return
	}
	if p.cl.proxy != nil {
		p.cl.proxy.Freeze(false) // a pause froze it
	}
	p.queue = append(p.queue, p.held...)
	p.held = nil
	inbox := p.inbox
	p.inbox = nil
	for _, res := range inbox {
		p.deliver(now, res)
	}
	if p.started {
		p.step(now, nil)
	}
}

// deliver hands a reply to the machine, or keeps it while the process is
// stopped. A call that got no answer delivers nothing: the machine times
// the request out on its own clock, as for a lost message.
func (p *proc) deliver(now int64, res result) {
	if !res.ok || p.crashed {
		return
	}
	if p.stopped() {
		p.inbox = append(p.inbox, res)
		return
	}
	p.step(now, &res.rep)
}

// step runs the machine on a reply (rep != nil) or a tick at true time now,
// and takes what it asks: its sends, its next wake-up, its belief. The
// pause strikes here, at the holder's next write, between its re-check and
// its send (the article's GC pause, which turns a checked write into a
// zombie's); a holder that does not write within a TTL of the pause's
// arming is paused at whatever it does next — the simulator's rule.
func (p *proc) step(now int64, rep *machine.Reply) {
	local := p.clock.Mono(now)
	if wu, ok := p.m.(machine.WallClockUser); ok {
		wu.SetWall(p.clock.Wall(now))
	}
	if rep != nil {
		p.m.Receive(local, *rep)
	} else {
		p.m.Tick(local)
	}
	rd := p.m.Ready()
	send := rd.Send
	wake := rd.WakeAt
	if wake != machine.Never && wake <= local && rep == nil {
		wake = local + 1 // guarantee progress
	}
	p.wakeLocal = wake
	if !p.reader {
		p.done = rd.Done
		if rd.Believes != p.believes || rd.Believes && rd.Fence != p.fence {
			p.believes, p.fence = rd.Believes, rd.Fence
			p.r.believe(p, rd.Believes, rd.Fence, now)
		}
	}
	if p.r.opt.Retarget && !p.reader && p.believes && p.armed.Total == 0 && faultsupport.SendsWrite(send) {
		// The faults that matter at a write strike the lease holder there:
		// after its re-check, before its send.
		for _, pf := range p.r.board.take(p.node, now, true, true, true) {
			p.apply(now, pf.f)
		}
	}
	if d := p.armed.Strike(now, p.r.ttl, send); d > 0 {
		p.held = append(p.held, send...)
		p.pauseUntil = now + d
		if s, ok := backend.As[backend.Stopper](p.cl.b); ok {
			// A library that renews by itself would keep the lease alive
			// through a pause of the machine alone: the whole client stops.
			p.resumeClient = s.StopClient(p.owner)
			p.r.wholeStop(p.node, now, true)
		}
		conn := "its connection frozen too"
		if k, ok := backend.As[kernelStops](p.cl.b); ok {
			// Its client is a process, stopped by SIGSTOP: the record
			// starts when the kernel reported it stopped, and what its
			// sockets hold travels as the kernel sends it.
			if sp := k.Stops(); len(sp) > 0 && sp[len(sp)-1].Open {
				now = max(now, int64(p.r.rec.Since(sp[len(sp)-1].From)/time.Microsecond))
			}
			conn = "its client process stopped (SIGSTOP), from when the kernel reported it stopped"
		} else if p.cl.proxy != nil {
			p.cl.proxy.Freeze(true)
		} else {
			// Without Target.Addr there is no proxy to freeze: what the
			// holder had in flight goes on and is answered, as for a freeze.
			// Saying "frozen" here sent a reader of a flaky history after
			// a frozen connection that did not exist.
			conn = "its connection not frozen (no proxy: the target gives no address), what it had in flight goes on"
		}
		what := "between its check and its write"
		if !faultsupport.SendsWrite(send) {
			what = "at its next step (no write came within a TTL)"
		}
		p.pauseRec = p.r.count(faults.Pause, model.FaultRecord{Kind: string(faults.Pause), Target: p.process, Start: now,
			Detail: fmt.Sprintf("%s%s paused for %v, %s; %s", p.process, p.fenceNote(), msUS(d), what, conn)})
		return
	}
	p.queue = append(p.queue, send...)
}

func (p *proc) fenceNote() string {
	if p.believes {
		if p.fence == 0 { // a fence-less lock: no token to name
			return " (holding the lease)"
		}
		return fmt.Sprintf(" (fence %d)", p.fence)
	}
	return ""
}

func isHolder(m machine.Holder) bool { _, ok := m.(*holder.Holder); return ok }

// flush sends what the machine asked for (unless the process is stopped).
func (p *proc) flush(ctx context.Context, now int64) {
	if p.stopped() || p.crashed {
		return
	}
	q := p.queue
	p.queue = nil
	for _, req := range q {
		p.send(ctx, now, req)
	}
}

// send starts the backend call for req. One request is in flight: a call
// the machine gave up on is cancelled (its outcome stays unknown) and ended
// before the next one starts, so the process stays sequential.
//
// A library may not end a call when it is cancelled (go-redis bounds a
// read by the context's deadline, not by its cancellation): the process
// then waits for it, and what the machine decided before the wait is
// stale — a write re-checked against a lease that has since ended. Sent
// late, it would be a zombie's write made by the harness, under no fault
// the history records. So a request whose send waited longer than a tenth
// of the TTL is not sent: as a message lost before it left, the machine
// times it out on its own clock and decides again, and the history, which
// holds only what reached the backend, does not hold it.
func (p *proc) send(ctx context.Context, now int64, req machine.Request) {
	if p.out != nil {
		p.cancelOut()
		if waited := p.r.now() - now; waited > p.r.ttl/10 {
			p.r.logf("%11s %s did not send %s: its previous call, cancelled, returned %s later (the decision is stale)",
				logTime(now), p.process, req.Kind, msUS(waited))
			return
		}
	}
	drop := now < p.dropUntil && faultsupport.LostToDropHeartbeats(req.Kind)
	breq := backend.Request{Kind: req.Kind, Key: req.Key, Owner: req.Owner, TTL: time.Duration(req.TTL) * time.Microsecond,
		Fence: req.Fence, Value: req.Value}
	timeout := p.r.opTimeout(now)
	cctx, cancel := context.WithCancel(ctx)
	out := &inflight{id: req.ID, cancel: cancel, done: make(chan struct{})}
	p.out = out
	b, rec, process, owner, lat := p.cl.b, p.r.rec, p.process, p.owner, time.Duration(p.r.lat)*time.Microsecond
	r, node := p.r, p.node
	results := p.results
	if req.Kind == model.Release {
		p.endHolds(now, "its release sent")
	}
	go func() {
		defer close(out.done)
		if lat > 0 {
			// The scenario's network: the request travels before it arrives.
			if sleepFor(cctx, lat); cctx.Err() != nil {
				return
			}
		}
		call := r.now()
		resp, ok := rec.Do(cctx, b, process, owner, breq, timeout, drop)
		if ok && resp.OK && breq.Kind == model.Acquire {
			r.watchLoss(ctx, b, node, process, owner, breq.Key, resp.Fence, call)
		}
		if lat > 0 && ok {
			if sleepFor(cctx, lat); cctx.Err() != nil {
				return
			}
		}
		rep := machine.Reply{ID: req.ID, OK: resp.OK, Fence: resp.Fence, Value: resp.Value, HasValue: resp.HasValue, Err: resp.Reason,
			TTL: int64(resp.TTL / time.Microsecond)} // the machine's unit
		select {
		case results <- result{rep: rep, ok: ok}:
		case <-ctx.Done():
		}
	}()
}

// cancelOut cancels the call in flight and waits for it to end.
func (p *proc) cancelOut() {
	if p.out == nil {
		return
	}
	p.out.cancel()
	<-p.out.done
	p.out = nil
}

// apply injects a holder fault at true time now.
func (p *proc) apply(now int64, f faults.Fault) {
	r := p.r
	rec := model.FaultRecord{Kind: string(f.Kind), Target: p.process, Start: now}
	d := r.us(f.Duration)
	notApplied := func(why string) {
		rec.Detail = "not applied: " + why
		r.partialf(f.Kind, rec)
	}
	local := p.clock.Mono(now)
	switch f.Kind {
	case faults.Pause:
		p.armed.Arm(now, d) // counted when it strikes (step)
	case faults.Freeze:
		if p.freezeUntil == 0 {
			p.clock.Freeze(now) // one freeze depth: a second one only extends it
		}
		// What is in flight travels on (the simulator's rule): the machine
		// sees its replies when it runs again.
		p.freezeUntil = max(p.freezeUntil, now+d)
		rec.Detail = fmt.Sprintf("%s%s frozen for %v, its monotonic clock too (a suspended machine: CLOCK_MONOTONIC does not count the suspension)", p.process, p.fenceNote(), msUS(d))
		p.freezeRec = r.count(f.Kind, rec)
	case faults.Overrun:
		o, ok := p.m.(machine.Overrunner)
		if !ok {
			notApplied("the holder machine has no Overrun")
			return
		}
		o.Overrun(local, d)
		rec.Detail = fmt.Sprintf("%s's current (or next) work item takes %v longer", p.process, msUS(d))
		r.count(f.Kind, rec)
		p.poke(now)
	case faults.RenewDeath:
		k, ok := p.m.(machine.RenewKiller)
		if !ok {
			notApplied("the holder machine has no KillRenewLoop")
			return
		}
		k.KillRenewLoop()
		rec.Detail = fmt.Sprintf("%s%s's renewal loop died, quietly", p.process, p.fenceNote())
		r.count(f.Kind, rec)
		p.poke(now)
	case faults.DoubleRelease:
		dr, ok := p.m.(machine.DoubleReleaser)
		if !ok {
			notApplied("the holder machine has no DoubleRelease")
			return
		}
		late := r.us(f.Amount)
		dr.DoubleRelease(late)
		rec.Amount = late
		rec.Detail = fmt.Sprintf("%s's next release is sent again %v after the first", p.process, msUS(late))
		r.count(f.Kind, rec)
	case faults.ClockDrift:
		p.clock.SetDrift(now, f.Amount)
		rec.Amount = f.Amount
		rec.Detail = fmt.Sprintf("%s's clocks run %+d ppm from now on (within the declared ρ = %d ppm: its deadline, TTL·(1−2ρ) − margin, absorbs it)", p.process, f.Amount, r.sc.RhoPPM)
		if f.Amount < -r.sc.RhoPPM || f.Amount > r.sc.RhoPPM {
			rec.Detail = fmt.Sprintf("%s's clocks run %+d ppm from now on, beyond the declared ρ = %d ppm", p.process, f.Amount, r.sc.RhoPPM)
		}
		r.count(f.Kind, rec)
	case faults.ClockStep:
		step := r.us(f.Amount)
		p.clock.Step(step)
		rec.Amount = step
		who := "harmless to a holder that measures its lease on the monotonic clock"
		if h, ok := p.m.(*holder.Holder); ok && h.Config().Bugs&holder.BugTrustWallClock != 0 {
			who = "this holder measures its lease on the wall clock: its deadline now comes sooner"
			if step < 0 {
				who = "this holder measures its lease on the wall clock: it now believes that much longer"
			}
		} else if _, ok := p.m.(machine.WallClockUser); ok && !isHolder(p.m) {
			who = "handed to a machine that reads the wall clock"
		}
		rec.Detail = fmt.Sprintf("%s%s's wall clock stepped by %v (%s)", p.process, p.fenceNote(), msUS(step), who)
		r.count(f.Kind, rec)
	case faults.DropHeartbeats:
		p.dropUntil = now + d
		rec.End, rec.HasEnd = now+d, true
		rec.Detail = fmt.Sprintf("%s%s's renewals lost for %v", p.process, p.fenceNote(), msUS(d))
		r.count(f.Kind, rec)
	case faults.Delay, faults.Partition:
		px := p.cl.proxy
		if px == nil {
			notApplied("no proxy: the target has no address")
			return
		}
		if f.Kind == faults.Delay {
			amt := r.us(f.Amount)
			px.SetDelay(time.Duration(amt) * time.Microsecond)
			rec.Amount = amt
			rec.Detail = fmt.Sprintf("%s's connection delayed %v per message for %v", p.process, msUS(amt), msUS(d))
			p.lifts = append(p.lifts, lift{at: now + d, rec: r.count(f.Kind, rec), fn: func() { px.SetDelay(0) }})
			return
		}
		rec.Peer = f.Peer
		if faults.IsMember(f.Peer) {
			p.partitionMember(now, f, rec, d)
			return
		}
		rec.Detail = fmt.Sprintf("%s%s cut off from the server for %v (blackholed, then its connections reset)", p.process, p.fenceNote(), msUS(d))
		if f.Peer == faults.Resource {
			rec.Detail += "; the resource is the backend itself, so the whole connection is cut"
		}
		px.Blackhole(true)
		r.excuse(now + d) // the watchdog does not count a silence of our making
		p.lifts = append(p.lifts, lift{at: now + d, rec: r.count(f.Kind, rec), fn: func() { px.Blackhole(false) }, cut: true})
	case faults.Crash, faults.OwnerReuse:
		p.crash(now, f, rec)
	case faults.Blackhole, faults.RequestLoss, faults.ReplyLoss, faults.RequestDelay, faults.ReplyDelay, faults.Reorder, faults.Duplicate:
		p.applyNetwork(now, f, rec) // netfault.go
	default:
		notApplied(fmt.Sprintf("%s has no real counterpart on a holder", f.Kind))
	}
}

// poke ticks a running machine so a fault's effect on its timers shows.
func (p *proc) poke(now int64) {
	if p.started && !p.stopped() && !p.crashed {
		p.step(now, nil)
	}
}

// crash kills the incarnation without a release: what it had in flight is
// abandoned (its outcome unknown), its connection blackholed; with a
// duration, a new incarnation starts then, under a new owner name (crash)
// or the dead one's (owner-reuse).
func (p *proc) crash(now int64, f faults.Fault, rec model.FaultRecord) {
	d := p.r.us(f.Duration)
	old := p.process
	fence := p.fenceNote()
	p.cancelOut()
	for len(p.results) > 0 {
		<-p.results // the dead incarnation's last answer must not reach the next one
	}
	if p.cl.proxy != nil {
		p.cl.proxy.Freeze(false)
		p.cl.proxy.Blackhole(true)
	}
	if p.r.t.Info.EndsWithClient && !p.reader {
		// The dead client's session, and its lock with it, ends once the
		// server sees its connection close.
		p.r.rec.RecordSessionEnd(p.r.sc.Key, old, p.owner, p.fence, now)
	}
	if p.believes {
		p.believes, p.fence = false, 0
		p.r.believe(p, false, 0, now)
	}
	p.endHolds(now, "crashed")
	killed := ""
	if k, ok := backend.As[killer](p.cl.b); ok {
		// The client is a process of its own: it dies as a process does.
		k.Kill()
		killed = " (its client process killed: SIGKILL)"
	} else if s, ok := backend.As[backend.Stopper](p.cl.b); ok && p.resumeClient == nil {
		// A dead process's library renews nothing: its whole client stops
		// (until a restart under the same owner opens it again).
		p.resumeClient = s.StopClient(p.owner)
	}
	if p.armed.Total > 0 {
		p.r.partialf(faults.Pause, model.FaultRecord{Kind: string(faults.Pause), Target: old, Start: now,
			Detail: fmt.Sprintf("not applied: %s crashed before the pause of %v struck", old, msUS(p.armed.Total))})
	}
	if p.pauseUntil > 0 {
		// The kill ends the pause when it happens. A process client's pause
		// record starts when the kernel reported the process stopped,
		// which can be later than a crash dealt for the same instant: the
		// step's time would end the record before its start.
		p.r.ended(p.pauseRec, max(now, p.r.now()))
	}
	if p.freezeUntil > 0 {
		p.clock.Thaw(now) // the next incarnation's clock runs
		p.r.ended(p.freezeRec, now)
	}
	p.crashed = true
	p.queue, p.held, p.inbox = nil, nil, nil
	p.pauseUntil, p.freezeUntil = 0, 0
	p.armed.Disarm()
	p.restartAt, p.restartKind = 0, f.Kind
	if d > 0 {
		p.restartAt = now + d
		rec.End, rec.HasEnd = now+d, true
		next := faultsupport.Incarnation(p.node, p.inc+1)
		owner := next
		if faultsupport.KeepsOwner(f.Kind) {
			owner = p.owner
		}
		rec.Detail = fmt.Sprintf("%s%s crashed without releasing%s; back in %v as %s (owner %s)", old, fence, killed, msUS(d), next, owner)
	} else {
		rec.Detail = fmt.Sprintf("%s%s crashed without releasing%s, for good", old, fence, killed)
	}
	p.r.count(f.Kind, rec)
}

// restart starts the next incarnation: a new process of the history, a new
// connection, a fresh machine.
func (p *proc) restart(ctx context.Context, now int64) {
	p.restartAt = 0
	p.inc++
	p.process = faultsupport.Incarnation(p.node, p.inc)
	if !faultsupport.KeepsOwner(p.restartKind) {
		p.owner = p.process
	}
	if p.cl.proxy != nil && !slices.ContainsFunc(p.lifts, func(l lift) bool { return l.cut }) {
		p.cl.proxy.Blackhole(false) // unless a partition still cuts it
	}
	if err := p.reconnect(ctx); err != nil {
		p.r.logf("%11s %s could not reconnect after its restart: %v", logTime(now), p.process, err)
		return // stays down
	}
	p.crashed = false
	p.done, p.started = false, true
	p.m = p.r.opt.NewHolder(p.r.holderConfig(p.prog, p.process, p.owner))
	p.wakeLocal = machine.Never
	p.step(now, nil)
}

// The fault log and the fault records' details speak the unit of the
// stories that quote them beside the history's times: milliseconds
// (timefmt.Times, the one conversion), to the millisecond — not Go's
// Duration format, which switches to seconds at 1s.

// inMs renders a duration, rounded to the millisecond: "840ms", "1300ms".
func inMs(d time.Duration) string {
	return timefmt.Times{Unit: "us"}.Dur(d.Round(time.Millisecond).Microseconds())
}

// msUS is inMs of a duration in microseconds, the histories' unit.
func msUS(us int64) string { return inMs(time.Duration(us) * time.Microsecond) }

// logTime renders a fault log line's time (µs since the run's start) to
// the µs, in ms: "726.238ms".
func logTime(us int64) string { return timefmt.Times{Unit: "us"}.Dur(us) }

// kernelStops is a client that is a process of its own: the kernel's
// record of its stops (internal/procclient).
type kernelStops interface{ Stops() []procclient.Span }

// killer is a client that is a process of its own: a crash kills it
// (internal/procclient's SIGKILL).
type killer interface{ Kill() }

// resumeWhole resumes the whole client, when a pause or crash stopped it.
func (p *proc) resumeWhole() {
	if p.resumeClient != nil {
		p.resumeClient()
		p.resumeClient = nil
		p.r.wholeStop(p.node, p.r.now(), false)
	}
}
