package report

import (
	_ "embed"
	"errors"
	"fmt"
	"html"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/model"
)

// Input is everything a timeline page shows. Only History is required.
type Input struct {
	// Title heads the page; empty means the history's name.
	Title string
	// History gives the ops, the header (time unit, clock uncertainty,
	// semantics) and the fault records.
	History *model.History
	// Check is the checker's verdict on History: its violations are drawn
	// and told, its linearizations listed and followed for the terms. Nil
	// draws the history alone.
	Check *checker.Result
	// Beliefs are the holders' belief intervals, when the runner knows them
	// (the simulator does: BeliefsFromTrace).
	Beliefs []Belief
	// Extra are run-property findings (exclusive-belief, liveness-*), drawn
	// and told like the checker's violations, after them.
	Extra []Finding
	// Replay is the command that replays the failure, shown on the page.
	Replay string
	// Parameters are the run's settings a verdict turns on (clock drifts
	// and their bound, margins, renew intervals and timeouts, message
	// delays), one line each, shown above the timeline.
	Parameters []string
	// Secondary, when set, is a link (a URL relative to the page) to
	// another view of the same history, such as porcupine's page written
	// beside it.
	Secondary string
}

// Finding is a violated run property: a property the runner judges from
// what it saw rather than from the history (docs/specification.md §2: exclusive
// belief, liveness).
type Finding struct {
	Property    string
	Explanation string
	// Lines are history lines involved, if any.
	Lines []int
	// From and To bound when it happened, in the history's unit; when both
	// are 0 the span of the Lines' ops is used.
	From, To int64
}

// Options bound the page. The zero value means the defaults.
type Options struct {
	// MaxOps is how many operations the page draws at most; 0 means
	// DefaultMaxOps. A longer history is drawn in windows around its
	// violations (around its start when it has none), and the page says
	// exactly what it left out.
	MaxOps int
}

// DefaultMaxOps keeps a page near 6 MB: every op costs about 30 bytes of
// embedded data and a few microseconds of the browser's time per frame.
const DefaultMaxOps = 200_000

// The page's assets: one HTML shell whose script reads the embedded data.
var (
	//go:embed page/timeline.css
	pageCSS string
	//go:embed page/timeline.js
	pageJS string
	//go:embed page/body.html
	pageBody string
)

// WriteTimeline writes the self-contained HTML timeline of in to w: no
// network, no external fonts; the data is embedded as JSON that a small
// script draws onto a canvas. The bytes depend only on in and opts.
func WriteTimeline(w io.Writer, in Input, opts Options) error {
	if in.History == nil {
		return errors.New("report: WriteTimeline: no history")
	}
	p := newPage(in, opts)
	var b strings.Builder
	title := in.Title
	if title == "" {
		title = in.History.Name
	}
	if title == "" {
		title = "history"
	}
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	b.WriteString("<meta name=\"generator\" content=\"leasecheck timeline\">\n")
	b.WriteString("<title>" + html.EscapeString(title) + " — leasecheck timeline</title>\n")
	b.WriteString("<style>\n" + pageCSS + "</style>\n</head>\n<body>\n")
	b.WriteString("<noscript>This page draws the timeline with JavaScript.</noscript>\n")
	b.WriteString(pageBody)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if _, err := io.WriteString(w, "<script id=\"data\" type=\"application/json\">\n"); err != nil {
		return err
	}
	if _, err := w.Write(p.data(title)); err != nil {
		return err
	}
	_, err := io.WriteString(w, "</script>\n<script>\n"+pageJS+"</script>\n</body>\n</html>\n")
	return err
}

// page is the data of one timeline, computed from an Input.
type page struct {
	in   Input
	h    *model.History
	base int64 // subtracted from every time written, so the script's doubles hold them exactly

	procs     []string       // process rows, in order of first appearance
	procOwner []string       // the owner of each process row
	procIdx   map[string]int // process name -> row
	keys      []string       // sorted
	keyIdx    map[string]int
	lanes     []string // rows for fault targets that are no process: coordinator, resource, server, ...

	drawn []int   // indices in h.Ops of the ops drawn, ascending
	slot  []int32 // h.Ops index -> position in drawn, or -1
	wins  []Window
	omit  string // what the page left out, in words; "" when nothing

	viols  []pageViolation
	terms  []Term
	faults []pageFault

	strs   []string
	strIdx map[string]int

	linesSorted int // 1: h.Ops are in line order (a binary search finds a line); -1: not; 0: not yet known
}

