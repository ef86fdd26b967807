package model

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"sync"
)

// Reading history format v1 (docs/specification.md §4). Where the format's text leaves
// room, the reader decides as follows:
//
//   - A JSON null counts as an absent field, for every field ("return":null
//     is the documented case). So "format":null does not make a header.
//   - A field may appear once in an object; a duplicate (even a null one)
//     is an error, since which of the two counts would be a guess.
//   - A field the format does not know, or one that belongs to another kind
//     of line (a "ttl" on a header), is ignored with a warning, once per
//     distinct field name (ReadOptions.Warn); ReadOptions.Strict refuses it.
//   - Times (call, return, at, a fault's start and end), ttl and
//     clock_uncertainty lie within MaxTime, and fences within MaxFence, so
//     that the checker's clock arithmetic (call - u, return + u, at + ttl)
//     is exact.
//   - A history with no operation at all is refused: a recorder that wrote
//     nothing has not shown that anything went right.
//   - Fields that do not belong to an op are ignored like unknown fields,
//     without a type check: ttl except on acquire and renew, value except on
//     write and read, ok on an op that never returned.
//   - fence is checked (an integer >= 1) and kept on every kind of op.
//   - owner may be "" (a distinct owner); process may not.
//   - A process's ops must also be called in file order after an op that
//     never returned: call >= that op's call (its return does not bound it).
//   - Keys are matched exactly (case-sensitively): "Call" is an unknown field.
//   - A line must be valid UTF-8; a UTF-8 byte order mark on line 1 is
//     skipped; "\r\n" line ends are fine (JSON whitespace).

// ParseError is an input error in a history: where and why. Every rule of
// the format (docs/specification.md §4) that a line breaks is reported as one.
type ParseError struct {
	Name   string // the history's name: a file path, or "-" for stdin
	Line   int    // 1-based physical line, counting the header and blank lines
	Reason string // what is wrong, in words a person understands
}

func (e *ParseError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.Name, e.Reason)
	}
	return fmt.Sprintf("%s:%d: %s", e.Name, e.Line, e.Reason)
}

// Bounds on the Reader's string interning tables. Process, owner, key and
// error strings repeat on nearly every line, so interning them saves one
// allocation per field per line; values repeat less, so their table is
// smaller. Past the bound a string is simply allocated.
const (
	maxInterned       = 4096
	maxInternedValues = 1024
)

// procState is what is remembered about a process: the earliest time its
// next operation may be called.
type procState struct {
	bound    int64 // the previous op's return, or its call when it never returned
	line     int   // the previous op's line (0: not read from a file)
	seq      int   // the previous op's position among the ops checked, from 1
	returned bool  // whether the previous op returned
}

// orderChecker checks the one rule that spans lines: a process's ops appear
// in the order it issued them and do not overlap. It keeps one entry per
// process.
type orderChecker struct {
	procs map[string]*procState
	seq   int // ops checked so far
}

func newOrderChecker() orderChecker { return orderChecker{procs: make(map[string]*procState)} }

// check checks op against its process's previous op and records it.
func (c *orderChecker) check(op *Op) string {
	c.seq++
	st := c.procs[op.Process]
	if st == nil {
		st = new(procState)
		c.procs[op.Process] = st
	} else if op.Call < st.bound {
		where := fmt.Sprintf("line %d", st.line)
		if st.line == 0 {
			where = fmt.Sprintf("operation %d", st.seq)
		}
		if st.returned {
			return fmt.Sprintf("process %q: call %d is before the return %d of its previous operation (%s); a process's operations must not overlap",
				op.Process, op.Call, st.bound, where)
		}
		return fmt.Sprintf("process %q: call %d is before the call %d of its previous operation (%s, which never returned); a process's operations must appear in the order it issued them",
			op.Process, op.Call, st.bound, where)
	}
	*st = procState{bound: op.Call, line: op.Line, seq: c.seq, returned: op.Returned}
	if op.Returned {
		st.bound = op.Return
	}
	return ""
}

