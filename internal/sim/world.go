package sim

// The world's state (nodes, messages, the machines), Run and the setup of a
// scenario. The event loop is loop.go; the network network.go; fault
// injection inject.go; the adversarial clients clients.go; history and
// trace recording history.go; the liveness bookkeeping liveness.go; the
// trace hash hash.go; copying and digesting a state for the explorer
// state.go.

import (
	"fmt"
	"math"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/faultgen"
	"github.com/leasecheck/leasecheck/internal/faultsupport"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/internal/liveness"
	"github.com/leasecheck/leasecheck/internal/pairs"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/internal/statehash"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

// Options plug implementations and choosers into a run. The zero value (or
// nil) runs the reference coordinator, resource and holder with the
// scenario's seeded PRNG (or, for a scenario with a Space or a Schedule,
// with the schedule's recorded choices).
type Options struct {
	// Chooser replaces the seeded PRNG of the run (e.g. NewRapid). A
	// Chooser that is also a Picker makes the run enumerable (Picker).
	Chooser Chooser
	// NewCoordinator, NewResource and NewHolder build the machines under
	// test; nil means the reference ones.
	NewCoordinator func() machine.Coordinator
	NewResource    func() machine.Resource
	NewHolder      func(holder.Config) machine.Holder
	// NoTrace skips the human-readable trace (benchmarks, the explorer).
	NoTrace bool
	// NoRunHash skips the run's hash (Result.Hash is 0): the explorer
	// judges its states' Results and never compares two.
	NoRunHash bool
	// NoFaultCounts leaves Result.Stats.Faults and NotApplied nil: the
	// explorer judges its states' Results by properties that never read
	// them, and the two maps were half of what a judged state allocated.
	NoFaultCounts bool
	// Monitor, when set, watches the run as it happens (the explorer's
	// per-state property monitors); see Monitor.
	Monitor Monitor
	// Pairs, when set, gathers the pairs the run meets (Result.Pairs has
	// them too), also those of every copy of the world: the explorer's
	// union over a search.
	Pairs *pairs.Sink
}

type nodeKind uint8

const (
	kindCoordinator nodeKind = iota
	kindResource
	kindHolder
	kindReader
	kindClient
)

const (
	coordID int32 = 0
	resID   int32 = 1
)

type node struct {
	name    string
	kind    nodeKind
	clock   faultsupport.Clock
	paused  int
	crashed bool
	inc     int32
	process string
	owner   string
	m       machine.Holder // a holder or the reader
	cfg     int32          // kindHolder: its configuration, World.cfgs[cfg]
	start   int64
	told    int64 // the drift bound the holder was told (scenario.ToldRho)

	gen       uint64 // wake generation: a wake event with another gen is stale
	wakeLocal int64  // the local time the machine asked to be woken at
	inbox     []int32
	held      []int32                 // messages produced just before a pause
	armed     faultsupport.ArmedPause // the pauses dealt and not struck yet
	believes  bool
	fence     int64
	belief    int32 // index of the open Belief span, -1 none
	stop      int32 // index of the open Stop span (pause), -1 none
	freeze    int32 // index of the open Stop span (freeze), -1 none
	freezes   int   // freezes nested in it
	waiting   bool
	done      bool
	nextInc   int32

	cutCoord, cutRes int
	dropRenew        int
	extraDelay       int64

	client *client // kindClient: the adversarial client's state

	// mEpoch is the machine epoch m was copied in (machines.go); mh is m's
	// kept digest, 0 when not kept.
	mEpoch uint64
	mh     uint64
	// hd is the kept digest of the node's own fields (nodeCore), 0 when not
	// kept; nodeW drops it.
	hd uint64
}

type envelope struct {
	from, to int32
	inc      int32 // the client's incarnation
	isReply  bool
	dup      bool  // a duplicate exists: answer from the at-most-once cache
	op       int32 // history op index, -1 none
	req      machine.Request
	rep      machine.Reply
	// sentAt and leg are when the request was sent and the delay its leg
	// took: for the pairs (sim/pairs.go) only, outside the digest.
	sentAt, leg int64
	// h caches the digest of the fields above but op's (whose operation
	// may change while the message is in flight); 0: not computed. Every
	// write to an envelope's fields resets it.
	h uint64
}

// World is one run in progress. Run drives it to the end; the explorer
// (package explore) steps it itself, one move at a time, and copies and
// digests it (state.go). A World is not safe for concurrent use.
type World struct {
	sc     *scenario.Scenario
	opts   Options
	ch     Chooser
	pick   Picker // set when the run is enumerable
	replay *replay
	q      queue
	now    int64
	nodes  []node
	msgs   []envelope
	free   []int32
	plan   faults.Plan     // the scenario's faults, then those struck by a move
	cfgs   []holder.Config // the holders' configurations (read-only, shared by copies)
	pairs  pairState

	coord  machine.Coordinator
	res    machine.Resource
	fenced bool
	dedupe map[dedupeKey]machine.Reply
	// dedupeSum is the sum of the cache's entries' digests (hashDedupe).
	dedupeSum uint64
	ops       opLog // the history's operations (oplog.go)

	// the machines' copy-on-write epochs and kept digests (machines.go)
	mcow                 cow
	coordEpoch, resEpoch uint64
	coordH, resH         uint64
	mhasher              statehash.Hasher
	verifyDigests        bool
	// spanSum is the sum of the belief and stop spans' digests, kept as
	// they open and close while hashing (liveness.go): the state digest
	// read them all at every state.
	spanSum uint64

	// faultRecs are the faults' records for the history, in the order they
	// struck
	faultRecs []model.FaultRecord
	u         int64
	trace     []TraceEvent
	stats     Stats
	counts    [2][16]int // faults injected / not applied, by faults.AllKinds index
	hash      uint64
	restarts  int // restarts pending
	maxEv     int64

	// meter follows the coordinator's lease (its owner, for the
	// adversarial clients too) and measures recovery and handoff
	meter      liveness.Meter
	believers  int
	dblSince   int64
	granted    int64 // the highest fence the coordinator granted
	resHighest int64 // the highest fence the resource accepted
	beliefs    []Belief
	stops      []Stop
	// beliefChanges counts the belief changes so far (Believers' version)
	beliefChanges int

	// enumerable runs (scenario.Space)
	candidates []faults.Fault
	menu       []scenario.ClientRequest
	faultsLeft int
	advLeft    int
	devLeft    int
	advID      int32 // the explorer's adversarial client node, -1 none
	hasClients bool  // programmed clients exist
	steps      int
	stepLimit  int
	moves      []Move
	movesReady bool
	due        []event // the events due at the next instant, while moves are offered
	ended      bool

	cloneable int8 // CanClone's answer for the machines: 0 not asked yet, 1 yes, 2 no

	hashing bool             // keep opSum (the explorer's state digest)
	hasher  statehash.Hasher // stateHash's, kept: a fresh one per digest escaped to the heap
	// opHash is each op's digest and opSum their sum, when hashing: a flat
	// slice copied whole (8 bytes an op), since every message's digest
	// reads its op's, and reading it from the op's chunk missed the cache.
	opHash []uint64
	opSum  uint64
	err    error
	mon    Monitor
}

// Run runs sc in the simulator and returns its history, trace and stats.
// It fails only when sc is invalid (or its schedule does not fit the run).
func Run(sc *scenario.Scenario, opts *Options) (*Result, error) {
	w, err := NewWorld(sc, opts)
	if err != nil {
		return nil, err
	}
	for w.Step() {
	}
	if w.err != nil {
		return nil, w.err
	}
	return w.Result(), nil
}

// NewWorld sets sc up for a run, at time 0 before any event: Step runs it.
func NewWorld(sc *scenario.Scenario, opts *Options) (*World, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	w := &World{sc: sc, dedupe: map[dedupeKey]machine.Reply{}, advID: -1}
	if opts != nil {
		w.opts = *opts
	}
	w.ch = w.opts.Chooser
	if w.ch == nil {
		if sc.Enumerable() {
			w.replay = &replay{}
			if sc.Schedule != nil {
				w.replay.cs, _ = sc.Schedule.Parse() // Validate parsed it
				w.stepLimit = sc.Schedule.Steps
			}
			w.ch = w.replay
		} else {
			w.ch = NewSeeded(sc.Seed, scenario.StreamRun)
		}
	}
	w.pick, _ = w.ch.(Picker)
	if w.pick != nil && sc.Space == nil {
		w.devLeft = math.MaxInt // an enumerating chooser without a Space: every choice point
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
	w.mon = w.opts.Monitor
	w.coord = w.opts.NewCoordinator()
	w.fenced = sc.Sem() == model.FencedStorage
	if w.fenced {
		w.res = w.opts.NewResource()
	}
	w.maxEv = sc.MaxEvents
	if w.maxEv == 0 {
		w.maxEv = scenario.DefaultMaxEvents
	}
	w.hash = 14695981039346656037
	if err := w.setup(); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *World) setup() error {
	sc := w.sc
	w.nodes = append(w.nodes, node{name: faults.Coordinator, kind: kindCoordinator, belief: -1, stop: -1, freeze: -1},
		node{name: faults.Resource, kind: kindResource, belief: -1, stop: -1, freeze: -1})
	w.plan = sc.Faults
	for i := range sc.Holders {
		p := &sc.Holders[i]
		told := sc.ToldRho(p)
		cfg := holder.Config{Key: sc.Key, Owner: p.Name, Name: p.Name, TTL: sc.TTL, RhoPPM: told,
			Fenced: w.fenced, Timeout: p.Timeout, RetryMax: p.RetryMax, Work: p.Work,
			RenewEvery: p.RenewEvery, Margin: p.Margin}
		w.cfgs = append(w.cfgs, cfg)
		n := node{name: p.Name, kind: kindHolder, cfg: int32(len(w.cfgs) - 1), start: p.Start, process: p.Name, owner: p.Name, nextInc: 2,
			told: told, belief: -1, stop: -1, freeze: -1}
		if p.DriftPPM != 0 {
			n.clock.SetDrift(0, p.DriftPPM)
		}
		w.nodes = append(w.nodes, n)
	}
	if sc.ReadEvery > 0 {
		w.nodes = append(w.nodes, node{name: "r1", kind: kindReader, process: "r1", owner: "r1", belief: -1, stop: -1, freeze: -1,
			m: &holder.Reader{Key: sc.Key, Owner: "r1", Every: sc.ReadEvery, Timeout: max(sc.TTL/3, 1), Fenced: w.fenced}})
	}
	w.hasClients = len(sc.Clients) > 0
	for i := range sc.Clients {
		c := &sc.Clients[i]
		w.nodes = append(w.nodes, node{name: c.Name, kind: kindClient, process: c.Name, owner: c.Name, belief: -1, stop: -1, freeze: -1,
			client: &client{program: c.Requests, acquired: -1}})
	}
	if sp := sc.Space; sp != nil {
		env := faultgen.Env{Horizon: sc.Horizon, TTL: sc.TTL, RhoPPM: sc.RhoPPM, Holders: sc.Names(), Fenced: w.fenced}
		w.candidates = faultgen.Candidates(env, sp.Faults)
		w.faultsLeft = sp.MaxFaults
		w.devLeft = sp.Deviations
		if sp.Adversary > 0 {
			w.menu = scenario.AdversaryMenu(w.fenced)
			w.advLeft = sp.Adversary
			w.advID = int32(len(w.nodes))
			w.nodes = append(w.nodes, node{name: scenario.AdversaryName, kind: kindClient, process: scenario.AdversaryName,
				owner: scenario.AdversaryName, belief: -1, stop: -1, freeze: -1, client: &client{acquired: -1}})
		}
	}
	if sc.CoordinatorDriftPPM != 0 {
		w.nodes[coordID].clock.SetDrift(0, sc.CoordinatorDriftPPM)
	}
	// Clock offsets hold from the start; the coordinator's offset and drift
	// bound how far its lease clock strays from true time: the history's
	// clock uncertainty.
	var coordOff int64
	coordPPM := max(sc.CoordinatorDriftPPM, -sc.CoordinatorDriftPPM)
	for i, f := range w.plan {
		if f.Kind == faults.ClockOffset {
			n := w.nodeByName(f.Target)
			n.clock.Offset(f.Amount)
			if f.Target == faults.Coordinator {
				coordOff += f.Amount
			}
		}
		if f.Kind == faults.ClockDrift && f.Target == faults.Coordinator {
			coordPPM = max(coordPPM, f.Amount, -f.Amount)
		}
		w.q.push(event{t: f.At, kind: evFault, arg: int32(i)})
	}
	if sc.Space != nil && containsKind(sc.Space.Faults, faults.ClockDrift) {
		coordPPM = max(coordPPM, sc.RhoPPM) // a drift may strike the coordinator at any step
	}
	w.u = max(coordOff, -coordOff) + (coordPPM*sc.Horizon+999_999)/1_000_000 + 1
	for i := range w.nodes {
		n := &w.nodes[i]
		switch n.kind {
		case kindHolder:
			n.m = w.opts.NewHolder(w.cfgs[n.cfg])
			w.schedule(int32(i), n.start)
		case kindReader:
			w.schedule(int32(i), 0)
		case kindClient:
			if len(n.client.program) > 0 {
				w.schedule(int32(i), n.client.program[0].At)
			}
		}
	}
	w.setupPairs()
	w.ownMachines()
	return nil
}

func containsKind(ks []faults.Kind, k faults.Kind) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

// nodeByName returns the named node for a write (nodeW).
func (w *World) nodeByName(name string) *node {
	return w.nodeW(w.id(name))
}

func (w *World) id(name string) int32 {
	for i := range w.nodes {
		if w.nodes[i].name == name {
			return int32(i)
		}
	}
	panic("sim: no node " + name) // Validate guarantees targets exist
}

// Scenario returns the scenario the world runs.
func (w *World) Scenario() *scenario.Scenario { return w.sc }

// Now returns the world's true time.
func (w *World) Now() int64 { return w.now }

// Steps returns how many moves the world has run.
func (w *World) Steps() int { return w.steps }

// Err returns why the run stopped early: its schedule did not fit it.
func (w *World) Err() error { return w.err }

func (w *World) fail(format string, args ...any) {
	if w.err == nil {
		w.err = fmt.Errorf(format, args...)
	}
}
