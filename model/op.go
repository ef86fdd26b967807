package model

import (
	"fmt"

	"github.com/leasecheck/leasecheck/internal/timefmt"
)

// Kind is what an operation does to a lease.
type Kind uint8

// The five operations of the specification (docs/specification.md §1).
const (
	Acquire Kind = iota + 1
	Renew
	Release
	Write
	Read
)

var kindNames = [...]string{Acquire: "acquire", Renew: "renew", Release: "release", Write: "write", Read: "read"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// ParseKind maps a history's "op" field to a Kind.
func ParseKind(s string) (Kind, bool) {
	for k, name := range kindNames {
		if name != "" && name == s {
			return Kind(k), true
		}
	}
	return 0, false
}

// Semantics says which store judges writes (docs/specification.md §1).
type Semantics uint8

const (
	// Seed semantics: the coordinator itself holds the data, and a write is
	// accepted when the writer holds a live lease under the current fence.
	Seed Semantics = iota
	// FencedStorage: the data lives in a separate resource that accepts a
	// write iff its fence was granted and is >= the highest fence it has
	// accepted. The resource knows no deadlines.
	FencedStorage
)

func (s Semantics) String() string {
	if s == FencedStorage {
		return "fenced-storage"
	}
	return "seed"
}

// ParseSemantics maps the header's "semantics" field to a Semantics.
func ParseSemantics(s string) (Semantics, bool) {
	switch s {
	case "seed":
		return Seed, true
	case "fenced-storage":
		return FencedStorage, true
	}
	return 0, false
}

// FenceOrder says how a coordinator numbers its grants.
type FenceOrder uint8

const (
	// Sequential fences count grants: 1, 2, 3, ... (reference/lease.py,
	// Redis INCR). The default.
	Sequential FenceOrder = iota
	// Increasing fences only grow, with gaps: an etcd revision, a
	// PostgreSQL sequence (a rolled-back transaction leaves a gap).
	Increasing
	// NoFences: the lock service grants no fencing token (most lock
	// libraries: Redlock-style Redis locks, advisory database locks). No op
	// carries a fence; the history is judged for linearizability and for a
	// single writer per term (docs/design.md §8).
	NoFences
)

func (f FenceOrder) String() string {
	switch f {
	case Increasing:
		return "increasing"
	case NoFences:
		return "none"
	}
	return "sequential"
}

// parseFenceOrder maps the header's "fences" field to a FenceOrder.
func parseFenceOrder(s string) (FenceOrder, bool) {
	switch s {
	case "sequential":
		return Sequential, true
	case "increasing":
		return Increasing, true
	case "none":
		return NoFences, true
	}
	return 0, false
}

// WriteTokens says what the fence a write presents is.
type WriteTokens uint8

const (
	// GrantTokens: a write presents the fence its holder's acquire was
	// granted (reference/lease.py, and every coordinator whose token is
	// the grant's number). The default. The checker's
	// single-writer-per-fence holds the writes to it.
	GrantTokens WriteTokens = iota
	// OrderedTokens: a write presents a token of its holder's own making
	// that the fenced resource orders, keeping the highest it accepted —
	// the resourceVersion of a Kubernetes Lease read while holding it, its
	// leaseTransitions + 1 — not the grant's number. Only fenced storage
	// with fences; the checker judges such writes by stale-write, which
	// asks the grants' numbers which holder came later, never the token.
	OrderedTokens
)

func (t WriteTokens) String() string {
	if t == OrderedTokens {
		return "ordered"
	}
	return "grant"
}

// parseWriteTokens maps the header's "tokens" field to a WriteTokens.
func parseWriteTokens(s string) (WriteTokens, bool) {
	switch s {
	case "grant":
		return GrantTokens, true
	case "ordered":
		return OrderedTokens, true
	}
	return 0, false
}

// MaxTime bounds every time in a history (call, return, at, a fault's start
// and end), every ttl and the clock uncertainty: 2^62 - 1, so that the
// checker's clock arithmetic (call - u, return + u) cannot overflow and is
// exact. In nanoseconds since 1970 it reaches the year 2116.
const MaxTime int64 = 1<<62 - 1

// MaxFence bounds every fence (2^62), so that counting one past it cannot
// overflow.
const MaxFence int64 = 1 << 62

// Op is one operation of a history (format v1, docs/specification.md §4).
//
// Optional fields carry a Has* flag instead of a pointer so that an Op is a
// plain value: histories of millions of operations stay one allocation.
type Op struct {
	// Line is the 1-based physical line the operation was read from; 0 when
	// it was not read from a file. Every message about the op names it.
	Line    int
	Process string
	Owner   string // defaults to Process
	Key     string
	Kind    Kind

	TTL   int64 // acquire and renew; > 0
	Fence int64 // 0: absent. acquire: granted; write: presented; renew/release: optional
	// Value is the value written (write) or returned (read). HasValue false
	// on a read means it returned "nothing written yet".
	Value    string
	HasValue bool

	Call int64
	// Return is valid only when Returned; an op that never returned has an
	// unknown outcome: it may or may not have taken effect.
	Return   int64
	Returned bool
	// At is the coordinator's clock when it applied the op (exact mode).
	At    int64
	HasAt bool

	OK    bool
	Error string
}

// RenewerProcess is the process of owner's background renewals: a lock
// library that renews by itself (a keepalive goroutine) has its renewals
// recorded as renew ops of this process, beside the owner's own calls.
func RenewerProcess(owner string) string { return owner + "/renewer" }

// BackgroundRenewal reports whether o is a renewal a library made by
// itself (a renew of RenewerProcess(o.Owner)).
func (o *Op) BackgroundRenewal() bool {
	return o.Kind == Renew && o.Owner != "" && o.Process == RenewerProcess(o.Owner)
}

// Header is the optional first line of a history.
type Header struct {
	Version  int
	TimeUnit string // ns, us, ms or s
	// ClockUncertainty bounds |coordinator clock - true time|, in TimeUnit.
	ClockUncertainty int64
	Semantics        Semantics
	// Fences is an extension of v1 (a field v1 readers ignore): how the
	// coordinator numbers grants. Absent means sequential.
	Fences FenceOrder
	// ExpiryLateness is an extension of v1 (a field v1 readers ignore), in
	// TimeUnit: how long after a lease's expiry the coordinator may still
	// treat it as held — refuse an acquire, accept its holder's renew or
	// write — because it frees expired leases late (etcd's lessor revokes
	// them asynchronously). It never lets the lease be granted to anyone
	// before its expiry. Absent means 0. The checker reports answers later
	// than this as expiry-lateness, apart from linearizability.
	ExpiryLateness int64
	// Tokens is an extension of v1 (a field v1 readers ignore): what the
	// fence a write presents is. Absent means GrantTokens.
	Tokens WriteTokens
}

// DefaultHeader is what a history without a header line means.
func DefaultHeader() Header {
	return Header{Version: 1, TimeUnit: "ms", Semantics: Seed}
}

// History is a header, the operations in file order and the faults that
// were injected while it was recorded.
type History struct {
	// Name is where the history came from (a file name, "-" for stdin);
	// error messages start with it.
	Name   string
	Header Header
	Ops    []Op
	// Faults are the fault records (an extension of v1, docs/specification.md §4): what
	// was injected, on what, when. They never change a verdict; reports
	// draw them and name the ones that overlap a violation.
	Faults []FaultRecord
}

// FaultRecord is one injected fault, in the history's time unit. A line of
// its own in the file: {"fault":"pause","target":"h1","start":120,"end":380}.
// A reader that predates the extension refuses such a line (it has no
// "process"), so an old leasecheck exits 2 on a new file; it never
// misjudges one.
type FaultRecord struct {
	Line int // the 1-based physical line it was read from; 0 when not read
	// Kind is the fault kind (faults.Kind's string: pause, clock-step, ...).
	Kind string
	// Target is what it hit: a process name as in the history, or
	// "coordinator", "resource", "server".
	Target string
	// Peer is the other end of a partition ("coordinator" or "resource").
	Peer string
	// Start is when it struck; End when it ended (HasEnd false: an instant,
	// or it lasted to the end of the history).
	Start  int64
	End    int64
	HasEnd bool
	// Amount is the fault's size where it has one: a clock step or offset
	// (time units), a drift (parts per million), a delay (time units).
	Amount int64
	// Detail says in words what happened ("h1 (fence 3) paused between its
	// check and its write").
	Detail string
	// Partial marks a fault that could not be applied in full (a server
	// that cannot be restarted was only stopped); Detail says what was
	// skipped.
	Partial bool
}

// Describe renders an op the way explanations and the text report show it,
// e.g. `A acquire(ttl=5) -> ok fence=1 [0,1] at=0`, its times as they are
// in the history.
func (o *Op) Describe() string { return o.describeIn(timefmt.Times{}) }

// DescribeInUnit is Describe for an op of a history whose header's
// time_unit is unit, its times (ttl, call, return, at) rendered as
// leasecheck's accounts of a history render them: in milliseconds, to the
// history's own precision, each suffixed "ms" (`ttl=1500ms`); a history
// in ms ("" or "ms") keeps its numbers as they are, as Describe does.
func (o *Op) DescribeInUnit(unit string) string { return o.describeIn(timefmt.Times{Unit: unit}) }

func (o *Op) describeIn(t timefmt.Times) string {
	s := o.Owner
	if o.Process != o.Owner {
		s += "(" + o.Process + ")"
	}
	s += " " + o.Kind.String() + "("
	sep := ""
	arg := func(f string, a ...any) { s += sep + fmt.Sprintf(f, a...); sep = ", " }
	switch o.Kind {
	case Acquire:
		arg("ttl=%s", t.Dur(o.TTL))
	case Renew:
		arg("ttl=%s", t.Dur(o.TTL))
		if o.Fence != 0 {
			arg("fence=%d", o.Fence)
		}
	case Release:
		if o.Fence != 0 {
			arg("fence=%d", o.Fence)
		}
	case Write:
		if o.Fence != 0 {
			arg("fence=%d", o.Fence)
		}
		arg("%q", o.Value)
	}
	s += ")"
	switch {
	case !o.Returned:
		s += " -> ? (no response)"
	case !o.OK:
		s += " -> failed"
		if o.Error != "" {
			s += " (" + o.Error + ")"
		}
	case o.Kind == Acquire:
		s += fmt.Sprintf(" -> ok fence=%d", o.Fence)
	case o.Kind == Read:
		if o.HasValue {
			s += fmt.Sprintf(" -> %q", o.Value)
		} else {
			s += " -> nothing"
		}
	default:
		s += " -> ok"
	}
	if o.Returned {
		s += " " + t.Span(o.Call, o.Return)
	} else {
		s += " [" + t.Num(o.Call) + ",-]" + t.Suffix()
	}
	if o.HasAt {
		s += " at=" + t.Dur(o.At)
	}
	return s
}
