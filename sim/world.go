package sim

// The world's state (nodes, messages, the machines), Run and the setup of a
// scenario. The event loop is loop.go; the network network.go; fault
// injection inject.go; history and trace recording history.go; the liveness
// bookkeeping liveness.go; the trace hash hash.go.

import (
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
