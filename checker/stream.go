package checker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"runtime"
	"slices"

	"github.com/leasecheck/leasecheck/internal/timed"
	"github.com/leasecheck/leasecheck/internal/timefmt"
	"github.com/leasecheck/leasecheck/model"
)

// Checking a history too big to hold (docs/design.md §10): CheckFile reads the
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
//     time order (every recorder's habit, and ours), a few ops — plus a
//     fixed lookahead of ops read ahead (streamLookahead), which shows the
//     sweep the fences of the acquires to come.
//
// A file in time order is first tried in one pass, without the survey;
// that pass gives way to the two above when the file proves out of order,
// or when its search, lacking the survey's facts, works past an allowance
// proportional to the events (guessWork).
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
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return nil, nil, err
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
	maxFence    int64
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
func surveyFile(b *budget, f *os.File, name string, ro model.ReadOptions, reads *readFilter) (*survey, error) {
	rd := ro.NewReader(f, name)
	defer rd.Close()
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
		kf.maxFence = max(kf.maxFence, op.Fence)
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

// eventHeap orders the events of every key by time: a binary heap, typed
// (container/heap would box every event).
type eventHeap []event

func (h *eventHeap) push(e event) {
	*h = append(*h, e)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if compareEvents(s[i], s[p]) >= 0 {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *eventHeap) pop() event {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s[n] = event{}
	s = s[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && compareEvents(s[l], s[m]) < 0 {
			m = l
		}
		if r < n && compareEvents(s[r], s[m]) < 0 {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}

// slab hands out kops and op copies in chunks: one allocation per 256 ops
// instead of two per op. A chunk is garbage once every op in it has passed.
type slab struct {
	kops []kop
	ops  []model.Op
}

// next returns the next free kop and op; take claims them (until then the
// same ones are returned again).
func (s *slab) next() (*kop, *model.Op) {
	if len(s.kops) == 0 {
		s.kops, s.ops = make([]kop, 256), make([]model.Op, 256)
	}
	return &s.kops[0], &s.ops[0]
}

func (s *slab) take() { s.kops, s.ops = s.kops[1:], s.ops[1:] }

// streamKey is one key being checked as the file streams by.
type streamKey struct {
	kc    *keyChecker
	prep  *preparer
	ahead fencesAhead
}

// streamLookahead is how many ops a stream reads ahead of those whose
// events it processes, so that the sweep knows some of the fences to come: what the
// in-memory check knows of the whole future (fenceFacts.pinAhead), a
// stream knows of the next few hundred ops. The lowest fence among some of
// the successful acquires still to come is at least the lowest among all
// of them, so the cut it makes is one the whole future would make too:
// sound. Where expiries are ambiguous it is what keeps the frontier small
// (a 300-op history: past a 30 s budget without, 0.2 s with). The ops wait
// in a queue, not in the event heap, which stays as small as the file's
// disorder; they cost streamLookahead × kopBytes of memory (400 KiB).
const streamLookahead = 1024

// fencesAhead is a min-heap of the fences presented by the successful
// acquires of a key whose call events are read but not yet processed;
// taken ones are removed lazily.
type fencesAhead struct {
	h    []int64
	gone map[int64]int
}

func (a *fencesAhead) add(f int64) {
	a.h = append(a.h, f)
	for i := len(a.h) - 1; i > 0; {
		p := (i - 1) / 2
		if a.h[p] <= a.h[i] {
			break
		}
		a.h[i], a.h[p] = a.h[p], a.h[i]
		i = p
	}
}

// take removes f, once: at once when it is the lowest (acquires come in
// fence order in any correct history), else lazily.
func (a *fencesAhead) take(f int64) {
	if len(a.h) > 0 && a.h[0] == f {
		a.pop()
		return
	}
	if a.gone == nil {
		a.gone = map[int64]int{}
	}
	a.gone[f]++
}

// low is the lowest fence still ahead (timed.Inf: none).
func (a *fencesAhead) low() int64 {
	for len(a.gone) > 0 && len(a.h) > 0 && a.gone[a.h[0]] > 0 {
		if a.gone[a.h[0]]--; a.gone[a.h[0]] == 0 {
			delete(a.gone, a.h[0])
		}
		a.pop()
	}
	if len(a.h) == 0 {
		return timed.Inf
	}
	return a.h[0]
}

// pop removes the lowest fence.
func (a *fencesAhead) pop() {
	n := len(a.h) - 1
	a.h[0] = a.h[n]
	a.h = a.h[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && a.h[l] < a.h[m] {
			m = l
		}
		if r < n && a.h[r] < a.h[m] {
			m = r
		}
		if m == i {
			return
		}
		a.h[i], a.h[m] = a.h[m], a.h[i]
		i = m
	}
}

// pinsKop reports whether k is a placed op that pins a fence (pins): the
// ops whose calls pinsAhead and fencesAhead count.
func pinsKop(k *kop) bool { return k.role == rolePlaced && pins(k) }

// pinsEvent reports whether e is the call of such an op.
func pinsEvent(e event) bool { return e.kind == evCall && pinsKop(e.k) }

// kopBytes estimates what an op held in the time-order window costs.
const kopBytes = 400

// checkStream checks the history in f without holding it. It first tries
// one pass, guessing as it goes how far out of time order the lines are
// (twice the most it has seen); a file written in time order, as recorders
// write them, is then read once. When a line calls earlier than an event
// already processed, the guess was wrong: it learns the truth in a first
// pass of its own, and streams again with it.
func checkStream(b *budget, f *os.File, name string, opts Options) (*Result, *model.History, error) {
	r, h, err := checkStreamOnce(b, f, name, opts)
	if err != nil || r == nil {
		return r, h, err
	}
	late, err := lateInStream(b, f, name, h.Header, opts, r)
	if err != nil {
		return nil, nil, err
	}
	reclassify(r, late, h.Header.ExpiryLateness, h.Header.TimeUnit)
	return r, h, nil
}

// checkStreamOnce is checkStream but for expiry lateness (lateness.go).
func checkStreamOnce(b *budget, f *os.File, name string, opts Options) (*Result, *model.History, error) {
	ro := readAhead(opts.Read)
	if user := ro.Warn; user != nil {
		told := map[model.Warning]bool{} // once each, over every pass
		ro.Warn = func(w model.Warning) {
			if !told[w] {
				told[w] = true
				user(w)
			}
		}
	}
	r, h, done, err := streamPass(b, f, name, ro, nil, nil, opts.lateness)
	if done || err != nil {
		return r, h, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, nil, err
	}
	reads := newReadFilter()
	sv, err := surveyFile(b, f, name, ro, reads)
	if err == errStopped {
		return undecided(sv.ops, len(sv.keys), b.reason(fmt.Sprintf("reading the history (line %d)", sv.lines))), &model.History{Name: name, Header: sv.hdr}, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, nil, err
	}
	r, h, _, err = streamPass(b, f, name, ro, sv, reads, opts.lateness)
	return r, h, err
}

// guessWork is how many configurations a key's sweeps may explore, over its
// first events events, in a pass with no survey before that pass gives up
// for one with it. Without the survey's facts (which values were read, the
// largest fence, the lowest rejected one) every unanswered write is kept
// and every fence counter is distinct, and where expiries are ambiguous
// (clock uncertainty past the TTL) the sweep's frontier multiplies with
// each op: a 104-op history the surveyed pass decides in 0.05 s ran past a
// 20 s budget. A well-behaved stream explores a few configurations per
// event, far under this; giving up costs at most this much work and one
// more read of the file.
func guessWork(events int) int64 { return 1<<16 + 64*int64(events) }

// streamPass streams f once. With a survey it knows the lag and each key's
// facts; without, it guesses the lag, keeps every unanswered write (it
// cannot know which were read), and gives up (done false) as soon as the
// guess proves wrong or a key's sweep works past guessWork.
//
// lateness, when not 0, replaces the header's expiry lateness (the second
// search of lateness.go).
func streamPass(b *budget, f *os.File, name string, ro model.ReadOptions, sv *survey, reads *readFilter, lateness int64) (*Result, *model.History, bool, error) {
	rd := ro.NewReader(f, name)
	defer rd.Close()
	h := &model.History{Name: name}
	names := timed.NewNames()
	keys := map[string]*streamKey{}
	var events eventHeap
	var kops slab
	var evbuf [2]event
	held := int64(0) // bytes charged for the window
	defer func() { b.credit(held) }()
	stopped := ""
	last := int64(-timed.Inf) // the time of the last event processed
	costly := false           // unsurveyed, a key's sweep worked past guessWork
	process := func(e event) {
		last = e.t
		sk := keys[e.k.op.Key]
		if pinsEvent(e) {
			sk.ahead.take(e.k.in.Fence)
		}
		sk.kc.pinAhead(sk.ahead.low())
		sk.kc.event(e)
		costly = costly || sk.kc.guessedOut()
	}
	giveUp := func() (*Result, *model.History, bool, error) {
		for _, sk := range keys {
			sk.kc.release()
		}
		return nil, nil, false, nil
	}
	maxCall, lag := int64(-timed.Inf), int64(0)
	if sv != nil {
		lag = sv.lag
	}
	of := ""
	if sv != nil {
		of = fmt.Sprintf(" of %d", sv.lines)
	}
	// admit turns an op that left the lookahead into events, and processes
	// those that are safe; false: this pass must give up.
	admit := func(k *kop) bool {
		op := k.op
		if sv == nil {
			if op.Call <= last {
				return false // further out of order than guessed
			}
			lag = max(lag, maxCall-op.Call)
		}
		for _, e := range eventsOf(k, evbuf[:0]) {
			events.push(e)
		}
		// Every event before the watermark is safe: no later line calls
		// before it (when guessing: with a margin as wide again).
		maxCall = max(maxCall, op.Call)
		w := maxCall - lag
		if sv == nil {
			w = maxCall - 2*lag - 1
		}
		for len(events) > 0 && events[0].t < w {
			process(events.pop())
		}
		return !costly
	}
	var ahead []*kop // read, prepared, not yet admitted (streamLookahead)
	n := 0
	for stopped == "" {
		k, op := kops.next()
		err := rd.NextInto(op)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, false, err
		}
		n++
		if n == 1 {
			h.Header = rd.Header()
			if lateness != 0 {
				h.Header.ExpiryLateness = lateness
			}
		}
		if n&4095 == 0 {
			if b.expired() {
				stopped = b.reason(fmt.Sprintf("checking the history, at line %d%s", rd.Line(), of))
				break
			}
			want := int64(len(events)+len(ahead)) * kopBytes
			ok := b.charge(want - held)
			held = want
			if !ok {
				stopped = b.memReason(fmt.Sprintf("holding the operations that the file lists out of time order (up to %d time units apart)", max(lag, maxCall-op.Call)))
				break
			}
		}
		sk := keys[op.Key]
		if sk == nil {
			facts := keyFacts{read: func(string) bool { return true }, minRejected: timed.Inf, maxFence: timed.Inf}
			if sv != nil {
				key := op.Key
				facts = keyFacts{read: func(v string) bool { return reads.has(key, v) }, minRejected: sv.keys[key].minRejected, maxFence: sv.keys[key].maxFence}
			}
			sk = &streamKey{kc: newKeyChecker(op.Key, h.Header, names, b, false, true), prep: newPreparer(h.Header, names, facts)}
			sk.kc.guessing = sv == nil
			// A stream knows the largest fence (from a survey) and, of the
			// fences to come, those within its lookahead (process).
			sk.kc.setFences(fenceFacts{maxFence: facts.maxFence, pinAhead: timed.Inf})
			keys[op.Key] = sk
		}
		sk.prep.prepare(op, nil, k)
		kops.take()
		// The op waits in the lookahead, its fence known to the sweep,
		// before its events join the others.
		if pinsKop(k) {
			sk.ahead.add(k.in.Fence)
		}
		ahead = append(ahead, k)
		if len(ahead) > streamLookahead {
			k, ahead = ahead[0], ahead[1:]
			if !admit(k) {
				return giveUp()
			}
		}
	}
	if stopped != "" && sv == nil {
		// Stopped by the budget with ops still in the lookahead: their
		// fences were used, their order not yet checked. Any that calls no
		// later than an event processed makes this pass's verdicts unsound.
		for _, k := range ahead {
			if k.op.Call <= last {
				return giveUp()
			}
		}
	}
	if stopped == "" {
		for _, k := range ahead {
			if !admit(k) {
				return giveUp()
			}
		}
		for len(events) > 0 {
			process(events.pop())
			if costly {
				return giveUp()
			}
		}
	}
	h.Header, h.Faults = rd.Header(), rd.Faults()
	ops := n
	if sv != nil {
		ops = sv.ops
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
			v := explainStuck(names, timefmt.Times{Unit: h.Header.TimeUnit}, rules, key, stuckFromSweep(o.stuck, kc.complete))
			res.violation = &v
		case stopped != "":
			res.verdict, res.reason = Unknown, stopped
		}
		results = append(results, res)
	}
	nkeys := len(keys)
	if sv != nil {
		nkeys = len(sv.keys)
	}
	r := &Result{Ops: ops, Keys: nkeys}
	assemble(r, results, h.Faults, timefmt.Times{Unit: h.Header.TimeUnit})
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
	return r, h, true, nil
}

// readAhead decodes lines ahead on the CPUs there are (up to 4), unless the
// caller chose.
func readAhead(o model.ReadOptions) model.ReadOptions {
	if o.Workers == 0 {
		if n := runtime.GOMAXPROCS(0); n >= 2 {
			o.Workers = min(n, 4)
		}
	}
	return o
}

// undecided is the result of a check stopped before any verdict.
func undecided(ops, keys int, reason string) *Result {
	r := &Result{Ops: ops, Keys: keys, Reason: reason}
	for _, p := range Properties() {
		r.Properties = append(r.Properties, PropertyResult{Name: p, Verdict: Unknown})
	}
	return r
}