// decoder checks lines one at a time against every rule of the format but
// the order of each process's ops (orderChecker's job).
type decoder struct {
	hdr        Header // DefaultHeader until a header line is read
	headerLine int    // the header's line; 0 when there is none
	sawLine    bool   // a non-blank line was decoded
	slow       bool   // decode every line with encoding/json (tests)
	strict     bool   // an unknown field is an error (ReadOptions.Strict)
	raw        rawLine
	strs       map[string]string
	vals       map[string]string
	// unknown holds the distinct field names warned about; warnings the
	// warnings not yet handed on, in line order.
	unknown  map[string]bool
	warnings []Warning
}

func newDecoder() decoder {
	return decoder{hdr: DefaultHeader(), strs: make(map[string]string), vals: make(map[string]string), unknown: make(map[string]bool)}
}

// lineKind is what a non-blank line holds.
type lineKind uint8

const (
	lineBlank lineKind = iota
	lineHeader
	lineOp
	lineFault
)

// decodeLine decodes physical line lineNo into *op (which must be the zero
// Op) or *fault (the zero FaultRecord). It returns what the line held, and
// the reason when it is wrong.
func (d *decoder) decodeLine(line []byte, lineNo int, op *Op, fault *FaultRecord) (lineKind, string) {
	if isBlank(line) {
		return lineBlank, ""
	}
	if d.slow || !decodeFast(line, &d.raw) {
		if reason := decodeSlow(line, &d.raw); reason != "" {
			return lineBlank, reason
		}
	}
	kind, allowed, what := lineOp, uint32(opFields), "an operation"
	switch {
	case d.raw.has(fFormat):
		kind, allowed, what = lineHeader, headerFields, "the header"
	case d.raw.has(fFault):
		if d.raw.seen&(1<<fProcess) != 0 {
			return lineBlank, `a line is an operation ("process") or a fault record ("fault"), not both`
		}
		kind, allowed, what = lineFault, faultFields, "a fault record"
	}
	if reason := d.unknownFields(allowed, what, lineNo); reason != "" {
		return lineBlank, reason
	}
	switch kind {
	case lineFault:
		d.sawLine = true
		fault.Line = lineNo
		return lineFault, d.buildFault(fault)
	case lineOp:
		d.sawLine = true
		op.Line = lineNo
		return lineOp, d.buildOp(op)
	}
	if d.sawLine {
		if d.headerLine != 0 {
			return lineBlank, fmt.Sprintf("a second header line (it has a \"format\" field); the header is line %d", d.headerLine)
		}
		return lineBlank, "a header line (it has a \"format\" field) must be the first non-blank line of the history"
	}
	d.sawLine = true
	h, reason := parseHeader(&d.raw)
	if reason != "" {
		return lineBlank, reason
	}
	d.hdr = h
	d.headerLine = lineNo
	return lineHeader, ""
}

// buildFault checks the fault-record line in d.raw and fills *f, or
// returns the reason it is wrong.
func (d *decoder) buildFault(f *FaultRecord) string {
	raw := &d.raw
	b, _, reason := raw.str(fFault)
	if reason != "" {
		return reason
	}
	f.Kind = intern(d.strs, b, maxInterned)
	b, present, reason := raw.str(fTarget)
	if reason != "" {
		return reason
	}
	if !present {
		return `field "target" is required for a fault record`
	}
	f.Target = intern(d.strs, b, maxInterned)
	var ok bool
	if f.Start, ok, reason = raw.integer(fStart); reason != "" {
		return reason
	} else if !ok {
		return `field "start" is required for a fault record`
	}
	if f.End, f.HasEnd, reason = raw.integer(fEnd); reason != "" {
		return reason
	}
	if f.Amount, _, reason = raw.integer(fAmount); reason != "" {
		return reason
	}
	if b, _, reason = raw.str(fPeer); reason != "" {
		return reason
	}
	f.Peer = intern(d.strs, b, maxInterned)
	if b, _, reason = raw.str(fDetail); reason != "" {
		return reason
	}
	f.Detail = string(b)
	if f.Partial, _, reason = raw.boolean(fPartial); reason != "" {
		return reason
	}
	return ruleFault(f)
}

// maxWarnedFields bounds the distinct unknown field names remembered (and
// warned about, once each); past it one last warning says so.
const maxWarnedFields = 64

