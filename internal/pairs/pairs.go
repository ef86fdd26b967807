package pairs

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/model"
)

// Fault is one fault factor: a fault kind of the plan (the simulator's
// kinds but clock-offset), or one of the network's own faults, seen on one
// message: a message lost (one leg of a round trip), the two legs of one
// round trip delayed unequally, or a message delivered past its sender's
// request timeout.
type Fault uint8

// The network's fault factors, after the plan's kinds (Kinds).
const (
	// Lost: a message lost on the network (not by a partition or a
	// drop-heartbeats window: those are the plan's faults).
	Lost Fault = numPlanKinds + iota
	// Uneven: a reply whose leg took longer or shorter than its request's.
	Uneven
	// Late: a message delivered more than its sender's request timeout
	// after it was sent (a request applied after its sender gave up on it,
	// or an answer its sender stopped waiting for).
	Late
	numFaults
)

// numPlanKinds is len(planKinds), a constant so that a Set is an array
// (TestPlanKinds holds them equal).
const numPlanKinds = 13

// planKinds are the plan's fault kinds that are factors: every kind the
// simulator injects but clock-offset, which holds from the start (nothing
// is in flight then) and does not move the monotonic clock leases are
// measured on; the explorer does not strike it either.
var planKinds = func() []faults.Kind {
	var ks []faults.Kind
	for _, k := range faults.AllKinds {
		if k != faults.ClockOffset {
			ks = append(ks, k)
		}
	}
	return ks
}()

// FaultOf returns the factor of a plan's fault kind, ok false for one
// that is not a factor (clock-offset, the cluster and client kinds).
func FaultOf(k faults.Kind) (Fault, bool) {
	i := slices.Index(planKinds, k)
	return Fault(i), i >= 0
}

func (f Fault) String() string {
	switch {
	case int(f) < len(planKinds):
		return string(planKinds[f])
	case f == Lost:
		return "lost-message"
	case f == Uneven:
		return "uneven-legs"
	case f == Late:
		return "late-message"
	}
	return fmt.Sprintf("Fault(%d)", uint8(f))
}

// Step is a protocol step in flight: an operation's request on its way to
// the server (sent: produced, not yet applied — also while a paused
// sender holds it) or its answer on its way back (applied: the server
// applied it, the answer has not been handled yet).
type Step uint8

// Ops are the operations a step is of, in the order tables print them.
var Ops = []model.Kind{model.Acquire, model.Renew, model.Release, model.Write, model.Read}

// StepOf returns the step of op kind k, applied or sent.
func StepOf(k model.Kind, applied bool) Step {
	i := slices.Index(Ops, k)
	if i < 0 {
		i = 0
	}
	s := Step(2 * i)
	if applied {
		s++
	}
	return s
}

const numSteps = Step(10)

func (s Step) String() string {
	phase := "sent"
	if s%2 == 1 {
		phase = "applied"
	}
	return Ops[s/2].String() + " " + phase
}

// Workload is one workload dimension a run's faults meet.
type Workload uint8

// The workload dimensions.
const (
	// MultiWrite: a holder writes twice or more under one grant.
	MultiWrite Workload = iota
	// ShortRenew: a holder renews every quarter TTL or more often.
	ShortRenew
	// LongRenew: a holder renews every half TTL or less often.
	LongRenew
	// Retry: a holder sent a request while the outcome of its previous
	// one was still unknown (it gave up waiting for the answer).
	Retry
	// Reader: a reader reads the key beside the holders.
	Reader
	numWorkloads
)

func (d Workload) String() string {
	return [...]string{"writes-per-grant", "short-renew", "long-renew", "retry-after-unknown", "reader"}[d]
}

// The pair index space: fault × step, then fault × fault (ordered, the
// smaller first), then fault × workload.
const (
	offStep     = 0
	offFault    = offStep + int(numFaults)*int(numSteps)
	offWorkload = offFault + int(numFaults)*int(numFaults)
	numPairs    = offWorkload + int(numFaults)*int(numWorkloads)
)

// Set is a set of pairs: a value (copied with the simulator's world).
type Set [(numPairs + 63) / 64]uint64

