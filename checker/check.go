package checker

import (
	"context"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/leasecheck/leasecheck/internal/timed"
	"github.com/leasecheck/leasecheck/internal/timefmt"
	"github.com/leasecheck/leasecheck/model"
)

// The stable property names (docs/specification.md §2). They appear in output, JSON and
// tests; never rename one.
const (
	Linearizable         = "linearizable"
	SingleWriterPerFence = "single-writer-per-fence"
	FenceMonotonic       = "fence-monotonic"
	StopOnRenewFailure   = "stop-on-renew-failure"
	// ExpiryLateness: the coordinator answered that a lease was live (refused
	// an acquire, accepted its holder's renew or write) later after its
	// expiry than the header's expiry_lateness allows, and nothing else is
	// wrong with the key: no one was granted a live lease (lateness.go).
	ExpiryLateness = "expiry-lateness"
	// StaleWrite: the fencing safety property, whatever token a write
	// presents — no write of a deposed holder's is accepted after a later
	// holder's write was (stale.go). "Later" is the coordinator's grant
	// order, by the grants' fences. Judged on every history with fences.
	StaleWrite = "stale-write"
)

// Properties returns the property names in the order they are reported: a
// new slice each time, so no caller can change what another sees.
func Properties() []string {
	return []string{Linearizable, SingleWriterPerFence, FenceMonotonic, StopOnRenewFailure, ExpiryLateness, StaleWrite}
}

// Verdict is a three-valued answer, as porcupine's CheckResult.
type Verdict int

const (
	Holds    Verdict = iota // the property holds
	Violated                // a counterexample was found
	Unknown                 // the budget ran out before a verdict
)

func (v Verdict) String() string {
	switch v {
	case Holds:
		return "holds"
	case Violated:
		return "violated"
	}
	return "unknown"
}

// DefaultTimeout is the time budget when Options.Timeout is 0.
const DefaultTimeout = 60 * time.Second

// DefaultMaxMemory is the memory budget when Options.MaxMemory is 0: well
// under the RAM of the machines leasecheck runs on, so that a check that
// would need more ends in Unknown with the reason instead of being killed.
const DefaultMaxMemory int64 = 1 << 30

// Options tune a check. The zero value means the documented defaults.
type Options struct {
	// Timeout bounds the whole check: reading (CheckFile, CheckReader), the
	// invariants and the searches over all keys. Past it every verdict not
	// yet reached is Unknown, with the reason. 0 means DefaultTimeout; a
	// negative value means no limit.
	Timeout time.Duration
	// Workers is how many keys are searched at once; 0 means GOMAXPROCS.
	Workers int
	// MaxMemory bounds, in bytes, what the check holds beyond the history
	// itself (search frontiers, caches, and when streaming the ops the file
	// lists out of time order). When it is reached the verdict is Unknown,
	// with the reason. 0 means DefaultMaxMemory; a negative value means no
	// limit.
	MaxMemory int64
	// StreamAbove is the size in bytes past which CheckFile and CheckReader
	// stream the history instead of reading it into memory. 0 means
	// DefaultStreamAbove; a negative value means always stream.
	StreamAbove int64
	// Read tunes reading, for CheckFile and CheckReader: Strict refuses
	// unknown fields, Warn hears of them.
	Read model.ReadOptions
	// lateness, when not 0, replaces the header's expiry lateness (the
	// second search of lateness.go).
	lateness int64
}

// budget makes the check's budget from the options, and the context whose
// deadline is the time budget; cancel releases it.
func (o Options) budget(ctx context.Context) (*budget, context.CancelFunc) {
	timeout := o.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	cancel := context.CancelFunc(func() {})
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, timeout)
	} else {
		timeout = 0
	}
	mem := o.MaxMemory
	if mem == 0 {
		mem = DefaultMaxMemory
	}
	b := newBudget(ctx, timeout, mem)
	stop := b.watch()
	return b, func() { stop(); cancel() }
}

// Violation is one counterexample to one property.
type Violation struct {
	Property string `json:"property"`
	Key      string `json:"key"`
	// Lines are the history lines of the operations involved, ascending.
	Lines       []int  `json:"lines"`
	Explanation string `json:"explanation"`
}

// PropertyResult is the verdict on one property over the whole history.
type PropertyResult struct {
	Name    string
	Verdict Verdict
}

// Result is the outcome of a check.
type Result struct {
	Ops        int // the ops in the history (read so far, when a stream was stopped)
	Keys       int
	Properties []PropertyResult // in the order of Properties()
	// Violations, grouped by property in the order of Properties(), then by
	// key; each explanation ends by naming the faults that overlapped it.
	Violations []Violation
	// Linearizations holds, per key, the linearization found or the longest
	// partial one: the input of the HTML report. A history checked as a
	// stream keeps none (each key's Steps is empty).
	Linearizations []KeyLinearization
	// SearchNodes counts the work of the linearizability searches: the
	// sweeps' events and the depth-first search's nodes.
	SearchNodes int
	// Reason says why a verdict is Unknown (the first such reason, naming
	// the key and the budget that ran out); "" when every verdict is known.
	Reason string
}