type pageViolation struct {
	property, key, story string
	hasKey               bool
	lines                []int
	ops                  []int // h.Ops indices
	focus                int   // h.Ops index of the op the violation happens at, or -1
	from, to             int64
	run                  bool
	faults               []int
}

type pageFault struct {
	rec   model.FaultRecord
	procs []int
	lane  int // -1 when it hits process rows
}

func newPage(in Input, opts Options) *page {
	h := in.History
	p := &page{in: in, h: h, procIdx: map[string]int{}, keyIdx: map[string]int{}, strIdx: map[string]int{}}
	for i := range h.Ops {
		op := &h.Ops[i]
		p.addProc(op.Process, op.Owner)
		if _, ok := p.keyIdx[op.Key]; !ok {
			p.keyIdx[op.Key] = 0
			p.keys = append(p.keys, op.Key)
		}
	}
	for _, b := range in.Beliefs {
		p.addProc(b.Process, b.Process)
	}
	sort.Strings(p.keys)
	for i, k := range p.keys {
		p.keyIdx[k] = i
	}
	p.violations()
	maxOps := opts.MaxOps
	if maxOps <= 0 {
		maxOps = DefaultMaxOps
	}
	p.choose(maxOps)
	p.terms = Terms(h, in.Check)
	p.placeFaults()
	p.base = p.timeBase()
	return p
}

func (p *page) addProc(name, owner string) {
	if _, ok := p.procIdx[name]; ok {
		return
	}
	if owner == "" {
		owner = name
	}
	p.procIdx[name] = len(p.procs)
	p.procs = append(p.procs, name)
	p.procOwner = append(p.procOwner, owner)
}

// opEnd is where an op's bar ends for the purpose of windows and spans: its
// return, or its call when it never returned.
func opEnd(op *model.Op) int64 {
	end := op.Call
	if op.Returned {
		end = op.Return
	}
	if op.HasAt {
		end = max(end, op.At)
	}
	return end
}

func opStart(op *model.Op) int64 {
	if op.HasAt {
		return min(op.Call, op.At)
	}
	return op.Call
}

// opsAtLines maps history lines to op indices (unknown lines are dropped).
func (p *page) opsAtLines(lines []int) []int {
	ops := p.h.Ops
	if p.linesSorted == 0 {
		p.linesSorted = -1
		if sort.SliceIsSorted(ops, func(a, b int) bool { return ops[a].Line < ops[b].Line }) {
			p.linesSorted = 1
		}
	}
	sorted := p.linesSorted > 0
	var out []int
	for _, l := range lines {
		if l <= 0 {
			continue
		}
		i := -1
		if sorted {
			j := sort.Search(len(ops), func(j int) bool { return ops[j].Line >= l })
			if j < len(ops) && ops[j].Line == l {
				i = j
			}
		} else {
			for j := range ops {
				if ops[j].Line == l {
					i = j
					break
				}
			}
		}
		if i >= 0 {
			out = append(out, i)
		}
	}
	return out
}

