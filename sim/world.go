package sim

import (
	"fmt"
	"strconv"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/holder"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/scenario"
)

// Options plug implementations and choosers into a run. The zero value (or
// nil) runs the reference coordinator, resource and holder with the
// scenario's seeded PRNG.
type Options struct {
	// Chooser replaces the seeded PRNG of the run (e.g. NewRapid).
	Chooser Chooser
	// NewCoordinator, NewResource and NewHolder build the machines under
	// test; nil means the reference ones.
	NewCoordinator func() machine.Coordinator
	NewResource    func() machine.Resource
	NewHolder      func(holder.Config) machine.Holder
	// NoTrace skips the human-readable trace (benchmarks).
	NoTrace bool
}

type nodeKind uint8

const (
	kindCoordinator nodeKind = iota
	kindResource
	kindHolder
	kindReader
)

const (
	coordID int32 = 0
	resID   int32 = 1
)

type node struct {
	name    string
	kind    nodeKind
	clock   Clock
	paused  int
	crashed bool
	inc     int32
	process string
	owner   string
	m       machine.Holder // a holder or the reader
	cfg     holder.Config
	start   int64

	gen       uint64 // wake generation: a wake event with another gen is stale
	wakeLocal int64  // the local time the machine asked to be woken at
	inbox     []int32
	held      []int32 // messages produced just before a pause
	armed     int64   // a pause of this length hits at the next step that writes
	armedAt   int64   // when it was armed: after a TTL it hits any step
	believes  bool
	fence     int64
	waiting   bool
	done      bool
	nextInc   int32

	cutCoord, cutRes int
	dropRenew        int
	extraDelay       int64
}

type envelope struct {
	from, to int32
	inc      int32 // the client's incarnation
	isReply  bool
	op       int32 // history op index, -1 none
	req      machine.Request
	rep      machine.Reply
}

type dedupeKey struct {
	node, inc int32
	id        uint64
}

type world struct {
	sc    *scenario.Scenario
	opts  Options
	ch    Chooser
	q     queue
	now   int64
	nodes []node
	msgs  []envelope
	free  []int32

	coord    machine.Coordinator
	res      machine.Resource
	fenced   bool
	dedupe   map[dedupeKey]machine.Reply
	ops      []model.Op
	u        int64
	trace    []TraceEvent
	stats    Stats
	hash     uint64
	restarts int // restarts pending

	// coordinator-side view of the lease, for liveness measurements
	leaseOwner  string
	leaseExpiry int64 // lease clock
	believers   int
	dblSince    int64
	pendCrash   []int64
	pendRelease []int64
}

// Run runs sc in the simulator and returns its history, trace and stats.
// It fails only when sc is invalid.
func Run(sc *scenario.Scenario, opts *Options) (*Result, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	w := &world{sc: sc, dedupe: map[dedupeKey]machine.Reply{}}
	if opts != nil {
		w.opts = *opts
	}
	w.ch = w.opts.Chooser
	if w.ch == nil {
		w.ch = NewSeeded(sc.Seed, scenario.StreamRun)
	}
	if w.opts.NewCoordinator == nil {
		w.opts.NewCoordinator = NewRefCoordinator
	}
	if w.opts.NewResource == nil {
		w.opts.NewResource = NewRefResource
	}
	if w.opts.NewHolder == nil {
		w.opts.NewHolder = func(c holder.Config) machine.Holder { return holder.New(c) }
	}
	w.coord = w.opts.NewCoordinator()
	w.fenced = sc.Sem() == model.FencedStorage
	if w.fenced {
		w.res = w.opts.NewResource()
	}
	w.stats.Faults = map[faults.Kind]int{}
	w.stats.NotApplied = map[faults.Kind]int{}
	w.setup()
	w.loop()
	return w.finish(), nil
}