// unknownFields warns about (or, when strict, refuses) the fields of the
// line that the format does not know or that do not belong to what the
// line holds: first the known fields of another kind of line, in the
// format's order, then the unknown ones, in the line's order.
func (d *decoder) unknownFields(allowed uint32, what string, lineNo int) string {
	foreign := d.raw.seen &^ allowed
	if foreign == 0 && len(d.raw.unknown) == 0 {
		return ""
	}
	note := func(name string) string {
		if d.strict {
			return fmt.Sprintf("unknown field %s in %s (--strict refuses unknown fields)", quoteShort(name), what)
		}
		if d.unknown[name] || len(d.unknown) > maxWarnedFields {
			return ""
		}
		d.unknown[name] = true
		msg := fmt.Sprintf("unknown field %s in %s, ignored", quoteShort(name), what)
		if len(d.unknown) > maxWarnedFields {
			msg = "more unknown fields, not listed"
		}
		d.warnings = append(d.warnings, Warning{Line: lineNo, Field: name, Message: msg})
		return ""
	}
	for f := range nFields {
		if foreign&(1<<f) != 0 {
			if reason := note(fieldNames[f]); reason != "" {
				return reason
			}
		}
	}
	for i := range d.raw.unknown {
		if reason := note(string(d.raw.bytes(&d.raw.unknown[i]))); reason != "" {
			return reason
		}
	}
	return ""
}

// Warning is a line the reader accepted but a person should look at: a
// field it does not know (a typo such as "retrun" silently turns an op
// into one that never answered), once per distinct field name.
type Warning struct {
	Name    string // the history's name
	Line    int    // the first line the field appeared on
	Field   string // the field's name
	Message string // what was found, in words
}

func (w Warning) String() string { return fmt.Sprintf("%s:%d: %s", w.Name, w.Line, w.Message) }

// ReadOptions tune reading. The zero value is the format's defaults:
// unknown fields are ignored, and nobody is told.
type ReadOptions struct {
	// Strict refuses a field the format does not know (a *ParseError)
	// instead of ignoring it.
	Strict bool
	// Warn, when set, is told of each distinct unknown field once, in line
	// order, before the line's op is returned.
	Warn func(Warning)
	// Workers > 1 makes a Reader decode ahead on that many goroutines
	// (history_parallel.go): the same results, sooner on several CPUs.
	Workers int
}

// maxFaults bounds the fault records a Reader keeps: they are for reports,
// and a history of millions of them would otherwise grow without bound.
// Past it, the rest are checked and counted but not kept.
const maxFaults = 1 << 16

// Reader reads a history (format v1) one operation at a time. Its memory
// does not grow with the length of the history: only with the longest line,
// the number of distinct processes and strings, and the fault records
// (at most 65,536 are kept).
type Reader struct {
	name    string
	opts    ReadOptions
	br      *bufio.Reader
	long    []byte // a line longer than br's buffer, assembled
	line    int    // physical lines read so far
	dec     decoder
	order   orderChecker
	ops     int // ops returned so far
	faults  []FaultRecord
	dropped int   // fault records past maxFaults
	err     error // sticky: io.EOF, or the first error
	pipe    *pipeline
}

// NewReader returns a Reader of the history in r with the default options.
// name is the history's name for messages (a file path, or "-" for stdin).
func NewReader(r io.Reader, name string) *Reader { return ReadOptions{}.NewReader(r, name) }

// NewReader returns a Reader of the history in r with options o.
func (o ReadOptions) NewReader(r io.Reader, name string) *Reader {
	rd := &Reader{
		name:  name,
		opts:  o,
		br:    bufio.NewReaderSize(r, 64<<10),
		dec:   newDecoder(),
		order: newOrderChecker(),
	}
	rd.dec.strict = o.Strict
	return rd
}

// Header returns the history's header, or DefaultHeader() when it has none.
// It is valid after the first call to Next.
func (r *Reader) Header() Header { return r.dec.hdr }

// Faults returns the fault records read so far, in file order (at most
// 65,536; FaultsDropped counts the rest).
func (r *Reader) Faults() []FaultRecord { return r.faults }

// FaultsDropped is the number of fault records read but not kept.
func (r *Reader) FaultsDropped() int { return r.dropped }

