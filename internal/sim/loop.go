package sim

// The event loop: events in (time, order) order, wake-ups mapped through
// each node's clock, and one step of a holder machine. A seeded run takes
// the events as they come (ties in the order they were scheduled, or drawn
// with Network.ShuffleTies); an enumerable run (a Picker chooser) offers
// each step's moves as one labelled choice point "next".

import (
	"fmt"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/machine"
)

// MoveKind says what a move does.
type MoveKind uint8

const (
	// MoveEvent runs one of the events due at the earliest instant.
	MoveEvent MoveKind = iota
	// MoveFault strikes one of the Space's fault candidates now.
	MoveFault
	// MoveClient has the explorer's adversarial client send a request now.
	MoveClient
)

// Move is one alternative of an enumerable run's "next" choice point.
type Move struct {
	Kind MoveKind
	// Index is the move's position among the due events (MoveEvent), the
	// fault candidates (MoveFault) or the adversary's menu (MoveClient).
	Index int
	// Seq identifies a due event while it waits in the queue: the same
	// event has the same Seq in every later state of one path.
	Seq uint64
	// Node is the holder, reader or client the move touches alone, or -1
	// when it may touch shared state (a server, the fault plan, what the
	// adversary reads to aim its requests).
	Node int32
}

// Label says what move m of the current Moves is, for people.
func (w *World) Label(m Move) string {
	switch m.Kind {
	case MoveFault:
		return "strike " + w.candidates[m.Index].String()
	case MoveClient:
		return w.nodes[w.advID].name + " sends " + w.menu[m.Index].String()
	}
	if !w.movesReady || m.Index >= len(w.due) {
		return "?"
	}
	return w.eventLabel(&w.due[m.Index])
}

// Independent reports whether a and b commute from any state where both are
// possible: each touches one client node alone, and not the same one. A
// holder's step reads and writes only its own node, its own machine and its
// own history operations (appends commute: the digest takes the history as
// a multiset, state.go), and sends messages whose delivery is a later event
// of its own; so two steps of different holders at one instant lead to the
// same state in either order, and neither disables the other.
func (a Move) Independent(b Move) bool {
	return a.Node >= 0 && b.Node >= 0 && a.Node != b.Node
}

// Step runs the next move and reports whether the run goes on. A seeded run
// takes the next event; an enumerable run asks its Picker which move.
func (w *World) Step() bool {
	if w.pick == nil {
		return w.stepSeeded()
	}
	ms := w.Moves()
	if len(ms) == 0 {
		return false
	}
	k := 0
	if len(ms) > 1 {
		k = w.pick.Pick(len(ms), "next")
	}
	if w.replayFailed() {
		return false
	}
	w.Do(k)
	return !w.replayFailed()
}

func (w *World) replayFailed() bool {
	if w.replay != nil && w.replay.err != nil {
		w.fail("%v", w.replay.err)
	}
	if w.err != nil {
		w.end()
		return true
	}
	return false
}

// Over reports whether the run has ended.
func (w *World) Over() bool { return w.ended }

func (w *World) end() {
	if !w.ended {
		w.ended = true
		w.stats.End = w.now
	}
}

func (w *World) stepSeeded() bool {
	if w.ended {
		return false
	}
	if len(w.q.ev) == 0 {
		w.end()
		return false
	}
	if w.stats.Events >= w.maxEv {
		w.stats.Truncated = true
		w.end()
		return false
	}
	e := w.q.pop()
	if e.t > w.sc.Horizon {
		w.end()
		return false
	}
	if w.sc.Network.ShuffleTies {
		e = w.shuffleTie(e)
	}
	w.steps++
	w.run(e)
	if w.allDone() {
		w.end()
		return false
	}
	return true
}

// shuffleTie draws which of the events due at e's instant runs first; the
// others wait with their order kept.
func (w *World) shuffleTie(e event) event {
	if len(w.q.ev) == 0 || w.q.ev[0].t != e.t {
		return e
	}
	due := append(w.due[:0], e)
	for len(w.q.ev) > 0 && w.q.ev[0].t == e.t {
		due = append(due, w.q.pop())
	}
	k := int(w.ch.Int64(0, int64(len(due)-1), "order"))
	e = due[k]
	for i := range due {
		if i != k {
			w.q.pushKeep(due[i])
		}
	}
	w.due = due[:0]
	return e
}