// violations collects the checker's violations, then the run findings. A
// violation happens at its focus. For linearizable it is the op no order
// could place: of the involved ops the key's linearization leaves out,
// the earliest, preferring one that is not a read (the checker's own
// rule for its culprit, checker/explain.go). For the other properties it
// is the involved op called last: the checker lists the cause first and
// the offence last (the zombie write, the write after the failed renew).
func (p *page) violations() {
	add := func(v pageViolation) {
		v.focus = -1
		var placed map[int]bool
		if v.property == checker.Linearizable {
			if kl := linearizationOf(p.in.Check, v.key); kl != nil {
				placed = map[int]bool{}
				for _, s := range kl.Steps {
					placed[s.Op] = true
				}
			}
		}
		for _, i := range v.ops {
			op := &p.h.Ops[i]
			if placed != nil {
				if placed[i] {
					continue
				}
				if v.focus < 0 {
					v.focus = i
					continue
				}
				f := &p.h.Ops[v.focus]
				if (f.Kind == model.Read) != (op.Kind == model.Read) {
					if f.Kind == model.Read {
						v.focus = i
					}
				} else if opStart(op) < opStart(f) {
					v.focus = i
				}
				continue
			}
			if v.focus < 0 || op.Call >= p.h.Ops[v.focus].Call {
				v.focus = i
			}
		}
		if v.focus < 0 && len(v.ops) > 0 { // every involved op was placed
			v.focus = v.ops[len(v.ops)-1]
		}
		if len(v.ops) > 0 && v.from == 0 && v.to == 0 {
			v.from, v.to = opStart(&p.h.Ops[v.ops[0]]), opEnd(&p.h.Ops[v.ops[0]])
			for _, i := range v.ops {
				v.from, v.to = min(v.from, opStart(&p.h.Ops[i])), max(v.to, opEnd(&p.h.Ops[i]))
			}
		}
		for fi, f := range p.h.Faults {
			end := f.Start
			if f.HasEnd {
				end = f.End
			}
			if f.Start <= v.to && end >= v.from {
				v.faults = append(v.faults, fi)
			}
		}
		p.viols = append(p.viols, v)
	}
	if r := p.in.Check; r != nil {
		for _, v := range r.Violations {
			add(pageViolation{property: v.Property, key: v.Key, hasKey: true, story: v.Explanation,
				lines: v.Lines, ops: p.opsAtLines(v.Lines)})
		}
	}
	for _, f := range p.in.Extra {
		add(pageViolation{property: f.Property, story: f.Explanation, lines: f.Lines,
			ops: p.opsAtLines(f.Lines), from: f.From, to: f.To, run: true})
	}
}

// choose picks the ops to draw: all of them, or the maxOps nearest (in
// time) to a violation's ops, and says what it left out.
func (p *page) choose(maxOps int) {
	ops := p.h.Ops
	n := len(ops)
	p.slot = make([]int32, n)
	if n <= maxOps {
		p.drawn = make([]int, n)
		for i := range ops {
			p.drawn[i], p.slot[i] = i, int32(i)
		}
		return
	}
	// The spans to keep: each involved op, and each finding without ops.
	var spans []Window
	for _, v := range p.viols {
		for _, i := range v.ops {
			spans = append(spans, Window{opStart(&ops[i]), opEnd(&ops[i])})
		}
		if len(v.ops) == 0 {
			spans = append(spans, Window{v.from, max(v.from, v.to)})
		}
	}
	around := "a violation's operations"
	if len(spans) == 0 {
		first := opStart(&ops[0])
		for i := range ops {
			first = min(first, opStart(&ops[i]))
		}
		spans = []Window{{first, first}}
		around = "the history's start"
	}
	spans = mergeWindows(spans)
	dist := make([]int64, n)
	for i := range ops {
		dist[i] = distance(spans, opStart(&ops[i]), opEnd(&ops[i]))
	}
	sorted := append([]int64(nil), dist...)
	sort.Slice(sorted, func(a, b int) bool { return sorted[a] < sorted[b] })
	d := sorted[maxOps] // every op closer than d fits
	var keep func(i int) bool
	if d > 0 {
		keep = func(i int) bool { return dist[i] < d }
		p.wins = make([]Window, len(spans))
		for i, s := range spans {
			p.wins[i] = Window{s.Lo - (d - 1), s.Hi + (d - 1)}
		}
		p.wins = mergeWindows(p.wins)
	} else {
		// More ops overlap the violations than the page may draw: the
		// first maxOps of those, in file order.
		taken := 0
		keep = func(i int) bool {
			if dist[i] == 0 && taken < maxOps {
				taken++
				return true
			}
			return false
		}
		p.wins = spans
	}
	for i := range ops {
		p.slot[i] = -1
		if keep(i) {
			p.slot[i] = int32(len(p.drawn))
			p.drawn = append(p.drawn, i)
		}
	}
	p.omit = p.omitted(d, around)
}

// mergeWindows sorts windows and merges the ones that overlap or touch.
func mergeWindows(ws []Window) []Window {
	sort.Slice(ws, func(a, b int) bool { return ws[a].Lo < ws[b].Lo })
	var out []Window
	for _, w := range ws {
		if k := len(out) - 1; k >= 0 && w.Lo <= out[k].Hi+1 {
			out[k].Hi = max(out[k].Hi, w.Hi)
			continue
		}
		out = append(out, w)
	}
	return out
}

