package checker

import (
	"bytes"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"slices"

	"github.com/leasecheck/leasecheck/internal/timed"
	"github.com/leasecheck/leasecheck/model"
)

// Checking a history too big to hold (DESIGN.md §10): CheckFile reads the
// file twice, never holding it.
//
//   - The first pass checks every line against the format (a bad line is
//     an error before any verdict), and learns what the second needs: the
//     header and the fault records, how far out of time order the file's
//     lines are (the lag: how much earlier than the latest call so far a
//     line's call may be), and per key the values read and the lowest fence
//     of a rejected write (keyFacts), kept in fixed-size filters.
//   - The second feeds each key's events, in time order, to its keyChecker
//     (the invariants and both sweeps in lockstep). An event at time t is
//     safe to process once a line has been read whose call is past t plus
//     the lag: no later line can call earlier. So memory is the ops within
//     the lag, the pending window and the frontiers — for a file written in
//     time order (every recorder's habit, and ours), a few ops.
//
// What is not kept when streaming: the linearizations (Result.Linearizations
// has no steps), and the depth-first search, which needs a key's every op:
// a key the sweeps cannot decide is Unknown, with the reason.

// DefaultStreamAbove is the file size past which CheckFile streams, when
// Options.StreamAbove is 0: below it the history is read into memory, where
// the depth-first search remains as a last resort and the linearizations
// are kept for reports.
const DefaultStreamAbove int64 = 32 << 20

// CheckFile checks the history in the file at path. A file larger than
// Options.StreamAbove is checked without holding it (see above); a smaller
// one is read into memory and checked as Check does. It returns the result
// and the history — with its ops when it was read into memory, only its
// name, header and fault records when it was streamed — or the reader's
// error (a *model.ParseError for a malformed line).
func CheckFile(ctx context.Context, path string, opts Options) (*Result, *model.History, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	limit := opts.StreamAbove
	if limit == 0 {
		limit = DefaultStreamAbove
	}
	b, cancel := opts.budget(ctx)
	defer cancel()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && (limit < 0 || fi.Size() > limit) {
		return checkStream(b, f, path, opts)
	}
	h, err := opts.Read.ReadHistory(f, path)
	if err != nil {
		return nil, nil, err
	}
	return checkHistory(b, h, opts), h, nil
}