func (s *Set) set(i int) { s[i/64] |= 1 << (i % 64) }

// Has reports whether pair i is in s.
func (s *Set) Has(i int) bool { return s[i/64]&(1<<(i%64)) != 0 }

// Step adds fault f × step st.
func (s *Set) Step(f Fault, st Step) { s.set(offStep + int(f)*int(numSteps) + int(st)) }

// Faults adds fault f × fault g (f != g).
func (s *Set) Faults(f, g Fault) {
	if f == g {
		return
	}
	if g < f {
		f, g = g, f
	}
	s.set(offFault + int(f)*int(numFaults) + int(g))
}

// Workload adds fault f × workload d.
func (s *Set) Workload(f Fault, d Workload) {
	s.set(offWorkload + int(f)*int(numWorkloads) + int(d))
}

// Union adds t's pairs to s.
func (s *Set) Union(t *Set) {
	for i := range s {
		s[i] |= t[i]
	}
}

// Sink gathers sets from many runs at once (the explorer's workers): the
// union does not depend on the order they arrive in.
type Sink struct{ w [len(Set{})]atomic.Uint64 }

// Add adds t's pairs.
func (k *Sink) Add(t *Set) {
	for i := range t {
		if t[i] != 0 && k.w[i].Load()|t[i] != k.w[i].Load() {
			k.w[i].Or(t[i])
		}
	}
}

// Set returns the pairs gathered so far.
func (k *Sink) Set() Set {
	var s Set
	for i := range s {
		s[i] = k.w[i].Load()
	}
	return s
}

// Pair is one pair of the model.
type Pair struct {
	Class string `json:"class"` // "fault × step", "fault × fault" or "fault × workload"
	A     string `json:"a"`
	B     string `json:"b"`
	index int
}

func (p Pair) String() string { return p.A + " × " + p.B }

// Classes of pairs, in the order tables print them.
const (
	ClassStep     = "fault × step in flight"
	ClassFault    = "fault × fault"
	ClassWorkload = "fault × workload"
)

// AllFaults lists the fault factors, in the order tables print them.
func AllFaults() []Fault {
	out := make([]Fault, numFaults)
	for i := range out {
		out[i] = Fault(i)
	}
	return out
}

// holderOps are the operations a holder makes: a fault that strikes a
// holder meets one of them in flight, never a read (the reader is no
// fault's target).
var holderOps = []model.Kind{model.Acquire, model.Renew, model.Release, model.Write}

// Required lists the pairs of the model, in table order: every fault
// factor against every step it can meet in flight (a fault on a holder
// meets the holder's acquire, renew, release and write — a pause only
// as they are sent; a coordinator crash and the network's faults also
// a read), every two fault factors, and every fault factor against every
// workload dimension.
func Required() []Pair {
	var out []Pair
	for _, f := range AllFaults() {
		ops := holderOps
		if f == coordinatorCrash || f >= Lost {
			ops = Ops
		}
		for _, k := range ops {
			for _, applied := range []bool{false, true} {
				if f == pause && applied {
					// A pause strikes between the holder's check and its
					// send: the step it interrupts is the one it sends.
					// An answer on its way meanwhile is one to a request
					// the holder gave up on (its single request in
					// flight is the one it sends); a holder stopped with
					// an answer in flight is freeze × applied.
					continue
				}
				st := StepOf(k, applied)
				out = append(out, Pair{Class: ClassStep, A: f.String(), B: st.String(), index: offStep + int(f)*int(numSteps) + int(st)})
			}
		}
	}
	for _, f := range AllFaults() {
		for _, g := range AllFaults()[f+1:] {
			out = append(out, Pair{Class: ClassFault, A: f.String(), B: g.String(), index: offFault + int(f)*int(numFaults) + int(g)})
		}
	}
	for _, f := range AllFaults() {
		for d := Workload(0); d < numWorkloads; d++ {
			out = append(out, Pair{Class: ClassWorkload, A: f.String(), B: d.String(), index: offWorkload + int(f)*int(numWorkloads) + int(d)})
		}
	}
	return out
}

var (
	coordinatorCrash, _ = FaultOf(faults.CoordinatorCrash)
	pause, _            = FaultOf(faults.Pause)
)