// run runs one event at its instant.
func (w *World) run(e event) {
	w.now = e.t
	w.stats.Events++
	if !w.opts.NoRunHash {
		w.mix(e.t, int64(e.kind), int64(e.node), int64(e.arg))
	}
	switch e.kind {
	case evDeliver:
		w.deliver(e.arg)
	case evWake:
		n := &w.nodes[e.node]
		if e.gen != n.gen || n.crashed || n.paused > 0 {
			return
		}
		if n.kind == kindClient {
			w.clientWake(e.node)
			return
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
}

// stale reports whether e is a wake-up that will do nothing: superseded by
// a later one, or for a node that is crashed or stopped (a restart or a
// resume schedules it anew).
func (w *World) stale(e *event) bool {
	if e.kind != evWake {
		return false
	}
	n := &w.nodes[e.node]
	return e.gen != n.gen || n.crashed || n.paused > 0
}

// Moves returns the moves of an enumerable run's next step, in the order of
// its "next" choice point (alternative 0 is the seeded run's default: the
// event scheduled first). Empty when the run is over. The slice is reused by
// the next call.
func (w *World) Moves() []Move {
	if w.ended {
		return nil
	}
	if w.movesReady {
		return w.moves
	}
	if w.stepLimit > 0 && w.steps >= w.stepLimit {
		w.stats.Truncated = true
		w.end()
		return nil
	}
	if w.steps > 0 && w.allDone() {
		w.end()
		return nil
	}
	// Stale wake-ups are no moves at all: drop them.
	for len(w.q.ev) > 0 && w.stale(&w.q.ev[0]) {
		w.q.pop()
		w.stats.Events++
	}
	if len(w.q.ev) == 0 || w.q.ev[0].t > w.sc.Horizon {
		w.end()
		return nil
	}
	if w.stats.Events >= w.maxEv {
		w.stats.Truncated = true
		w.end()
		return nil
	}
	t := w.q.ev[0].t
	w.due = w.due[:0]
	for len(w.q.ev) > 0 && w.q.ev[0].t == t {
		e := w.q.pop()
		if w.stale(&e) {
			w.stats.Events++
			continue
		}
		w.due = append(w.due, e)
	}
	w.moves = w.moves[:0]
	for i := range w.due {
		e := &w.due[i]
		w.moves = append(w.moves, Move{Kind: MoveEvent, Index: i, Seq: e.seq, Node: w.footprint(e)})
	}
	if w.faultsLeft > 0 {
		for i := range w.candidates {
			if w.canStrike(&w.candidates[i]) {
				w.moves = append(w.moves, Move{Kind: MoveFault, Index: i, Node: -1})
			}
		}
	}
	if w.advLeft > 0 && w.advID >= 0 && w.nodes[w.advID].client.idle() {
		for i := range w.menu {
			if _, ok := w.resolve(w.advID, w.menu[i]); ok {
				w.moves = append(w.moves, Move{Kind: MoveClient, Index: i, Node: -1})
			}
		}
	}
	w.movesReady = true
	return w.moves
}

// Do runs move k of Moves.
func (w *World) Do(k int) {
	if !w.movesReady {
		w.Moves()
	}
	m := w.moves[k]
	w.movesReady = false
	w.steps++
	switch m.Kind {
	case MoveEvent:
		e := w.due[m.Index]
		w.requeueDue(m.Index)
		w.run(e)
	case MoveFault:
		w.requeueDue(-1)
		w.strike(m.Index)
	case MoveClient:
		w.requeueDue(-1)
		w.advLeft--
		w.clientSend(w.advID, w.menu[m.Index])
	}
}

// requeueDue puts the due events back in the queue, but the one at skip,
// keeping their order.
func (w *World) requeueDue(skip int) {
	for i := range w.due {
		if i != skip {
			w.q.pushKeep(w.due[i])
		}
	}
	w.due = w.due[:0]
}

// footprint is the client node an event touches alone, or -1 (see Move).
func (w *World) footprint(e *event) int32 {
	var id int32
	switch e.kind {
	case evDeliver:
		id = w.msgs[e.arg].to
	case evWake, evResume, evUnfreeze:
		id = e.node
		if w.nodes[id].kind == kindClient && e.kind == evWake {
			return -1 // a client aims its request by what it reads of the others
		}
	default:
		return -1
	}
	switch w.nodes[id].kind {
	case kindHolder, kindReader, kindClient:
		return id
	}
	return -1
}

func (w *World) eventLabel(e *event) string {
	switch e.kind {
	case evDeliver:
		m := &w.msgs[e.arg]
		if m.isReply {
			return fmt.Sprintf("t=%d %s gets the answer to %s", e.t, w.nodes[m.to].name, m.req.Kind)
		}
		return fmt.Sprintf("t=%d %s gets %s's %s", e.t, w.nodes[m.to].name, w.nodes[m.from].name, m.req.Kind)
	case evWake:
		return fmt.Sprintf("t=%d %s wakes", e.t, w.nodes[e.node].name)
	case evFault:
		return fmt.Sprintf("t=%d %s", e.t, w.plan[e.arg])
	case evFaultEnd:
		return fmt.Sprintf("t=%d end of %s", e.t, w.plan[e.arg])
	case evResume:
		return fmt.Sprintf("t=%d %s resumes", e.t, w.nodes[e.node].name)
	case evUnfreeze:
		return fmt.Sprintf("t=%d %s unfreezes", e.t, w.nodes[e.node].name)
	case evRestart:
		return fmt.Sprintf("t=%d %s restarts", e.t, w.plan[e.arg].Target)
	}
	return fmt.Sprintf("t=%d event %d", e.t, e.kind)
}

func (w *World) allDone() bool {
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

// schedule arranges a wake-up at true time t.
func (w *World) schedule(id int32, t int64) {
	n := &w.nodes[id]
	n.gen++
	w.q.push(event{t: t, kind: evWake, node: id, gen: n.gen})
}

// scheduleLocal arranges a wake-up when the node's clock reads local.
func (w *World) scheduleLocal(id int32, local int64) {
	n := w.nodeW(id)
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

// step runs a client machine on a reply (env != nil) or a tick.
func (w *World) step(id int32, env *envelope) {
	n := w.nodeW(id)
	local := n.clock.Mono(w.now)
	m := w.holderW(n)
	if wu, ok := m.(machine.WallClockUser); ok {
		wu.SetWall(n.clock.Wall(w.now))
	}
	if env != nil {
		if m.Receive(local, env.rep) {
			if w.superseded(n, env.op) {
				// A machine that takes an answer to a request it gave up on
				// (a later one of its own is in the history): the process
				// moved on, so the history keeps the request unanswered and
				// a process's operations sequential; what the machine
				// believes from the answer is in its beliefs, judged there.
				w.trace1(n.name, "took a late answer", fmt.Sprintf("to its %s #%d, after a later request of its own", w.ops.at(int(env.op)).Kind, env.rep.ID))
			} else {
				w.recordReturn(env.op, &env.rep)
			}
		}
	} else {
		m.Tick(local)
	}
	rd := m.Ready()
	send, wake := rd.Send, rd.WakeAt
	if n.kind == kindHolder {
		if rd.Done && !n.done {
			w.noteDone(id)
		}
		n.waiting, n.done = rd.Waiting, rd.Done
		if rd.Believes != n.believes || (rd.Believes && rd.Fence != n.fence) {
			w.setBelief(id, rd.Believes, rd.Fence)
		}
	}
	// The pause hits at the holder's next write, between the re-check and the
	// send (faultsupport.ArmedPause).
	pause := n.armed.Strike(w.now, w.sc.TTL, send)
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
		if w.tracing() {
			w.trace1(n.name, "paused", fmt.Sprintf("for %dms", pause))
		}
		w.record(n, faults.Fault{Kind: faults.Pause, Target: n.name}, w.now, pause, "paused between its check and its send")
		w.faultPairs(faults.Pause, id)
		w.openStop(id, "pause")
		n.paused++
		w.q.push(event{t: w.now + pause, kind: evResume, node: id, gen: uint64(n.inc)})
	}
}

// superseded reports whether op, answered to node n, already returned or
// was followed by another operation of n's process: the answer is not the
// return of the process's operation in progress.
func (w *World) superseded(n *node, op int32) bool {
	if op < 0 {
		return false
	}
	if w.ops.at(int(op)).Returned {
		return true
	}
	for i := int(op) + 1; i < w.ops.len(); i++ {
		if w.ops.at(i).Process == n.process {
			return true
		}
	}
	return false
}

// Nodes returns how many nodes the world has (servers, holders, the reader,
// clients).
func (w *World) Nodes() int { return len(w.nodes) }

// MoveNode returns the node an event move runs on — a delivery's
// destination, a wake-up's or a resume's node, a fault's target — or -1
// for a fault or request move (PCT's chains).
func (w *World) MoveNode(m Move) int32 {
	if m.Kind != MoveEvent || !w.movesReady || m.Index >= len(w.due) {
		return -1
	}
	e := &w.due[m.Index]
	switch e.kind {
	case evDeliver:
		return w.msgs[e.arg].to
	case evFault, evFaultEnd, evRestart:
		return w.id(w.plan[e.arg].Target)
	}
	return e.node
}