// KeyLinearization is an order of one key's operations: the whole history
// when the key is linearizable, else the longest prefix that is.
type KeyLinearization struct {
	Key     string
	Verdict Verdict
	// Steps in order. Unknown-outcome ops appear only where the search
	// applied them.
	Steps []Step
}

// Step is one operation placed in a linearization.
type Step struct {
	Op int // index in History.Ops
	// Applied marks an op that never returned but took effect here.
	Applied bool
}

// OK reports whether every property holds.
func (r *Result) OK() bool {
	for _, p := range r.Properties {
		if p.Verdict != Holds {
			return false
		}
	}
	return true
}

// Violated reports whether some property is violated.
func (r *Result) Violated() bool { return len(r.Violations) > 0 }

// Undecided reports whether no property is violated but the search ran out
// of budget before deciding linearizability.
func (r *Result) Undecided() bool { return !r.Violated() && !r.OK() }

// Verdict returns the verdict on one property.
func (r *Result) Verdict(property string) Verdict {
	for _, p := range r.Properties {
		if p.Name == property {
			return p.Verdict
		}
	}
	return Unknown
}

// Check decides every property of a history. Each property is decided on its
// own: the fast invariants first, then the linearizability search, which
// never stops early because an invariant already failed.
//
// The history is validated first, by the rules model's reader applies to a
// file (model.Validate); a malformed one yields a *model.ParseError and no
// verdict.
func Check(ctx context.Context, h *model.History, opts Options) (*Result, error) {
	if err := model.Validate(h); err != nil {
		return nil, err
	}
	b, cancel := opts.budget(ctx)
	defer cancel()
	return checkHistory(b, h, opts), nil
}

// checkHistory checks a valid history held in memory within budget b.
func checkHistory(b *budget, h *model.History, opts Options) *Result {
	c := timed.Compile(h)
	results := checkAll(b, c, opts.Workers)
	r := &Result{Ops: len(h.Ops), Keys: len(c.Keys)}
	assemble(r, results, h.Faults, timefmt.Times{Unit: h.Header.TimeUnit})
	reclassify(r, lateInMemory(b, h, results), h.Header.ExpiryLateness, h.Header.TimeUnit)
	return r
}

// assemble fills in a result from its keys' (in key order): the verdicts,
// the violations grouped by property in the order of Properties(), then by
// key, each naming the faults that overlapped it.
func assemble(r *Result, results []keyResult, faults []model.FaultRecord, tf timefmt.Times) {
	byProp := map[string][]found{}
	linVerdict := Holds
	for i := range results {
		res := &results[i]
		r.SearchNodes += res.nodes
		r.Linearizations = append(r.Linearizations, KeyLinearization{Key: res.key, Verdict: res.verdict, Steps: res.steps})
		switch res.verdict {
		case Violated:
			linVerdict = Violated
			if res.violation != nil {
				byProp[Linearizable] = append(byProp[Linearizable], *res.violation)
			}
		case Unknown:
			if linVerdict == Holds {
				linVerdict = Unknown
			}
			if r.Reason == "" {
				r.Reason = res.reason
			}
		}
		for _, f := range res.invariants {
			byProp[f.Property] = append(byProp[f.Property], f)
		}
	}
	for _, name := range Properties() {
		vs := byProp[name]
		verdict := Holds
		if name == Linearizable {
			verdict = linVerdict
		} else if len(vs) > 0 {
			verdict = Violated
		}
		r.Properties = append(r.Properties, PropertyResult{Name: name, Verdict: verdict})
		for _, f := range vs {
			r.Violations = append(r.Violations, annotate(f, faults, tf))
		}
	}
}

// checkAll checks every key, several at once; results are by key index,
// so the outcome does not depend on scheduling (only Unknown depends on the
// budget).
func checkAll(b *budget, c *timed.Compiled, workers int) []keyResult {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	results := make([]keyResult, len(c.Keys))
	if workers == 1 || len(c.Keys) == 1 {
		for k := range c.Keys {
			results[k] = checkKeyInMemory(b, c, k)
		}
		return results
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(workers, len(c.Keys)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				results[k] = checkKeyInMemory(b, c, k)
			}
		}()
	}
	// Biggest keys first, so one big key does not start last.
	order := make([]int, len(c.Keys))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return len(c.Keys[order[a]].Inputs) > len(c.Keys[order[b]].Inputs) })
	for _, k := range order {
		next <- k
	}
	close(next)
	wg.Wait()
	return results
}