// distance is how far [lo, hi] is from the nearest of the sorted, disjoint
// spans; 0 when it overlaps one.
func distance(spans []Window, lo, hi int64) int64 {
	j := sort.Search(len(spans), func(j int) bool { return spans[j].Hi >= lo })
	best := int64(1<<62 - 1)
	if j < len(spans) {
		best = max(0, spans[j].Lo-hi)
	}
	if j > 0 {
		best = min(best, lo-spans[j-1].Hi)
	}
	return best
}

// inWindows reports whether [lo, hi] meets a window (always, when the page
// draws the whole history).
func (p *page) inWindows(lo, hi int64) bool {
	if p.wins == nil {
		return true
	}
	j := sort.Search(len(p.wins), func(j int) bool { return p.wins[j].Hi >= lo })
	return j < len(p.wins) && p.wins[j].Lo <= hi
}

// omitted says in words what the page leaves out.
func (p *page) omitted(d int64, around string) string {
	unit := p.h.Header.TimeUnit
	t := func(v int64) string { return group(v) + " " + unit }
	gaps := make([]int, len(p.wins)+1) // gaps[k]: ops before window k (k = len: after the last)
	for i := range p.h.Ops {
		if p.slot[i] >= 0 {
			continue
		}
		c := opStart(&p.h.Ops[i])
		gaps[sort.Search(len(p.wins), func(k int) bool { return p.wins[k].Hi >= c })]++
	}
	var s strings.Builder
	fmt.Fprintf(&s, "This history has %s operations; the page draws %s of them: ", group(int64(len(p.h.Ops))), group(int64(len(p.drawn))))
	if d > 0 {
		fmt.Fprintf(&s, "every operation within %s of %s", t(d-1), around)
	} else {
		fmt.Fprintf(&s, "the first in the file of those that overlap %s", around)
	}
	s.WriteString(" (t = ")
	for k, w := range p.wins {
		if k > 0 {
			if k == len(p.wins)-1 {
				s.WriteString(" and ")
			} else {
				s.WriteString(", ")
			}
		}
		s.WriteString(group(w.Lo) + "…" + t(w.Hi))
	}
	s.WriteString("). Not drawn: ")
	var parts []string
	for k, c := range gaps {
		if c == 0 {
			continue
		}
		switch {
		case k == 0:
			parts = append(parts, fmt.Sprintf("%s operations before t = %s", group(int64(c)), t(p.wins[0].Lo)))
		case k == len(p.wins):
			parts = append(parts, fmt.Sprintf("%s after t = %s", group(int64(c)), t(p.wins[k-1].Hi)))
		default:
			parts = append(parts, fmt.Sprintf("%s between t = %s and %s", group(int64(c)), group(p.wins[k-1].Hi), t(p.wins[k].Lo)))
		}
	}
	if d == 0 {
		parts = append(parts, "the rest of the operations that overlap "+around)
	}
	s.WriteString(strings.Join(parts, ", "))
	s.WriteString(".")
	return s.String()
}

// group writes n with thousands separators: 1,000,000.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, s[i])
	}
	if neg {
		return "-" + string(b)
	}
	return string(b)
}