// CheckReader checks the history read from r (stdin, say): in memory when
// it is at most Options.StreamAbove bytes, else spooled to a temporary file
// and streamed.
func CheckReader(ctx context.Context, r io.Reader, name string, opts Options) (*Result, *model.History, error) {
	limit := opts.StreamAbove
	if limit == 0 {
		limit = DefaultStreamAbove
	}
	b, cancel := opts.budget(ctx)
	defer cancel()
	var head []byte
	if limit > 0 {
		var err error
		head, err = io.ReadAll(io.LimitReader(r, limit+1))
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		if int64(len(head)) <= limit {
			h, err := opts.Read.ReadHistory(bytes.NewReader(head), name)
			if err != nil {
				return nil, nil, err
			}
			return checkHistory(b, h, opts), h, nil
		}
	}
	tmp, err := os.CreateTemp("", "leasecheck-*.jsonl")
	if err != nil {
		return nil, nil, err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if _, err := tmp.Write(head); err != nil {
		return nil, nil, err
	}
	if _, err := io.Copy(tmp, r); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	return checkStream(b, tmp, name, opts)
}

// survey is what the first pass learns.
type survey struct {
	hdr    model.Header
	faults []model.FaultRecord
	ops    int
	lag    int64
	keys   map[string]*keyFactsStream
	lines  int
}

// keyFactsStream is a key's facts, gathered in the first pass.
type keyFactsStream struct {
	minRejected int64
}

// readFilter is a Bloom filter of the (key, value) pairs some answered read
// returned: it may say a value was read that was not (the unknown write of
// it is then kept, which is safe), never the other way round. It has a fixed
// size, and a fixed hash, so that the result does not depend on the run.
type readFilter struct{ bits []uint64 }

const filterBits = 1 << 26 // 8 MiB

func newReadFilter() *readFilter { return &readFilter{bits: make([]uint64, filterBits/64)} }

func filterHashes(key, value string) (uint64, uint64) {
	h := fnv.New64a()
	io.WriteString(h, key)
	h.Write([]byte{0})
	io.WriteString(h, value)
	a := h.Sum64()
	return a, a>>29 | a<<35 | 1
}

func (f *readFilter) add(key, value string) {
	a, b := filterHashes(key, value)
	for i := range uint64(4) {
		x := (a + i*b) % filterBits
		f.bits[x/64] |= 1 << (x % 64)
	}
}

func (f *readFilter) has(key, value string) bool {
	a, b := filterHashes(key, value)
	for i := range uint64(4) {
		x := (a + i*b) % filterBits
		if f.bits[x/64]&(1<<(x%64)) == 0 {
			return false
		}
	}
	return true
}

// errStopped is the first pass stopped by the budget.
var errStopped = errors.New("stopped")

// surveyFile is the first pass.
func surveyFile(b *budget, f *os.File, name string, opts Options, reads *readFilter) (*survey, error) {
	rd := opts.Read.NewReader(f, name)
	sv := &survey{keys: map[string]*keyFactsStream{}}
	maxCall := int64(-timed.Inf)
	for {
		op, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		sv.ops++
		if sv.ops&4095 == 0 && b.expired() {
			sv.lines = rd.Line()
			return sv, errStopped
		}
		maxCall = max(maxCall, op.Call)
		sv.lag = max(sv.lag, maxCall-op.Call)
		kf := sv.keys[op.Key]
		if kf == nil {
			kf = &keyFactsStream{minRejected: timed.Inf}
			sv.keys[op.Key] = kf
		}
		switch {
		case op.Kind == model.Read && op.Returned && op.OK && op.HasValue:
			reads.add(op.Key, op.Value)
		case op.Kind == model.Write && op.Returned && !op.OK:
			kf.minRejected = min(kf.minRejected, op.Fence)
		}
	}
	sv.hdr, sv.faults, sv.lines = rd.Header(), rd.Faults(), rd.Line()
	return sv, nil
}

// eventHeap orders the events of every key by time.
type eventHeap []event

func (h eventHeap) Len() int           { return len(h) }
func (h eventHeap) Less(i, j int) bool { return compareEvents(h[i], h[j]) < 0 }
func (h eventHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)        { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = event{}
	*h = old[:len(old)-1]
	return e
}

// streamKey is one key being checked as the file streams by.
type streamKey struct {
	kc   *keyChecker
	prep *preparer
}

// kopBytes estimates what an op held in the time-order window costs.
const kopBytes = 400

// checkStream is the second pass, after the first.
func checkStream(b *budget, f *os.File, name string, opts Options) (*Result, *model.History, error) {
	reads := newReadFilter()
	sv, err := surveyFile(b, f, name, opts, reads)
	h := &model.History{Name: name}
	if err == errStopped {
		h.Header = sv.hdr
		return undecided(sv.ops, len(sv.keys), b.reason(fmt.Sprintf("reading the history (line %d)", sv.lines))), h, nil
	}
	if err != nil {
		return nil, nil, err
	}
	h.Header, h.Faults = sv.hdr, sv.faults
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, nil, err
	}
	quiet := opts.Read
	quiet.Warn = nil // the first pass told them
	rd := quiet.NewReader(f, name)
	names := timed.NewNames()
	keys := map[string]*streamKey{}
	var events eventHeap
	held := int64(0) // bytes charged for the window
	defer func() { b.credit(held) }()
	stopped := ""
	process := func(e event) {
		keys[e.k.op.Key].kc.event(e)
	}
	maxCall := int64(-timed.Inf)
	n := 0
	for stopped == "" {
		op, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, err // the first pass read it: the file changed
		}
		n++
		if n&4095 == 0 {
			if b.expired() {
				stopped = b.reason(fmt.Sprintf("checking the history (line %d of %d)", rd.Line(), sv.lines))
				break
			}
			want := int64(len(events)) * kopBytes
			ok := b.charge(want - held)
			held = want
			if !ok {
				stopped = b.memReason(fmt.Sprintf("holding the operations that the file lists out of time order (up to %d time units apart)", sv.lag))
				break
			}
		}
		sk := keys[op.Key]
		if sk == nil {
			kf := sv.keys[op.Key]
			key := op.Key
			facts := keyFacts{read: func(v string) bool { return reads.has(key, v) }, minRejected: kf.minRejected}
			sk = &streamKey{kc: newKeyChecker(op.Key, h.Header, names, b, false, true), prep: newPreparer(h.Header, names, facts)}
			keys[op.Key] = sk
		}
		k := new(kop)
		opc := op
		sk.prep.prepare(&opc, nil, k)
		for _, e := range eventsOf(k, nil) {
			heap.Push(&events, e)
		}
		// Every event before the watermark is safe: no later line calls
		// before it.
		maxCall = max(maxCall, op.Call)
		for len(events) > 0 && events[0].t < maxCall-sv.lag {
			process(heap.Pop(&events).(event))
		}
	}
	if stopped == "" {
		for len(events) > 0 {
			process(heap.Pop(&events).(event))
		}
	}
	// The keys, in order, as Check reports them.
	order := make([]string, 0, len(keys))
	for k := range keys {
		order = append(order, k)
	}
	slices.Sort(order)
	results := make([]keyResult, 0, len(order))
	rules := timed.RulesOf(h.Header)
	for _, key := range order {
		kc := keys[key].kc
		res := keyResult{key: key, ops: kc.ops, invariants: kc.inv.finish()}
		o := kc.outcome()
		res.verdict, res.nodes, res.reason = o.verdict, o.work, o.reason
		switch {
		case o.verdict == Violated:
			v := explainStuck(names, rules, key, stuckFromSweep(o.stuck, kc.complete))
			res.violation = &v
		case stopped != "":
			res.verdict, res.reason = Unknown, stopped
		}
		results = append(results, res)
	}
	r := &Result{Ops: sv.ops, Keys: len(sv.keys)}
	assemble(r, results, h.Faults)
	if stopped != "" {
		// The invariants saw only part of the history: what they found is
		// found, what they did not is not known.
		r.Reason = stopped
		for i := range r.Properties {
			if r.Properties[i].Verdict == Holds {
				r.Properties[i].Verdict = Unknown
			}
		}
	}
	return r, h, nil
}

// undecided is the result of a check stopped before any verdict.
func undecided(ops, keys int, reason string) *Result {
	r := &Result{Ops: ops, Keys: keys, Reason: reason}
	for _, p := range Properties() {
		r.Properties = append(r.Properties, PropertyResult{Name: p, Verdict: Unknown})
	}
	return r
}
