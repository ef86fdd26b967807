package checker

import (
	"context"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/leasecheck/leasecheck/internal/timed"
	"github.com/leasecheck/leasecheck/model"
)

// The stable property names (DESIGN.md §2). They appear in output, JSON and
// tests; never rename one.
const (
	Linearizable         = "linearizable"
	SingleWriterPerFence = "single-writer-per-fence"
	FenceMonotonic       = "fence-monotonic"
	StopOnRenewFailure   = "stop-on-renew-failure"
)

// Properties returns the property names in the order they are reported: a
// new slice each time, so no caller can change what another sees.
func Properties() []string {
	return []string{Linearizable, SingleWriterPerFence, FenceMonotonic, StopOnRenewFailure}
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

// DefaultTimeout is the linearizability search budget when Options.Timeout is 0.
const DefaultTimeout = 60 * time.Second

// DefaultMaxMemory is the memory budget when Options.MaxMemory is 0: well
// under the RAM of the machines leasecheck runs on, so that a check that
// would need more ends in Unknown with the reason instead of being killed.
const DefaultMaxMemory int64 = 1 << 30

// Options tune a check. The zero value means the documented defaults.
type Options struct {
	// Timeout bounds the linearizability search over all keys. 0 means
	// DefaultTimeout; a negative value means no limit.
	Timeout time.Duration
	// Workers is how many keys are searched at once; 0 means GOMAXPROCS.
	Workers int
	// MaxMemory bounds, in bytes, what the check holds beyond the history
	// itself (search frontiers, caches). When it is reached the verdict is
	// Unknown, with the reason. 0 means DefaultMaxMemory; a negative value
	// means no limit.
	MaxMemory int64
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
	Ops        int
	Keys       int
	Properties []PropertyResult // in the order of Properties
	// Violations, grouped by property in the order of Properties(), then by key.
	Violations []Violation
	// Linearizations holds, per key, the linearization found or the longest
	// partial one: the input of the HTML report.
	Linearizations []KeyLinearization
	// SearchNodes counts the states the linearizability search visited.
	SearchNodes int
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
	c := timed.Compile(h)
	r := &Result{Ops: len(h.Ops), Keys: len(c.Keys)}

	timeout := opts.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	results := searchAll(ctx, c, opts.Workers)

	var lin, inv []Violation
	linVerdict := Holds
	for k := range c.Keys {
		res := &results[k]
		inv = append(inv, res.invariants...)
		r.SearchNodes += res.nodes
		r.Linearizations = append(r.Linearizations, linearizationOf(c, k, &res.searchResult))
		switch res.verdict {
		case Violated:
			linVerdict = Violated
			lin = append(lin, explainNonLinearizable(c, k, &res.searchResult))
		case Unknown:
			if linVerdict == Holds {
				linVerdict = Unknown
			}
		}
	}
	byProp := map[string][]Violation{Linearizable: lin}
	for _, v := range inv {
		byProp[v.Property] = append(byProp[v.Property], v)
	}
	for _, name := range Properties() {
		vs := byProp[name]
		verdict := Holds
		if name == Linearizable {
			verdict = linVerdict
		} else if len(vs) > 0 {
			verdict = Violated
		}
		sort.SliceStable(vs, func(i, j int) bool { return vs[i].Key < vs[j].Key })
		r.Properties = append(r.Properties, PropertyResult{Name: name, Verdict: verdict})
		r.Violations = append(r.Violations, vs...)
	}
	return r, nil
}

// keyResult is everything decided about one key.
type keyResult struct {
	searchResult
	invariants []Violation
}

func checkKey(ctx context.Context, c *timed.Compiled, k int) keyResult {
	return keyResult{
		invariants:   checkInvariants(c, k),
		searchResult: searchKey(ctx, c.History, &c.Keys[k]),
	}
}

// searchAll checks every key, several at once; results are by key index,
// so the outcome does not depend on scheduling (only Unknown depends on time).
func searchAll(ctx context.Context, c *timed.Compiled, workers int) []keyResult {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	results := make([]keyResult, len(c.Keys))
	if workers == 1 || len(c.Keys) == 1 {
		for k := range c.Keys {
			results[k] = checkKey(ctx, c, k)
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
				results[k] = checkKey(ctx, c, k)
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

func linearizationOf(c *timed.Compiled, k int, res *searchResult) KeyLinearization {
	ko := &c.Keys[k]
	var rev []*pathNode
	for p := res.path; p != nil; p = p.parent {
		rev = append(rev, p)
	}
	kl := KeyLinearization{Key: ko.Key, Verdict: res.verdict}
	for i := len(rev) - 1; i >= 0; i-- {
		p := rev[i]
		kl.Steps = append(kl.Steps, Step{Op: ko.Index[p.op], Applied: p.unknown})
	}
	return kl
}