// placeFaults puts each fault on the rows it hit: the process named by its
// target; else every process of the owner it names (a holder's main and
// renewal loops); else every incarnation of it ("h1#2" restarted from
// "h1"); else a row of its own (coordinator, resource, server).
func (p *page) placeFaults() {
	for _, f := range p.h.Faults {
		pf := pageFault{rec: f, lane: -1}
		if i, ok := p.procIdx[f.Target]; ok {
			pf.procs = []int{i}
		} else {
			for i, o := range p.procOwner {
				if o == f.Target && f.Target != "" {
					pf.procs = append(pf.procs, i)
				}
			}
			if pf.procs == nil {
				for i, name := range p.procs {
					if strings.HasPrefix(name, f.Target+"#") {
						pf.procs = append(pf.procs, i)
					}
				}
			}
		}
		if pf.procs == nil {
			target := f.Target
			if target == "" {
				target = "(no target)"
			}
			pf.lane = slicesIndex(p.lanes, target)
			if pf.lane < 0 {
				pf.lane = len(p.lanes)
				p.lanes = append(p.lanes, target)
			}
		}
		p.faults = append(p.faults, pf)
	}
	// The well-known targets first, in a fixed order; others as they came.
	rank := func(s string) int {
		switch s {
		case "coordinator":
			return 0
		case "resource":
			return 1
		case "server":
			return 2
		}
		return 3
	}
	order := make([]int, len(p.lanes))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return rank(p.lanes[order[a]]) < rank(p.lanes[order[b]]) })
	newIdx := make([]int, len(order))
	lanes := make([]string, len(order))
	for to, from := range order {
		newIdx[from], lanes[to] = to, p.lanes[from]
	}
	p.lanes = lanes
	for i := range p.faults {
		if p.faults[i].lane >= 0 {
			p.faults[i].lane = newIdx[p.faults[i].lane]
		}
	}
}

func slicesIndex(ss []string, s string) int {
	for i, x := range ss {
		if x == s {
			return i
		}
	}
	return -1
}

// timeBase is 0 unless the history's times are too large for a double to
// hold exactly (nanoseconds since 1970): then its earliest time.
func (p *page) timeBase() int64 {
	const exact = 1 << 52
	lo, hi := int64(0), int64(0)
	see := func(t int64) { lo, hi = min(lo, t), max(hi, t) }
	for i := range p.h.Ops {
		see(opStart(&p.h.Ops[i]))
		see(opEnd(&p.h.Ops[i]))
	}
	for _, f := range p.h.Faults {
		see(f.Start)
		see(f.End)
	}
	if lo > -exact && hi < exact {
		return 0
	}
	first := int64(1<<63 - 1)
	for i := range p.h.Ops {
		first = min(first, opStart(&p.h.Ops[i]))
	}
	return first
}

func (p *page) str(s string) int64 {
	if i, ok := p.strIdx[s]; ok {
		return int64(i)
	}
	p.strIdx[s] = len(p.strs)
	p.strs = append(p.strs, s)
	return int64(len(p.strs) - 1)
}

func (p *page) slotOf(i int) int64 {
	if i < 0 || i >= len(p.slot) {
		return -1
	}
	return int64(p.slot[i])
}

// Op flags in the page data.
const (
	flagReturned = 1 << iota
	flagOK
	flagAt
	flagValue
	flagApplied // never returned; the linearization applied it
)

// data renders the page's JSON: one field per line, so that a golden diff
// reads; the op columns are delta-coded integers. The sections are written
// in this order because the strings are interned as they are written: the
// ops', then the terms' owners.
func (p *page) data(title string) []byte {
	j := &jsonBuf{b: make([]byte, 0, 64*1024+32*len(p.drawn))}
	j.raw("{")
	p.writeHeader(j, title)
	p.writeProperties(j)
	p.writeRows(j)
	p.writeOps(j)
	p.writeLin(j)
	omittedTerms := p.writeTerms(j)
	omittedBeliefs := p.writeBeliefs(j)
	p.writeFaults(j)
	p.writeViolations(j)
	p.writeOmitted(j, omittedTerms, omittedBeliefs)

	// Strings last: every column above has interned into it.
	j.field("strs", false)
	j.strs(p.strs)
	j.raw("}\n")
	return j.b
}

// writeHeader writes the page's first fields: what the history is, how to
// replay it and the header's time unit, clock uncertainty and semantics.
func (p *page) writeHeader(j *jsonBuf, title string) {
	h := p.h
	j.field("version", true)
	j.int(1)
	j.field("title", false)
	j.str(title)
	j.field("name", false)
	j.str(h.Name)
	j.field("replay", false)
	j.str(p.in.Replay)
	if len(p.in.Parameters) > 0 {
		j.field("params", false)
		j.strs(p.in.Parameters)
	}
	j.field("secondary", false)
	j.str(safeLink(p.in.Secondary))
	j.field("unit", false)
	unit := h.Header.TimeUnit
	if unit == "" {
		unit = "ms"
	}
	j.str(unit)
	j.field("uncertainty", false)
	j.int(h.Header.ClockUncertainty)
	j.field("semantics", false)
	j.str(h.Header.Semantics.String())
	j.field("fences", false)
	j.str(h.Header.Fences.String())
	j.field("base", false)
	j.str(strconv.FormatInt(p.base, 10))
	j.field("total", false)
	j.int(int64(len(h.Ops)))
}