// Line is the number of physical lines read so far.
func (r *Reader) Line() int { return r.line }

// Next returns the next operation, checked against every rule of the format
// that can be checked so far. Fault records are read on the way (Faults).
// It returns io.EOF at the end of the history, a *ParseError for input that
// breaks the format (an input with no operation at all is one), and any
// other error when reading fails. After an error, Next keeps returning it.
func (r *Reader) Next() (Op, error) {
	var op Op
	if err := r.NextInto(&op); err != nil {
		return Op{}, err
	}
	return op, nil
}

// NextInto is Next into *op, which it overwrites: a reader of millions of
// ops that keeps them in its own storage saves a copy of each.
func (r *Reader) NextInto(op *Op) error {
	*op = Op{}
	return r.next(op)
}

var utf8BOM = []byte("\xef\xbb\xbf")

// noOpReason is the reason an input with no operation is refused.
const noOpReason = "the history has no operation (nothing but a header, fault records or blank lines): a recorder that wrote nothing has not shown that anything went right"

// next reads the next op into *op, which must be the zero Op.
func (r *Reader) next(op *Op) error {
	if r.err != nil {
		return r.err
	}
	if r.pipe == nil && r.opts.Workers > 1 && r.dec.sawLine {
		r.startPipeline()
	}
	if r.pipe != nil {
		return r.nextParallel(op)
	}
	for {
		line, err := r.readLine()
		if err != nil {
			if err != io.EOF {
				err = fmt.Errorf("%s:%d: %w", r.name, r.line+1, err)
			} else if r.ops == 0 {
				r.line = max(r.line, 1)
				return r.fail(noOpReason)
			}
			r.err = err
			return err
		}
		r.line++
		if r.line == 1 {
			line = bytes.TrimPrefix(line, utf8BOM)
		}
		var fault FaultRecord
		kind, reason := r.dec.decodeLine(line, r.line, op, &fault)
		r.flushWarnings()
		if reason == "" && kind == lineOp {
			reason = r.order.check(op)
		}
		if reason != "" {
			return r.fail(reason)
		}
		switch kind {
		case lineOp:
			r.ops++
			return nil
		case lineFault:
			if len(r.faults) < maxFaults {
				r.faults = append(r.faults, fault)
			} else {
				r.dropped++
			}
		}
	}
}

func (r *Reader) flushWarnings() {
	for _, w := range r.dec.warnings {
		if r.opts.Warn != nil {
			w.Name = r.name
			r.opts.Warn(w)
		}
	}
	r.dec.warnings = r.dec.warnings[:0]
}

func (r *Reader) fail(reason string) error {
	r.err = &ParseError{Name: r.name, Line: r.line, Reason: reason}
	return r.err
}

// readLine returns the next line without its '\n'. The last line of the
// input need not end with one. The line is valid until the next call.
func (r *Reader) readLine() ([]byte, error) {
	r.long = r.long[:0]
	for {
		b, err := r.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			r.long = append(r.long, b...)
			continue
		}
		if len(r.long) > 0 {
			r.long = append(r.long, b...)
			b = r.long
		}
		if err != nil {
			if err == io.EOF && len(b) > 0 {
				return b, nil
			}
			return nil, err
		}
		return b[:len(b)-1], nil
	}
}

