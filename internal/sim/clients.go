package sim

// The adversarial clients (scenario.Client, docs/design.md §7): a scenario's
// programmed clients and the explorer's (scenario.Space.Adversary), which
// sends a request of scenario.AdversaryMenu at any step. Each is one
// sequential process: it waits for an answer, or gives up after TTL/3,
// before sending again. What a request presents is worked out when it is
// sent, under the threat model of scenario.Client.

import (
	"slices"
	"strconv"

	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

type client struct {
	program []scenario.ClientRequest // read-only, shared by copies
	next    int                      // the next program request
	out     bool                     // a request in flight
	outID   uint64
	outOp   int32
	outKind model.Kind
	outO    string // the owner the request in flight claimed
	outF    int64  // the fence it presented
	until   int64
	nextID  uint64
	// banned are the owner and fence pairs this client must not write
	// under: its renews, as whoever it claimed to be, that failed or went
	// unanswered (the iron rule binds a process's later writes, whatever it
	// claims; its own grant lifts its own bans).
	banned    []ownerFence
	lastGrant int64
	// waitFor is the coordinator event ("grant", "release") the next
	// program request waits for, once its time has come; "" none. fired
	// says it happened: the request goes out at the client's next wake.
	waitFor string
	fired   bool
	// acquired is when the answer granting the client's latest acquire
	// arrived (-1: its latest acquire was not granted), for requests
	// "after acquired".
	acquired int64
}

type ownerFence struct {
	owner string
	fence int64
}

func (c *client) idle() bool { return !c.out }

// cloneInto copies c into spare (nil: a new client), reusing its
// buffer; spare must be out of use.
func (c *client) cloneInto(spare *client) *client {
	d := spare
	var banned []ownerFence
	if d == nil {
		d = new(client)
	} else {
		banned = d.banned[:0]
	}
	*d = *c
	d.banned = append(banned, c.banned...)
	return d
}

func (c *client) ban(owner string, f int64) {
	if of := (ownerFence{owner, f}); f > 0 && !slices.Contains(c.banned, of) {
		c.banned = append(c.banned, of)
	}
}

func (w *World) clientTimeout() int64 { return max(w.sc.TTL/3, 1) }

// clientWake gives up on an answer overdue and sends the program's next
// request when its time has come.
func (w *World) clientWake(id int32) {
	n := &w.nodes[id]
	c := n.client
	if c.out && w.now >= c.until {
		c.out = false // unanswered: its outcome stays unknown
		if c.outKind == model.Renew {
			c.ban(c.outO, c.outF)
		}
		if c.outKind == model.Acquire {
			c.acquired = -1
		}
	}
	for !c.out && c.waitFor == "" && c.next < len(c.program) && c.program[c.next].At <= w.now {
		r := c.program[c.next]
		if r.After == "acquired" {
			if c.acquired < 0 {
				c.next++
				if w.tracing() {
					w.trace1(n.process, "skips", r.String()+": its acquire was not granted")
				}
				continue
			}
			if w.now < c.acquired+r.Delay {
				break // clientReschedule wakes it then
			}
			c.next++
			w.clientSend(id, r)
			continue
		}
		if r.After != "" && !c.fired {
			c.waitFor = r.After // sent when the coordinator next does it
			break
		}
		c.next++
		c.fired = false
		w.clientSend(id, r)
	}
	w.clientReschedule(id)
}

// clientsSee tells the programmed clients waiting for a coordinator event
// that it happened: their request goes out at once, in a wake-up of their
// own at this instant.
func (w *World) clientsSee(what string) {
	for i := range w.nodes {
		n := &w.nodes[i]
		if n.kind != kindClient || n.crashed || n.client.waitFor != what {
			continue
		}
		n.client.waitFor, n.client.fired = "", true
		w.schedule(int32(i), w.now) // its own event: the coordinator's step is not reentered
	}
}

func (w *World) clientReschedule(id int32) {
	c := w.nodes[id].client
	switch {
	case c.out:
		w.schedule(id, c.until)
	case c.waitFor != "":
		w.nodes[id].gen++ // clientsSee sends it
	case c.next < len(c.program):
		at := c.program[c.next].At
		if r := &c.program[c.next]; r.After == "acquired" && c.acquired >= 0 {
			at = max(at, c.acquired+r.Delay)
		}
		w.schedule(id, max(at, w.now))
	default:
		w.nodes[id].gen++
	}
}

// clientSend sends r now, or says in the trace why the threat model skips it.
func (w *World) clientSend(id int32, r scenario.ClientRequest) {
	n := &w.nodes[id]
	c := n.client
	req, ok := w.resolve(id, r)
	if !ok {
		if w.tracing() {
			w.trace1(n.process, "skips", r.String())
		}
		return
	}
	c.nextID++
	req.ID = c.nextID
	if req.Kind == model.Write {
		req.Value = n.process + ":a" + strconv.FormatUint(c.nextID, 10)
	}
	m := w.newRequest(id, &req)
	c.out, c.outID, c.outOp, c.outKind, c.outO, c.outF = true, req.ID, w.msgs[m].op, req.Kind, req.Owner, req.Fence
	if req.Kind == model.Renew && req.Fence == 0 {
		c.outF = c.lastGrant
	}
	c.until = w.now + w.clientTimeout()
	if w.tracing() {
		w.trace1(n.process, "sends", r.String()+" as "+req.Owner+" fence="+strconv.FormatInt(req.Fence, 10))
	}
	w.send(m)
	w.clientReschedule(id)
}

func (w *World) clientReceive(id int32, env *envelope) {
	c := w.nodes[id].client
	if !c.out || env.rep.ID != c.outID || env.inc != w.nodes[id].inc {
		return
	}
	c.out = false
	w.recordReturn(env.op, &env.rep)
	if c.outKind == model.Acquire {
		c.acquired = -1
		if env.rep.OK && env.req.Owner == w.nodes[id].owner {
			c.acquired = w.now
		}
	}
	switch {
	case c.outKind == model.Renew && !env.rep.OK:
		c.ban(c.outO, c.outF)
	case c.outKind == model.Acquire && env.rep.OK:
		self := w.nodes[id].owner
		if env.req.Owner == self {
			c.lastGrant = env.rep.Fence
		}
		c.banned = slices.DeleteFunc(c.banned, func(of ownerFence) bool { return of.owner == env.req.Owner })
	}
	w.clientReschedule(id)
}

// isClientProcess reports whether an op's process is an adversarial client.
func (w *World) isClientProcess(p string) bool {
	for i := range w.nodes {
		if w.nodes[i].kind == kindClient && w.nodes[i].process == p {
			return true
		}
	}
	return false
}

// lastHolderOp returns the latest op of kind k a holder sent, claiming
// owner (any owner when ""), or nil.
func (w *World) lastHolderOp(k model.Kind, owner string) *model.Op {
	for i := w.ops.len() - 1; i >= 0; i-- {
		o := w.ops.at(i)
		if o.Kind == k && (owner == "" || o.Owner == owner) && !w.isClientProcess(o.Process) {
			return o
		}
	}
	return nil
}

// renewFailed reports whether a renew by owner presenting fence f (or
// presenting none while f was owner's latest grant) has returned refused.
func (w *World) renewFailed(owner string, f int64) bool {
	var latest int64
	for i := range w.ops.len() {
		o := w.ops.at(i)
		if o.Owner != owner {
			continue
		}
		if o.Kind == model.Acquire && o.Returned && o.OK {
			latest = max(latest, o.Fence)
		}
		if o.Kind == model.Renew && o.Returned && !o.OK && (o.Fence == f || o.Fence == 0 && latest == f) {
			return true
		}
	}
	return false
}

// resolve works out what r presents now: its owner and fence, under the
// threat model of scenario.Client. ok is false when r cannot be sent now
// (nobody holds the lease for "live", no fence is stale yet, the rule
// forbids it).
func (w *World) resolve(id int32, r scenario.ClientRequest) (req machine.Request, ok bool) {
	n := &w.nodes[id]
	c := n.client
	kind, _ := model.ParseKind(r.Op)
	req = machine.Request{Kind: kind, Key: w.sc.Key}
	switch r.Owner {
	case "":
		req.Owner = n.owner
	case "live":
		if req.Owner = w.meter.Owner(); req.Owner == "" {
			return req, false
		}
	case "last":
		o := w.lastHolderOp(kind, "")
		if o == nil {
			return req, false
		}
		req.Owner = o.Owner
	default:
		req.Owner = r.Owner
	}
	self := req.Owner == n.owner
	switch kind {
	case model.Acquire, model.Renew:
		req.TTL = w.sc.TTL
	}
	if kind == model.Write && w.fenced {
		req.To = machine.ToResource
	}
	switch r.FenceSpec() {
	case "current":
		req.Fence = w.granted
	case "stale":
		if kind == model.Write && w.fenced {
			req.Fence = w.resHighest - 1 // the resource refuses it, as it must
		} else {
			req.Fence = w.granted - 1
		}
		if req.Fence < 1 {
			return req, false
		}
	case "future":
		req.Fence = w.granted + 1
		if !self {
			req.Fence = w.granted + 1000 // never granted in this run
		}
	case "replay":
		o := w.lastHolderOp(kind, req.Owner)
		if o == nil {
			return req, false
		}
		req.Fence = o.Fence
	}
	if (r.FenceSpec() == "current" || r.FenceSpec() == "future") && (req.Fence < 1 || kind == model.Write && w.fenced) {
		return req, false // a fence the resource has not seen is a grant's secret
	}
	if kind == model.Write {
		if slices.Contains(c.banned, ownerFence{req.Owner, req.Fence}) {
			return req, false // the iron rule
		}
		if !self && w.renewFailed(req.Owner, req.Fence) {
			return req, false // a duplicate would be judged as that owner breaking the iron rule
		}
	}
	return req, true
}