// writeProperties writes the checker's verdict per property: [name, verdict].
func (p *page) writeProperties(j *jsonBuf) {
	j.field("properties", false)
	j.raw("[")
	if r := p.in.Check; r != nil {
		for i, pr := range r.Properties {
			if i > 0 {
				j.raw(",")
			}
			j.strPair(pr.Name, pr.Verdict.String())
		}
	}
	j.raw("]")
}

// writeRows writes the timeline's rows: the processes ([name, owner]), the
// keys and the fault lanes.
func (p *page) writeRows(j *jsonBuf) {
	j.field("procs", false)
	j.raw("[")
	for i, name := range p.procs {
		if i > 0 {
			j.raw(",")
		}
		j.strPair(name, p.procOwner[i])
	}
	j.raw("]")
	j.field("keys", false)
	j.strs(p.keys)
	j.field("lanes", false)
	j.strs(p.lanes)
}

// appliedOps is the set of h.Ops indices that some linearization applied.
func (p *page) appliedOps() map[int]bool {
	applied := map[int]bool{}
	if r := p.in.Check; r != nil {
		for _, kl := range r.Linearizations {
			for _, s := range kl.Steps {
				if s.Applied {
					applied[s.Op] = true
				}
			}
		}
	}
	return applied
}

// opCols are the drawn ops' columns, one value per drawn op.
type opCols struct {
	line, proc, key, kind, call, ret, at, fence, ttl, flags, val, err, owner []int64
	// ownersDiffer is whether some op's owner is not its process row's.
	ownersDiffer bool
}

// opColumns computes the op columns, interning the ops' values, errors and
// owners in that order.
func (p *page) opColumns() *opCols {
	h := p.h
	applied := p.appliedOps()
	n := len(p.drawn)
	cols := &opCols{}
	for _, c := range []*[]int64{&cols.line, &cols.proc, &cols.key, &cols.kind, &cols.call, &cols.ret, &cols.at, &cols.fence, &cols.ttl, &cols.flags, &cols.val, &cols.err, &cols.owner} {
		*c = make([]int64, n)
	}
	var prevLine, prevCall int64
	prevCall = p.base
	for s, i := range p.drawn {
		op := &h.Ops[i]
		cols.line[s] = int64(op.Line) - prevLine
		prevLine = int64(op.Line)
		pi := p.procIdx[op.Process]
		cols.proc[s] = int64(pi)
		cols.key[s] = int64(p.keyIdx[op.Key])
		cols.kind[s] = int64(op.Kind)
		cols.call[s] = op.Call - prevCall
		prevCall = op.Call
		var fl int64
		if op.Returned {
			fl |= flagReturned
			cols.ret[s] = op.Return - op.Call
			if op.OK {
				fl |= flagOK
			}
		}
		if op.HasAt {
			fl |= flagAt
			cols.at[s] = op.At - op.Call
		}
		if op.HasValue || op.Kind == model.Write {
			fl |= flagValue
			cols.val[s] = p.str(op.Value) + 1
		}
		if applied[i] {
			fl |= flagApplied
		}
		cols.flags[s] = fl
		cols.fence[s] = op.Fence
		cols.ttl[s] = op.TTL
		if op.Error != "" {
			cols.err[s] = p.str(op.Error) + 1
		}
		cols.owner[s] = p.str(op.Owner)
		if op.Owner != p.procOwner[pi] {
			cols.ownersDiffer = true
		}
	}
	return cols
}

// writeOps writes the op columns.
func (p *page) writeOps(j *jsonBuf) {
	cols := p.opColumns()
	j.field("ops", false)
	j.raw("{\"n\":")
	j.int(int64(len(p.drawn)))
	j.opCol("line", cols.line)
	j.opCol("proc", cols.proc)
	if len(p.keys) > 1 {
		j.opCol("key", cols.key)
	}
	j.opCol("kind", cols.kind)
	j.opCol("call", cols.call)
	j.opCol("ret", cols.ret)
	j.opCol("at", cols.at)
	j.opCol("fence", cols.fence)
	j.opCol("ttl", cols.ttl)
	j.opCol("flags", cols.flags)
	j.opCol("val", cols.val)
	j.opCol("err", cols.err)
	if cols.ownersDiffer {
		j.opCol("owner", cols.owner)
	}
	j.raw("}")
}