// intern returns b as a string, shared with earlier equal strings.
func intern(m map[string]string, b []byte, max int) string {
	if s, ok := m[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(m) < max {
		m[s] = s
	}
	return s
}

// The accessors below check one field's JSON type. They return the reason
// when it is wrong; present is false when the field is absent or null.

func (raw *rawLine) str(f field) (b []byte, present bool, reason string) {
	if !raw.has(f) {
		return nil, false, ""
	}
	v := &raw.v[f]
	if v.kind != jString {
		return nil, true, fmt.Sprintf("field %q: want a string, got %s", f, v.kind)
	}
	return raw.bytes(v), true, ""
}

func (raw *rawLine) integer(f field) (n int64, present bool, reason string) {
	if !raw.has(f) {
		return 0, false, ""
	}
	v := &raw.v[f]
	if v.kind != jNumber {
		return 0, true, fmt.Sprintf("field %q: want an integer, got %s", f, v.kind)
	}
	if v.nOK {
		return v.n, true, ""
	}
	lit := raw.bytes(v)
	n, frac, ok := parseIntLit(lit)
	if frac {
		return 0, true, fmt.Sprintf("field %q: want an integer, got %s", f, shorten(string(lit)))
	}
	if !ok {
		return 0, true, fmt.Sprintf("field %q: %s does not fit in a 64-bit integer", f, shorten(string(lit)))
	}
	return n, true, ""
}

func (raw *rawLine) boolean(f field) (t, present bool, reason string) {
	if !raw.has(f) {
		return false, false, ""
	}
	v := &raw.v[f]
	if v.kind != jBool {
		return false, true, fmt.Sprintf("field %q: want true or false, got %s", f, v.kind)
	}
	return v.t, true, ""
}

// parseHeader checks a header line.
func parseHeader(raw *rawLine) (Header, string) {
	h := DefaultHeader()
	b, _, reason := raw.str(fFormat)
	if reason != "" {
		return h, "header " + reason
	}
	if string(b) != "leasecheck/history" {
		return h, fmt.Sprintf("header field \"format\": want \"leasecheck/history\", got %s", quoteShort(string(b)))
	}
	v, present, reason := raw.integer(fVersion)
	if reason != "" {
		return h, "header " + reason
	}
	if !present {
		return h, "header field \"version\" is required"
	}
	if v != 1 {
		return h, fmt.Sprintf("unsupported history version %d (this leasecheck reads version 1)", v)
	}
	b, present, reason = raw.str(fTimeUnit)
	if reason != "" {
		return h, "header " + reason
	}
	if present {
		switch s := string(b); s {
		case "ns", "us", "ms", "s":
			h.TimeUnit = s
		default:
			return h, fmt.Sprintf("header field \"time_unit\": want one of ns, us, ms, s, got %s", quoteShort(s))
		}
	}
	u, present, reason := raw.integer(fClockUncertainty)
	if reason != "" {
		return h, "header " + reason
	}
	if present {
		h.ClockUncertainty = u
		if reason := ruleUncertainty(u); reason != "" {
			return h, reason
		}
	}
	b, present, reason = raw.str(fSemantics)
	if reason != "" {
		return h, "header " + reason
	}
	if present {
		sem, ok := ParseSemantics(string(b))
		if !ok {
			return h, fmt.Sprintf("header field \"semantics\": want \"seed\" or \"fenced-storage\", got %s", quoteShort(string(b)))
		}
		h.Semantics = sem
	}
	b, present, reason = raw.str(fFences)
	if reason != "" {
		return h, "header " + reason
	}
	if present {
		order, ok := parseFenceOrder(string(b))
		if !ok {
			return h, fmt.Sprintf("header field \"fences\": want \"sequential\", \"increasing\" or \"none\", got %s", quoteShort(string(b)))
		}
		h.Fences = order
	}
	late, present, reason := raw.integer(fExpiryLateness)
	if reason != "" {
		return h, "header " + reason
	}
	if present {
		h.ExpiryLateness = late
		if reason := ruleLateness(late); reason != "" {
			return h, reason
		}
	}
	b, present, reason = raw.str(fTokens)
	if reason != "" {
		return h, "header " + reason
	}
	if present {
		tokens, ok := parseWriteTokens(string(b))
		if !ok {
			return h, fmt.Sprintf("header field \"tokens\": want \"grant\" or \"ordered\", got %s", quoteShort(string(b)))
		}
		h.Tokens = tokens
	}
	return h, ruleHeaderRules(h)
}

// kindOf maps the op field without allocating.
func kindOf(b []byte) (Kind, bool) {
	switch string(b) {
	case "acquire":
		return Acquire, true
	case "renew":
		return Renew, true
	case "release":
		return Release, true
	case "write":
		return Write, true
	case "read":
		return Read, true
	}
	return 0, false
}

// buildOp checks the op line in r.raw and fills *op, or returns the reason
// it is wrong. The fields are checked in a fixed order, so that the first
// problem reported does not depend on the decoder.
func (d *decoder) buildOp(op *Op) string {
	raw := &d.raw

	b, present, reason := raw.str(fProcess)
	if reason != "" {
		return reason
	}
	if !present {
		return `field "process" is required`
	}
	if len(b) == 0 {
		return `field "process": must not be empty`
	}
	op.Process = intern(d.strs, b, maxInterned)

	b, present, reason = raw.str(fOwner)
	if reason != "" {
		return reason
	}
	op.Owner = op.Process
	if present {
		op.Owner = intern(d.strs, b, maxInterned)
	}

	b, present, reason = raw.str(fKey)
	if reason != "" {
		return reason
	}
	if present {
		op.Key = intern(d.strs, b, maxInterned)
	}

	b, present, reason = raw.str(fOp)
	if reason != "" {
		return reason
	}
	if !present {
		return `field "op" is required`
	}
	kind, ok := kindOf(b)
	if !ok {
		return fmt.Sprintf("field \"op\": unknown operation %s (want acquire, renew, release, write or read)", quoteShort(string(b)))
	}
	op.Kind = kind

	op.Call, present, reason = raw.integer(fCall)
	if reason != "" {
		return reason
	}
	if !present {
		return `field "call" is required`
	}
	if reason := ruleTime("call", op.Call); reason != "" {
		return reason
	}

	op.Return, op.Returned, reason = raw.integer(fReturn)
	if reason != "" {
		return reason
	}
	if reason := ruleReturn(op); reason != "" {
		return reason
	}

	// ok is ignored when the op never returned: its outcome is unknown.
	if op.Returned {
		op.OK, present, reason = raw.boolean(fOK)
		if reason != "" {
			return reason
		}
		if !present {
			return `field "ok" is required when "return" is present`
		}
	}

	// ttl belongs to acquire and renew; on other ops it is ignored.
	if kind == Acquire || kind == Renew {
		op.TTL, present, reason = raw.integer(fTTL)
		if reason != "" {
			return reason
		}
		if reason := ruleTTL(op, present); reason != "" {
			return reason
		}
	}

	op.Fence, present, reason = raw.integer(fFence)
	if reason != "" {
		return reason
	}
	if reason := ruleFence(op, present, d.hdr.Fences); reason != "" {
		return reason
	}

	// value belongs to write and read; on other ops it is ignored.
	if kind == Write || kind == Read {
		b, present, reason = raw.str(fValue)
		if reason != "" {
			return reason
		}
		if present {
			op.Value = intern(d.vals, b, maxInternedValues)
			op.HasValue = true
		}
		if reason := ruleValue(op, present); reason != "" {
			return reason
		}
	}

	op.At, op.HasAt, reason = raw.integer(fAt)
	if reason != "" {
		return reason
	}
	if reason := ruleAt(op, d.hdr.ClockUncertainty); reason != "" {
		return reason
	}

	b, present, reason = raw.str(fError)
	if reason != "" {
		return reason
	}
	if present {
		op.Error = intern(d.strs, b, maxInterned)
	}

	return ""
}

func satAdd(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	if b < 0 && a < math.MinInt64-b {
		return math.MinInt64
	}
	return a + b
}

func satSub(a, b int64) int64 {
	if b > 0 && a < math.MinInt64+b {
		return math.MinInt64
	}
	if b < 0 && a > math.MaxInt64+b {
		return math.MaxInt64
	}
	return a - b
}

// Parallel decoding in ReadHistory: with GOMAXPROCS >= parallelMinProcs,
// inputs of at least parallelMinBytes are cut into up to GOMAXPROCS chunks
// of at least parallelChunkBytes. About 70% of the sequential time is the
// per-line decoding that chunks share out; the rest (reading, the order
// check, the ops slice) stays sequential, so two chunks on two CPUs pay
// (docs/benchmarks.md, "Measured choices in the code"). Tests lower these.
var (
	parallelMinProcs   = 2
	parallelMinBytes   = 256 << 10
	parallelChunkBytes = 128 << 10
)

// ReadHistory reads a whole history. name is used in messages. On error it
// returns nil and the first error: the one at the lowest line, exactly as
// the streaming Reader would report it.
//
// It reads the input into memory and, when it is large, decodes chunks of
// lines in parallel; the rule that spans lines (each process's order) is
// then checked in one pass in file order.
func ReadHistory(r io.Reader, name string) (*History, error) {
	return ReadOptions{}.ReadHistory(r, name)
}

// ReadHistory reads a whole history with options o.
func (o ReadOptions) ReadHistory(r io.Reader, name string) (*History, error) {
	data, err := readAllSized(r)
	if err != nil {
		// Report exactly what the streaming Reader reports: a bad line
		// before the failure first, then the failure.
		return o.readHistoryStreaming(io.MultiReader(bytes.NewReader(data), failingReader{err}), name)
	}
	chunks := 1
	if procs := runtime.GOMAXPROCS(0); procs >= parallelMinProcs && len(data) >= parallelMinBytes {
		chunks = min(procs, len(data)/parallelChunkBytes)
	}
	return o.readHistoryChunks(data, name, chunks)
}

// readHistoryStreaming is ReadHistory with the streaming Reader.
func (o ReadOptions) readHistoryStreaming(r io.Reader, name string) (*History, error) {
	rd := o.NewReader(r, name)
	h := &History{Name: name}
	for {
		h.Ops = append(h.Ops, Op{})
		if err := rd.next(&h.Ops[len(h.Ops)-1]); err != nil {
			if err == io.EOF {
				h.Ops = h.Ops[:len(h.Ops)-1]
				if len(h.Ops) == 0 {
					h.Ops = nil
				}
				break
			}
			return nil, err
		}
	}
	h.Header = rd.Header()
	h.Faults = rd.Faults()
	return h, nil
}

type failingReader struct{ err error }

func (f failingReader) Read([]byte) (int, error) { return 0, f.err }

// readAllSized reads r to the end, in one allocation when r tells its size.
func readAllSized(r io.Reader) ([]byte, error) {
	size := -1
	switch v := r.(type) {
	case interface{ Len() int }: // bytes.Reader, bytes.Buffer, strings.Reader
		size = v.Len()
	case *os.File:
		if fi, err := v.Stat(); err == nil && fi.Mode().IsRegular() {
			size = int(fi.Size())
		}
	}
	if size < 0 {
		return io.ReadAll(r)
	}
	buf := make([]byte, 0, size+512)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// cutLine splits the first line (without its '\n') off data.
func cutLine(data []byte) (line, rest []byte) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return data[:i], data[i+1:]
	}
	return data, nil
}