// Report is a set of pairs judged against the model.
type Report struct {
	// Over says what reached them ("seeds 1-2000", "the default plan").
	Over      string `json:"over"`
	Required  int    `json:"required"`
	Reached   int    `json:"reached"`
	Unreached []Pair `json:"unreached"`
	// Classes counts each class's pairs: required and reached.
	Classes []ClassCount `json:"classes"`
	set     Set
}

// ClassCount is one class's count.
type ClassCount struct {
	Class    string `json:"class"`
	Required int    `json:"required"`
	Reached  int    `json:"reached"`
}

// Judge judges s against the model.
func Judge(s Set, over string) *Report {
	r := &Report{Over: over, Unreached: []Pair{}, set: s}
	for _, p := range Required() {
		if len(r.Classes) == 0 || r.Classes[len(r.Classes)-1].Class != p.Class {
			r.Classes = append(r.Classes, ClassCount{Class: p.Class})
		}
		c := &r.Classes[len(r.Classes)-1]
		c.Required++
		r.Required++
		if s.Has(p.index) {
			c.Reached++
			r.Reached++
		} else {
			r.Unreached = append(r.Unreached, p)
		}
	}
	return r
}

// Complete reports whether every pair of the model was reached.
func (r *Report) Complete() bool { return len(r.Unreached) == 0 }

// Summary is the report in one line.
func (r *Report) Summary() string {
	parts := make([]string, len(r.Classes))
	for i, c := range r.Classes {
		parts[i] = fmt.Sprintf("%s %d/%d", c.Class, c.Reached, c.Required)
	}
	return fmt.Sprintf("%d of %d pairs reached over %s (%s)", r.Reached, r.Required, r.Over, strings.Join(parts, ", "))
}

// Print renders the table: the summary, the pairs never reached first,
// then each class's grid (+ reached, - never reached, blank: not a pair of
// the model).
func (r *Report) Print(w io.Writer) {
	fmt.Fprintf(w, "pairs: %s\n", r.Summary())
	if len(r.Unreached) > 0 {
		fmt.Fprintf(w, "never reached (%d):\n", len(r.Unreached))
		for _, p := range r.Unreached {
			fmt.Fprintf(w, "  %-24s %s\n", p.Class, p)
		}
	} else {
		fmt.Fprintln(w, "never reached: none")
	}
	req := map[int]bool{}
	for _, p := range Required() {
		req[p.index] = true
	}
	mark := func(i int) string {
		switch {
		case i < 0 || !req[i]:
			return " "
		case r.set.Has(i):
			return "+"
		}
		return "-"
	}
	fs := AllFaults()
	grid := func(title string, cols []string, idx func(f Fault, c int) int) {
		fmt.Fprintf(w, "\n%s\n", title)
		fmt.Fprintf(w, "  %-18s", "")
		for c := range cols {
			fmt.Fprintf(w, " %2d", c+1)
		}
		fmt.Fprintln(w)
		for _, f := range fs {
			fmt.Fprintf(w, "  %-18s", f)
			for c := range cols {
				fmt.Fprintf(w, "  %s", mark(idx(f, c)))
			}
			fmt.Fprintln(w)
		}
		for c, name := range cols {
			fmt.Fprintf(w, "  %2d %s\n", c+1, name)
		}
	}
	var steps, names, dims []string
	for st := Step(0); st < numSteps; st++ {
		steps = append(steps, st.String())
	}
	for _, f := range fs {
		names = append(names, f.String())
	}
	for d := Workload(0); d < numWorkloads; d++ {
		dims = append(dims, d.String())
	}
	grid(ClassStep+" (columns: the step)", steps, func(f Fault, c int) int { return offStep + int(f)*int(numSteps) + c })
	grid(ClassFault+" (columns: the second fault)", names, func(f Fault, c int) int {
		a, b := int(f), c
		if b < a {
			a, b = b, a
		}
		if a == b {
			return -1
		}
		return offFault + a*int(numFaults) + b
	})
	grid(ClassWorkload+" (columns: the workload dimension)", dims, func(f Fault, c int) int { return offWorkload + int(f)*int(numWorkloads) + c })
}