// opCol writes one op column on a line of its own, unless it is all zero
// and may be left out.
func (j *jsonBuf) opCol(name string, c []int64) {
	if !slices.ContainsFunc(c, func(v int64) bool { return v != 0 }) && name != "line" && name != "proc" && name != "kind" && name != "call" && name != "flags" {
		return // all zero: the script's default (an interval-mode history has no at)
	}
	j.raw(",\n ")
	j.str(name)
	j.raw(":")
	j.ints(c)
}

// writeLin writes the linearizations, one per key: the drawn slots of its
// steps and how many steps fall on ops that are not drawn.
func (p *page) writeLin(j *jsonBuf) {
	j.field("lin", false)
	j.raw("[")
	if r := p.in.Check; r != nil {
		for k, kl := range r.Linearizations {
			var steps []int64
			var omitted int64
			for _, s := range kl.Steps {
				if sl := p.slotOf(s.Op); sl >= 0 {
					steps = append(steps, sl)
				} else {
					omitted++
				}
			}
			if k > 0 {
				j.raw(",")
			}
			j.raw("\n {\"key\":")
			j.int(int64(p.keyIdx[kl.Key]))
			j.raw(",\"verdict\":")
			j.str(kl.Verdict.String())
			j.raw(",\"omitted\":")
			j.int(omitted)
			j.raw(",\"steps\":")
			// delta-coded: linearizations mostly follow file order
			prev := int64(0)
			delta := make([]int64, len(steps))
			for i, s := range steps {
				delta[i], prev = s-prev, s
			}
			j.ints(delta)
			j.raw("}")
		}
	}
	j.raw("]")
}

// writeTerms writes the terms drawn and returns how many it left out,
// being outside the drawn windows.
//
// Terms: [key, owner, fence, start lo, hi, granted lo, hi, end lo, hi,
// cause, linearized, grant op, release op, renewals, last renewal op].
// The start's lo is the change from the previous term's; every other
// time is relative to it.
func (p *page) writeTerms(j *jsonBuf) (omitted int) {
	j.field("terms", false)
	j.raw("[")
	first := true
	prevStart := p.base
	for _, t := range p.terms {
		if !p.inWindows(t.Start.Lo, max(t.End.Hi, t.Granted.Hi)) {
			omitted++
			continue
		}
		if !first {
			j.raw(",")
		}
		first = false
		j.raw("\n [")
		lastRenew := -1
		if len(t.Renewals) > 0 {
			lastRenew = t.Renewals[len(t.Renewals)-1]
		}
		lin := int64(0)
		if t.Linearized {
			lin = 1
		}
		s0 := t.Start.Lo
		j.b = appendInts(j.b, int64(p.keyIdx[t.Key]), p.str(t.Owner), t.Fence,
			s0-prevStart, t.Start.Hi-s0, t.Granted.Lo-s0, t.Granted.Hi-s0, t.End.Lo-s0, t.End.Hi-s0,
			int64(t.EndedBy), lin, p.slotOf(t.Grant), p.slotOf(t.Release), int64(len(t.Renewals)), p.slotOf(lastRenew))
		prevStart = s0
		j.raw("]")
	}
	j.raw("]")
	return omitted
}

// writeBeliefs writes the beliefs drawn and returns how many it left out,
// being outside the drawn windows.
//
// Beliefs: [process row, fence, from, to, open].
func (p *page) writeBeliefs(j *jsonBuf) (omitted int) {
	j.field("beliefs", false)
	j.raw("[")
	first := true
	for _, bl := range p.in.Beliefs {
		if !p.inWindows(bl.From, bl.To) {
			omitted++
			continue
		}
		if !first {
			j.raw(",")
		}
		first = false
		open := int64(0)
		if bl.Open {
			open = 1
		}
		j.raw("\n [")
		j.b = appendInts(j.b, int64(p.procIdx[bl.Process]), bl.Fence, bl.From-p.base, bl.To-p.base, open)
		j.raw("]")
	}
	j.raw("]")
	return omitted
}