// chunk is a run of whole lines decoded on its own.
type chunk struct {
	data      []byte
	firstLine int // the line number of its first line
	start     int // where its ops go in the shared slice: index firstLine-1
	n         int // ops decoded
	faults    []FaultRecord
	warnings  []Warning // its own first sightings of unknown fields
	errLine   int       // the line of the error that stopped it; 0: none
	reason    string
}

// readHistoryChunks decodes data, in parallel when chunks > 1. The result
// (ops, faults, warnings and the first error) is the same for every number
// of chunks.
func (o ReadOptions) readHistoryChunks(data []byte, name string, chunks int) (*History, error) {
	h := &History{Name: name}
	// Warnings are handed on in line order, each field once, and only for
	// lines up to the one that stops the reading, as the Reader does.
	warned := map[string]bool{}
	warn := func(ws []Warning, upTo int) {
		for _, w := range ws {
			if upTo > 0 && w.Line > upTo || warned[w.Field] || len(warned) > maxWarnedFields {
				continue
			}
			warned[w.Field] = true
			if len(warned) > maxWarnedFields {
				w.Message = "more unknown fields, not listed"
			}
			if o.Warn != nil {
				w.Name = name
				o.Warn(w)
			}
		}
	}
	fail := func(line int, reason string) (*History, error) {
		return nil, &ParseError{Name: name, Line: line, Reason: reason}
	}
	addFault := func(f FaultRecord) {
		if len(h.Faults) < maxFaults {
			h.Faults = append(h.Faults, f)
		}
	}
	// One op per line at most; the slice is shared by the chunks, chunk c
	// writing from index firstLine(c)-1 on, and compacted at the end.
	ops := make([]Op, bytes.Count(data, []byte{'\n'})+1)

	// The head, up to the first non-blank line, decides the header, which
	// every chunk needs (clock_uncertainty bounds "at").
	dec := newDecoder()
	dec.strict = o.Strict
	order := newOrderChecker()
	dst := 0
	lineNo := 0
	rest := data
	for len(rest) > 0 && !dec.sawLine {
		var line []byte
		line, rest = cutLine(rest)
		lineNo++
		if lineNo == 1 {
			line = bytes.TrimPrefix(line, utf8BOM)
		}
		var fault FaultRecord
		kind, reason := dec.decodeLine(line, lineNo, &ops[0], &fault)
		warn(dec.warnings, 0)
		dec.warnings = dec.warnings[:0]
		if reason == "" && kind == lineOp {
			reason = order.check(&ops[0])
		}
		if reason != "" {
			return fail(lineNo, reason)
		}
		switch kind {
		case lineOp:
			dst = 1
		case lineFault:
			addFault(fault)
		}
	}

	// Cut the rest into chunks of whole lines.
	cs := make([]chunk, 0, max(chunks, 1))
	next := lineNo + 1
	for len(rest) > 0 {
		size := len(rest)
		if left := chunks - len(cs); left > 1 {
			size = len(rest) / left
			if i := bytes.IndexByte(rest[size:], '\n'); i >= 0 {
				size += i + 1
			} else {
				size = len(rest)
			}
		}
		c := chunk{data: rest[:size], firstLine: next, start: next - 1}
		next += bytes.Count(c.data, []byte{'\n'})
		rest = rest[size:]
		cs = append(cs, c)
	}
	decodeChunk := func(c *chunk, d *decoder) {
		lineNo := c.firstLine
		for rest := c.data; len(rest) > 0; lineNo++ {
			var line []byte
			line, rest = cutLine(rest)
			var fault FaultRecord
			kind, reason := d.decodeLine(line, lineNo, &ops[c.start+c.n], &fault)
			if reason != "" {
				c.errLine, c.reason = lineNo, reason
				break
			}
			switch kind {
			case lineOp:
				c.n++
			case lineFault:
				c.faults = append(c.faults, fault)
			}
		}
		c.warnings = d.warnings
	}
	if len(cs) == 1 {
		decodeChunk(&cs[0], &dec)
	} else {
		var wg sync.WaitGroup
		for i := range cs {
			d := newDecoder()
			d.hdr, d.headerLine, d.sawLine, d.strict = dec.hdr, dec.headerLine, true, dec.strict
			wg.Go(func() { decodeChunk(&cs[i], &d) })
		}
		wg.Wait()
	}

	// In file order: check each process's order, compact, and stop at the
	// first error. A fault record before an op's line comes first, as when
	// streaming, but the order of faults and ops is not kept: they are
	// separate lists.
	for i := range cs {
		c := &cs[i]
		for j := c.start; j < c.start+c.n; j++ {
			if reason := order.check(&ops[j]); reason != "" {
				warn(c.warnings, ops[j].Line)
				return fail(ops[j].Line, reason)
			}
			if j != dst {
				ops[dst] = ops[j]
			}
			dst++
		}
		warn(c.warnings, c.errLine)
		if c.reason != "" {
			return fail(c.errLine, c.reason)
		}
		for _, f := range c.faults {
			addFault(f)
		}
	}
	clear(ops[dst:])
	h.Header = dec.hdr
	if dst == 0 {
		lines := bytes.Count(data, []byte{'\n'})
		if len(data) > 0 && data[len(data)-1] != '\n' {
			lines++
		}
		return fail(max(lines, 1), noOpReason)
	}
	h.Ops = ops[:dst:dst]
	return h, nil
}

// ReadHistoryFile reads the history in the file at path; "-" is stdin.
func ReadHistoryFile(path string) (*History, error) { return ReadOptions{}.ReadHistoryFile(path) }

// ReadHistoryFile reads the history in the file at path ("-" is stdin)
// with options o.
func (o ReadOptions) ReadHistoryFile(path string) (*History, error) {
	if path == "-" {
		return o.ReadHistory(os.Stdin, "-")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return o.ReadHistory(f, path)
}