func (w *world) setup() {
	sc := w.sc
	w.nodes = append(w.nodes, node{name: faults.Coordinator, kind: kindCoordinator}, node{name: faults.Resource, kind: kindResource})
	for _, p := range sc.Holders {
		cfg := holder.Config{Key: sc.Key, Owner: p.Name, Name: p.Name, TTL: sc.TTL, RhoPPM: sc.RhoPPM,
			Fenced: w.fenced, Timeout: p.Timeout, RetryMax: p.RetryMax, Work: p.Work}
		w.nodes = append(w.nodes, node{name: p.Name, kind: kindHolder, cfg: cfg, start: p.Start, process: p.Name, owner: p.Name, nextInc: 2})
	}
	if sc.ReadEvery > 0 {
		w.nodes = append(w.nodes, node{name: "r1", kind: kindReader, process: "r1", owner: "r1",
			m: &holder.Reader{Key: sc.Key, Owner: "r1", Every: sc.ReadEvery, Timeout: max(sc.TTL/3, 1), Fenced: w.fenced}})
	}
	// Clock offsets hold from the start; the coordinator's offset and drift
	// bound how far its lease clock strays from true time: the history's
	// clock uncertainty.
	var coordOff, coordPPM int64
	for i, f := range sc.Faults {
		if f.Kind == faults.ClockOffset {
			n := w.nodeByName(f.Target)
			n.clock.base += f.Amount
			if f.Target == faults.Coordinator {
				coordOff += f.Amount
			}
		}
		if f.Kind == faults.ClockDrift && f.Target == faults.Coordinator {
			coordPPM = max(coordPPM, f.Amount, -f.Amount)
		}
		w.q.push(event{t: f.At, kind: evFault, arg: int32(i)})
	}
	w.u = max(coordOff, -coordOff) + (coordPPM*sc.Horizon+999_999)/1_000_000 + 1
	for i := range w.nodes {
		n := &w.nodes[i]
		switch n.kind {
		case kindHolder:
			n.m = w.opts.NewHolder(n.cfg)
			w.schedule(int32(i), n.start)
		case kindReader:
			w.schedule(int32(i), 0)
		}
	}
}

func (w *world) nodeByName(name string) *node {
	for i := range w.nodes {
		if w.nodes[i].name == name {
			return &w.nodes[i]
		}
	}
	panic("sim: no node " + name) // Validate guarantees targets exist
}

func (w *world) id(name string) int32 {
	for i := range w.nodes {
		if w.nodes[i].name == name {
			return int32(i)
		}
	}
	panic("sim: no node " + name)
}

// schedule arranges a wake-up at true time t.
func (w *world) schedule(id int32, t int64) {
	n := &w.nodes[id]
	n.gen++
	w.q.push(event{t: t, kind: evWake, node: id, gen: n.gen})
}

// scheduleLocal arranges a wake-up when the node's clock reads local.
func (w *world) scheduleLocal(id int32, local int64) {
	n := &w.nodes[id]
	n.wakeLocal = local
	if local == machine.Never {
		n.gen++
		return
	}
	t := n.clock.When(local, w.now)
	if t < 0 { // frozen: rescheduled at unfreeze
		n.gen++
		return
	}
	w.schedule(id, t)
}

func (w *world) mix(vals ...int64) {
	h := w.hash
	for _, v := range vals {
		h ^= uint64(v)
		h *= 1099511628211
	}
	w.hash = h
}