// writeFaults writes the fault records, each with the lane or the process
// rows it is drawn on.
func (p *page) writeFaults(j *jsonBuf) {
	j.field("faults", false)
	j.raw("[")
	for i, f := range p.faults {
		if i > 0 {
			j.raw(",")
		}
		r := f.rec
		j.raw("\n {")
		j.key("kind", true)
		j.str(r.Kind)
		j.key("target", false)
		j.str(r.Target)
		if r.Peer != "" {
			j.key("peer", false)
			j.str(r.Peer)
		}
		j.key("start", false)
		j.int(r.Start - p.base)
		if r.HasEnd {
			j.key("end", false)
			j.int(r.End - p.base)
		}
		if r.Amount != 0 {
			j.key("amount", false)
			j.int(r.Amount)
		}
		if r.Detail != "" {
			j.key("detail", false)
			j.str(r.Detail)
		}
		if r.Partial {
			j.key("partial", false)
			j.bool(true)
		}
		if r.Line > 0 {
			j.key("line", false)
			j.int(int64(r.Line))
		}
		if f.lane >= 0 {
			j.key("lane", false)
			j.int(int64(f.lane))
		} else {
			j.key("procs", false)
			j.b = appendIntList(j.b, f.procs)
		}
		j.raw("}")
	}
	j.raw("]")
}

// writeViolations writes the checker's violations and the run's findings,
// their ops as drawn slots (ops not drawn are left out).
func (p *page) writeViolations(j *jsonBuf) {
	j.field("violations", false)
	j.raw("[")
	for i, v := range p.viols {
		if i > 0 {
			j.raw(",")
		}
		j.raw("\n {")
		j.key("property", true)
		j.str(v.property)
		j.key("run", false)
		j.bool(v.run)
		if v.hasKey {
			j.key("key", false)
			j.str(v.key)
		}
		j.key("lines", false)
		j.b = appendIntList(j.b, v.lines)
		j.key("ops", false)
		var slots []int64
		for _, o := range v.ops {
			if s := p.slotOf(o); s >= 0 {
				slots = append(slots, s)
			}
		}
		j.ints(slots)
		j.key("focus", false)
		j.int(p.slotOf(v.focus))
		j.key("from", false)
		j.int(v.from - p.base)
		j.key("to", false)
		j.int(v.to - p.base)
		j.key("faults", false)
		j.b = appendIntList(j.b, v.faults)
		j.key("story", false)
		j.str(v.story)
		j.raw("}")
	}
	j.raw("]")
}

// writeOmitted writes what the page left out: null when it drew the whole
// history, else the words and the windows it drew.
func (p *page) writeOmitted(j *jsonBuf, omittedTerms, omittedBeliefs int) {
	j.field("omitted", false)
	if p.omit == "" {
		j.raw("null")
		return
	}
	j.raw("{\"text\":")
	text := p.omit
	if omittedTerms+omittedBeliefs > 0 {
		text += fmt.Sprintf(" Terms and beliefs outside those times are not drawn either (%s terms, %s beliefs).", group(int64(omittedTerms)), group(int64(omittedBeliefs)))
	}
	j.str(text)
	j.raw(",\"windows\":[")
	for k, w := range p.wins {
		if k > 0 {
			j.raw(",")
		}
		j.b = appendInts(append(j.b, '['), w.Lo-p.base, w.Hi-p.base)
		j.raw("]")
	}
	j.raw("]}")
}

// safeLink keeps a link that is relative or http(s)/file; anything else (a
// javascript: URL) becomes "" so that the page draws no link.
func safeLink(s string) string {
	scheme, _, found := strings.Cut(s, ":")
	if !found || strings.ContainsAny(scheme, "/?#") {
		return s // relative
	}
	switch strings.ToLower(strings.TrimSpace(scheme)) {
	case "http", "https", "file":
		return s
	}
	return ""
}

func appendInts(b []byte, ns ...int64) []byte {
	for i, n := range ns {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, n, 10)
	}
	return b
}

func appendIntList(b []byte, ns []int) []byte {
	b = append(b, '[')
	for i, n := range ns {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(n), 10)
	}
	return append(b, ']')
}