func (w *world) mixString(s string) {
	h := w.hash
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	h ^= 0xff // separator
	h *= 1099511628211
	w.hash = h
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func (w *world) loop() {
	maxEv := w.sc.MaxEvents
	if maxEv == 0 {
		maxEv = scenario.DefaultMaxEvents
	}
	w.hash = 14695981039346656037
	for len(w.q.ev) > 0 {
		if w.stats.Events >= maxEv {
			w.stats.Truncated = true
			break
		}
		e := w.q.pop()
		if e.t > w.sc.Horizon {
			break
		}
		w.now = e.t
		w.stats.Events++
		w.mix(e.t, int64(e.kind), int64(e.node), int64(e.arg))
		switch e.kind {
		case evDeliver:
			w.deliver(e.arg)
		case evWake:
			n := &w.nodes[e.node]
			if e.gen != n.gen || n.crashed || n.paused > 0 {
				continue
			}
			w.step(e.node, nil)
		case evFault:
			w.fault(int(e.arg))
		case evFaultEnd:
			w.faultEnd(int(e.arg))
		case evResume, evUnfreeze:
			w.resume(e)
		case evRestart:
			w.restart(int(e.arg))
		}
		if w.allDone() {
			break
		}
	}
	w.stats.End = w.now
}

func (w *world) allDone() bool {
	if w.restarts > 0 {
		return false
	}
	for i := range w.nodes {
		n := &w.nodes[i]
		if n.kind == kindHolder && !n.done && !n.crashed {
			return false
		}
	}
	return true
}

// step runs a client machine on a reply (env != nil) or a tick.
func (w *world) step(id int32, env *envelope) {
	n := &w.nodes[id]
	local := n.clock.Mono(w.now)
	if wu, ok := n.m.(machine.WallClockUser); ok {
		wu.SetWall(n.clock.Wall(w.now))
	}
	if env != nil {
		if n.m.Receive(local, env.rep) {
			w.recordReturn(env.op, &env.rep)
		}
	} else {
		n.m.Tick(local)
	}
	rd := n.m.Ready()
	send, wake := rd.Send, rd.WakeAt
	if n.kind == kindHolder {
		n.waiting, n.done = rd.Waiting, rd.Done
		if rd.Believes != n.believes || (rd.Believes && rd.Fence != n.fence) {
			w.setBelief(id, rd.Believes, rd.Fence)
		}
	}
	// The pause hits at the holder's next write, between the re-check and the
	// send: the article's GC pause, which turns a checked write into a
	// zombie's. A holder that does not write within a TTL is paused at
	// whatever it does next.
	var pause int64
	if n.armed > 0 && (sendsWrite(send) || w.now >= n.armedAt+w.sc.TTL) {
		pause, n.armed = n.armed, 0
	}
	for i := range send {
		m := w.newRequest(id, &send[i])
		if pause > 0 {
			n.held = append(n.held, m)
		} else {
			w.send(m)
		}
	}
	if wake != machine.Never && wake <= local && env == nil {
		wake = local + 1 // guarantee progress
	}
	w.scheduleLocal(id, wake)
	if pause > 0 {
		w.trace1(n.name, "paused", fmt.Sprintf("for %dms", pause))
		n.paused++
		w.q.push(event{t: w.now + pause, kind: evResume, node: id, gen: uint64(n.inc)})
	}
}

func sendsWrite(send []machine.Request) bool {
	for i := range send {
		if send[i].Kind == model.Write {
			return true
		}
	}
	return false
}

func (w *world) setBelief(id int32, b bool, fence int64) {
	n := &w.nodes[id]
	if b != n.believes {
		if w.believers >= 2 {
			w.stats.DoubleBelief += w.now - w.dblSince
		}
		w.dblSince = w.now
		if b {
			w.believers++
		} else {
			w.believers--
		}
	}
	n.believes, n.fence = b, fence
	if b {
		w.trace1(n.process, "believes", "fence="+strconv.FormatInt(fence, 10))
	} else {
		w.trace1(n.process, "gave-up", "")
	}
}

func (w *world) newRequest(id int32, r *machine.Request) int32 {
	n := &w.nodes[id]
	op := model.Op{Process: n.process, Owner: n.owner, Key: r.Key, Kind: r.Kind, Call: w.now}
	switch r.Kind {
	case model.Acquire:
		op.TTL = r.TTL
	case model.Renew:
		op.TTL, op.Fence = r.TTL, r.Fence
	case model.Release:
		op.Fence = r.Fence
	case model.Write:
		op.Fence, op.Value, op.HasValue = r.Fence, r.Value, true
	}
	idx := int32(len(w.ops))
	w.ops = append(w.ops, op)
	to := coordID
	if r.To == machine.ToResource {
		to = resID
	}
	m := w.alloc()
	w.msgs[m] = envelope{from: id, to: to, inc: n.inc, op: idx, req: *r}
	return m
}

func (w *world) recordReturn(op int32, r *machine.Reply) {
	if op < 0 {
		return
	}
	o := &w.ops[op]
	o.Return, o.Returned, o.OK, o.Error = w.now, true, r.OK, r.Err
	switch o.Kind {
	case model.Acquire:
		if r.OK {
			o.Fence = r.Fence
		}
	case model.Read:
		o.Value, o.HasValue = r.Value, r.HasValue
	}
}

func (w *world) alloc() int32 {
	if k := len(w.free); k > 0 {
		m := w.free[k-1]
		w.free = w.free[:k-1]
		return m
	}
	w.msgs = append(w.msgs, envelope{})
	return int32(len(w.msgs) - 1)
}

func (w *world) release(m int32) {
	w.msgs[m] = envelope{}
	w.free = append(w.free, m)
}

// send puts message m on the network: partitions and lost heartbeats drop
// it, the ambient network may lose, delay or duplicate it.
func (w *world) send(m int32) {
	e := &w.msgs[m]
	cl, server := e.from, e.to
	if e.isReply {
		cl, server = e.to, e.from
	}
	c := &w.nodes[cl]
	if (server == coordID && c.cutCoord > 0) || (server == resID && c.cutRes > 0) {
		w.stats.Dropped++
		w.release(m)
		return
	}
	if !e.isReply && e.req.Kind == model.Renew && c.dropRenew > 0 {
		w.stats.Dropped++
		w.release(m)
		return
	}
	net := &w.sc.Network
	if net.DropPPM > 0 && w.ch.Int64(0, 999_999, "drop") < net.DropPPM {
		w.stats.Dropped++
		w.release(m)
		return
	}
	w.q.push(event{t: w.now + w.ch.Int64(net.MinDelay, net.MaxDelay, "delay") + c.extraDelay, kind: evDeliver, arg: m})
	if net.DupPPM > 0 && w.ch.Int64(0, 999_999, "dup") < net.DupPPM {
		d := w.alloc()
		w.msgs[d] = w.msgs[m]
		w.stats.Duplicated++
		w.q.push(event{t: w.now + w.ch.Int64(net.MinDelay, net.MaxDelay, "delay") + c.extraDelay, kind: evDeliver, arg: d})
	}
}

func (w *world) deliver(m int32) {
	e := &w.msgs[m]
	n := &w.nodes[e.to]
	if n.crashed || (e.isReply && e.inc != n.inc) {
		w.release(m)
		return
	}
	if n.paused > 0 {
		n.inbox = append(n.inbox, m)
		return
	}
	w.handle(m)
}

// handle processes a delivered message at a running node.
func (w *world) handle(m int32) {
	e := &w.msgs[m]
	switch w.nodes[e.to].kind {
	case kindCoordinator, kindResource:
		w.serve(m)
	default:
		env := *e
		w.release(m)
		w.step(env.to, &env)
	}
}

// serve applies a request at the coordinator or the resource and answers it.
// Duplicates are answered from a cache (at-most-once RPC), which is durable.
func (w *world) serve(m int32) {
	e := &w.msgs[m]
	key := dedupeKey{e.from, e.inc, e.req.ID}
	rep, seen := w.dedupe[key]
	if !seen {
		// The coordinator's lease clock orders every applied operation, also
		// the resource's: at is monotonic in true time for all of them.
		at := w.nodes[coordID].clock.Mono(w.now)
		if e.to == coordID {
			if wu, ok := w.coord.(machine.WallClockUser); ok {
				wu.SetWall(w.nodes[coordID].clock.Wall(w.now))
			}
			rep = w.coord.Apply(&e.req, at)
		} else {
			rep = w.res.Apply(&e.req)
		}
		rep.ID, rep.At = e.req.ID, at
		w.dedupe[key] = rep
		if e.op >= 0 {
			w.ops[e.op].At, w.ops[e.op].HasAt = at, true
		}
		if e.to == coordID && rep.OK {
			w.observe(&e.req, &rep, at)
		}
	}
	e.isReply, e.rep = true, rep
	e.from, e.to = e.to, e.from
	w.send(m)
}

// observe follows the coordinator's lease for the liveness measurements.
func (w *world) observe(r *machine.Request, rep *machine.Reply, at int64) {
	switch r.Kind {
	case model.Acquire:
		w.leaseOwner, w.leaseExpiry = r.Owner, at+r.TTL
		for _, t := range w.pendCrash {
			w.stats.Recoveries = append(w.stats.Recoveries, w.now-t)
		}
		for _, t := range w.pendRelease {
			w.stats.Handoffs = append(w.stats.Handoffs, w.now-t)
		}
		w.pendCrash, w.pendRelease = w.pendCrash[:0], w.pendRelease[:0]
		w.trace1(faults.Coordinator, "granted", r.Owner+" fence="+strconv.FormatInt(rep.Fence, 10))
	case model.Renew:
		w.leaseExpiry = at + r.TTL
	case model.Release:
		w.leaseOwner = ""
		w.trace1(faults.Coordinator, "released", r.Owner)
		if w.someoneWaiting(r.Owner) {
			w.pendRelease = append(w.pendRelease, w.now)
		}
	}
}

func (w *world) someoneWaiting(except string) bool {
	for i := range w.nodes {
		n := &w.nodes[i]
		if n.kind == kindHolder && !n.crashed && n.waiting && n.owner != except {
			return true
		}
	}
	return false
}

func (w *world) trace1(node, what, detail string) {
	if w.opts.NoTrace {
		return
	}
	w.trace = append(w.trace, TraceEvent{T: w.now, Node: node, What: what, Detail: detail})
}

// resume ends a pause or a freeze: buffered sends leave, buffered messages
// are handled, the machine gets a tick.
func (w *world) resume(e event) {
	n := &w.nodes[e.node]
	if e.kind == evUnfreeze {
		n.clock.Unfreeze(w.now)
	}
	if n.crashed || uint64(n.inc) != e.gen || n.paused == 0 {
		return
	}
	n.paused--
	if n.paused > 0 {
		return
	}
	w.trace1(n.name, "resumed", "")
	held := n.held
	n.held = nil
	for _, m := range held {
		w.send(m)
	}
	inbox := n.inbox
	n.inbox = nil
	for _, m := range inbox {
		if n.crashed || n.paused > 0 {
			n.inbox = append(n.inbox, m)
			continue
		}
		w.handle(m)
	}
	if n.kind == kindHolder || n.kind == kindReader {
		if !n.crashed && n.paused == 0 {
			w.step(e.node, nil)
		}
	}
}

func (w *world) count(k faults.Kind, f faults.Fault) {
	w.stats.Faults[k]++
	w.trace1(f.Target, "fault", f.String())
}

// notApplied takes back the count of a fault the target's machine has no
// method for (machine's optional interfaces): it is reported, not counted.
func (w *world) notApplied(f faults.Fault) {
	w.stats.Faults[f.Kind]--
	w.stats.NotApplied[f.Kind]++
	w.trace1(f.Target, "fault-not-applied", f.String()+" (the machine does not implement it)")
}

func (w *world) fault(i int) {
	f := w.sc.Faults[i]
	if f.Kind == faults.ClockOffset { // applied in setup
		w.count(f.Kind, f)
		return
	}
	id := w.id(f.Target)
	n := &w.nodes[id]
	if n.crashed && f.Kind != faults.CoordinatorCrash {
		return // nothing left to hit
	}
	w.count(f.Kind, f)
	switch f.Kind {
	case faults.Pause:
		if n.armed == 0 {
			n.armedAt = w.now
		}
		n.armed += f.Duration
	case faults.Overrun:
		o, ok := n.m.(machine.Overrunner)
		if !ok {
			w.notApplied(f)
			return
		}
		o.Overrun(n.clock.Mono(w.now), f.Duration)
		w.poke(id)
	case faults.ClockDrift:
		n.clock.SetDrift(w.now, f.Amount)
		w.rewake(id)
	case faults.ClockStep:
		n.clock.Step(f.Amount)
	case faults.Freeze:
		n.clock.Freeze(w.now)
		n.paused++
		w.q.push(event{t: w.now + f.Duration, kind: evUnfreeze, node: id, gen: uint64(n.inc)})
	case faults.DropHeartbeats:
		n.dropRenew++
		w.q.push(event{t: w.now + f.Duration, kind: evFaultEnd, arg: int32(i)})
	case faults.RenewDeath:
		k, ok := n.m.(machine.RenewKiller)
		if !ok {
			w.notApplied(f)
			return
		}
		k.KillRenewLoop()
		w.poke(id)
	case faults.Delay:
		n.extraDelay += f.Amount
		w.q.push(event{t: w.now + f.Duration, kind: evFaultEnd, arg: int32(i)})
	case faults.Partition:
		if f.Peer == faults.Resource {
			n.cutRes++
		} else {
			n.cutCoord++
		}
		w.q.push(event{t: w.now + f.Duration, kind: evFaultEnd, arg: int32(i)})
	case faults.Crash, faults.OwnerReuse:
		w.crashHolder(id)
		if f.Duration > 0 {
			w.restarts++
			w.q.push(event{t: w.now + f.Duration, kind: evRestart, arg: int32(i)})
		}
	case faults.CoordinatorCrash:
		if n.crashed {
			return
		}
		n.crashed = true
		w.coord.Crash()
		w.restarts++
		w.q.push(event{t: w.now + f.Duration, kind: evRestart, arg: int32(i)})
	case faults.DoubleRelease:
		d, ok := n.m.(machine.DoubleReleaser)
		if !ok {
			w.notApplied(f)
			return
		}
		d.DoubleRelease(f.Amount)
	}
}

// poke ticks a running holder so a fault's effect on its timers shows.
func (w *world) poke(id int32) {
	n := &w.nodes[id]
	if !n.crashed && n.paused == 0 {
		w.step(id, nil)
	}
}

// rewake re-maps a pending wake-up after the node's clock changed.
func (w *world) rewake(id int32) {
	n := &w.nodes[id]
	if (n.kind == kindHolder || n.kind == kindReader) && !n.crashed && n.wakeLocal != machine.Never {
		w.scheduleLocal(id, n.wakeLocal)
	}
}

func (w *world) faultEnd(i int) {
	f := w.sc.Faults[i]
	n := w.nodeByName(f.Target)
	switch f.Kind {
	case faults.DropHeartbeats:
		n.dropRenew--
	case faults.Delay:
		n.extraDelay -= f.Amount
	case faults.Partition:
		if f.Peer == faults.Resource {
			n.cutRes--
		} else {
			n.cutCoord--
		}
	}
}

func (w *world) crashHolder(id int32) {
	n := &w.nodes[id]
	if n.owner == w.leaseOwner && w.nodes[coordID].clock.Mono(w.now) < w.leaseExpiry && w.someoneWaiting(n.owner) {
		w.pendCrash = append(w.pendCrash, w.now)
	}
	if n.believes {
		w.setBelief(id, false, 0)
	}
	w.trace1(n.process, "crashed", "")
	n.crashed = true
	n.paused, n.armed = 0, 0
	n.gen++
	for _, m := range n.inbox {
		w.release(m)
	}
	for _, m := range n.held {
		w.release(m)
	}
	n.inbox, n.held = nil, nil
	n.waiting = false
	if !w.someoneWaiting("") {
		// Nobody is left to take the lease over: the pending measurements
		// would time a restart, not a handoff.
		w.pendCrash, w.pendRelease = w.pendCrash[:0], w.pendRelease[:0]
	}
}

func (w *world) restart(i int) {
	f := w.sc.Faults[i]
	w.restarts--
	id := w.id(f.Target)
	n := &w.nodes[id]
	if f.Kind == faults.CoordinatorCrash {
		n.crashed = false
		w.trace1(n.name, "restarted", "")
		return
	}
	n.inc++
	n.process = n.name + "#" + strconv.Itoa(int(n.nextInc))
	n.nextInc++
	if f.Kind != faults.OwnerReuse {
		n.owner = n.process
	}
	cfg := n.cfg
	cfg.Owner, cfg.Name = n.owner, n.process
	n.m = w.opts.NewHolder(cfg)
	n.crashed, n.done, n.waiting = false, false, false
	w.trace1(n.process, "restarted", "owner="+n.owner)
	w.schedule(id, w.now)
}

func (w *world) finish() *Result {
	if w.believers >= 2 {
		w.stats.DoubleBelief += w.now - w.dblSince
	}
	sc := w.sc
	w.stats.Unrecovered = len(w.pendCrash)
	if len(w.pendCrash) > 0 {
		w.stats.UnrecoveredSince = w.pendCrash[0]
	}
	w.stats.Ops = len(w.ops)
	for i := range w.ops {
		w.ops[i].Line = i + 2 // line 1 is the header
	}
	h := &model.History{
		Name:   "seed-" + strconv.FormatUint(sc.Seed, 10),
		Header: model.Header{Version: 1, TimeUnit: "ms", ClockUncertainty: w.u, Semantics: sc.Sem()},
		Ops:    w.ops,
	}
	r := &Result{Scenario: sc, History: h, Trace: w.trace, Stats: w.stats}
	// The hash covers every event the loop ran, every field of the history
	// and the trace.
	for i := range w.ops {
		o := &w.ops[i]
		w.mixString(o.Process)
		w.mixString(o.Owner)
		w.mixString(o.Key)
		w.mixString(o.Value)
		w.mixString(o.Error)
		w.mix(int64(o.Kind), o.TTL, o.Fence, o.Call, o.Return, o.At, b2i(o.HasValue), b2i(o.Returned), b2i(o.HasAt), b2i(o.OK))
	}
	for _, t := range w.trace {
		w.mix(t.T)
		w.mixString(t.Node)
		w.mixString(t.What)
		w.mixString(t.Detail)
	}
	r.Hash = w.hash
	return r
}
