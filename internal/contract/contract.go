package contract

import (
	"slices"

	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
)

// Contract is the adapter contract of impl/backend: what a Backend's Do
// must answer for every op in every lease state (docs/specification.md
// §1's seed semantics; docs/design.md §8). impl/backend/README.md renders
// the table for the users who adapt a service (a test keeps the two
// equal: go test ./internal/contract -update rewrites it) and says how to
// adapt a lock or election library; leasetest is tested against a
// broken backend for every row, and names the row in each failure line.
//
// Above the table stand three rules:
//
//   - A Response is a definite answer: the op took effect exactly as it
//     says (OK), or not at all (OK false, with a Reason). An error means
//     the outcome is unknown — the request may or may not have taken
//     effect, now or later: a timeout, a connection lost after sending, a
//     reply that cannot be parsed, or one of the states the rows name that
//     a backend may be unable to tell apart. Never an error for a definite
//     refusal, never an answer that is a guess.
//   - One Do is at most one effect: turn off the client's silent retries
//     (go-redis: MaxRetries = -1) and do not retry inside Do.
//   - Do honours ctx: it returns by ctx's deadline, so an op the runner
//     gave up on is recorded as unknown, not as a late answer.
//
// Reasons are informative (the history's "error" field): the checker
// ignores them and leasetest notes a different one without failing.
func Contract() []Rule { return slices.Clone(contract) }

var contract = []Rule{
	{ID: "acquire-free", Op: model.Acquire, State: Free, Answer: OK,
		Effect: "the requester holds the lease until now + TTL; a fresh fence larger than every earlier one on the key (sequential: the previous one + 1; none: 0)"},
	{ID: "acquire-held", Op: model.Acquire, State: MineLive, Answer: Refused, Reason: machine.ReasonHeld,
		Effect: "nothing: the live holder's second acquire is not a renewal and grants no new fence"},
	{ID: "acquire-mine-expired", Op: model.Acquire, State: MineExpired, Answer: OK,
		Effect: "a new term for the same owner: a fresh fence, expiry now + TTL (not the old expiry + TTL)"},
	{ID: "acquire-other-live", Op: model.Acquire, State: OtherLive, Answer: Refused, Reason: machine.ReasonHeld,
		Effect: "nothing: the holder keeps its lease to its deadline"},
	{ID: "acquire-other-expired", Op: model.Acquire, State: OtherExpired, Answer: OK,
		Effect: "the requester holds it until now + TTL, with a fresh fence"},
	{ID: "acquire-released", Op: model.Acquire, State: Released, Answer: OK,
		Effect: "granted at once (a released key does not wait out the TTL), fresh fence, expiry now + TTL"},

	{ID: "renew-mine-live", Op: model.Renew, State: MineLive, Fence: CurrentFence, Answer: OK,
		Effect: "expiry = now + TTL: from the renewal, not from the grant and not from the old expiry"},
	{ID: "renew-wrong-fence", Op: model.Renew, State: MineLive, Fence: StaleOrFutureFence, Answer: Refused, Reason: machine.ReasonStaleFence,
		Effect: "nothing: the fence of an earlier (or a never granted) term renews nothing"},
	{ID: "renew-mine-expired", Op: model.Renew, State: MineExpired, Fence: CurrentFence, Answer: Refused, Reason: machine.ReasonExpired,
		Effect: "nothing: an expired lease is not brought back; the holder must acquire again"},
	{ID: "renew-not-holder", Op: model.Renew, State: NotMine, Fence: AnyFence, Answer: Refused, Reason: machine.ReasonNotHolder,
		Effect: "nothing, whatever fence it presents (even the holder's current one)"},

	{ID: "release-mine-live", Op: model.Release, State: MineLive, Fence: CurrentFence, Answer: OK,
		Effect: "the key is free at once"},
	{ID: "release-wrong-fence", Op: model.Release, State: MineLive, Fence: StaleOrFutureFence, Answer: Refused, Reason: machine.ReasonStaleFence,
		Effect: "nothing: the holder keeps its lease"},
	{ID: "release-mine-expired", Op: model.Release, State: MineExpired, Fence: CurrentFence, Answer: OKOrError,
		Effect: "ok frees the key (the owner check is all reference/lease.py's release does); an error when the backend has forgotten the lease and cannot tell whether someone acquired since; never a refusal"},
	{ID: "release-not-holder", Op: model.Release, State: NotMine, Fence: AnyFence, Answer: Refused, Reason: machine.ReasonNotHolder,
		Effect: "nothing: the holder keeps its lease, whatever fence is presented"},
	{ID: "release-earlier-term", Op: model.Release, State: EarlierTerm, Fence: AnyFence, Answer: RefusedOrError, Reason: machine.ReasonNotHolder,
		Effect: "nothing: the new holder keeps its lease; an error when the backend has forgotten the old lease and cannot tell this from release-mine-expired"},
	{ID: "release-twice", Op: model.Release, State: Released, Fence: CurrentFence, Answer: Refused, Reason: machine.ReasonNotHolder,
		Effect: "nothing: a second release frees nobody, in particular not the next holder's lease (the article's failure mode 5)"},

	{ID: "write-mine-live", Op: model.Write, State: MineLive, Fence: CurrentFence, Answer: OK,
		Effect: "the value is stored: every later read returns it until the next accepted write"},
	{ID: "write-wrong-fence", Op: model.Write, State: MineLive, Fence: StaleOrFutureFence, Answer: Refused, Reason: machine.ReasonStaleFence, Fenced: true,
		Effect: "nothing stored"},
	{ID: "write-mine-expired", Op: model.Write, State: MineExpired, Fence: CurrentFence, Answer: Refused, Reason: machine.ReasonExpired, Fenced: true,
		Effect: "nothing stored: the deadline is checked by the service, in the step that writes"},
	{ID: "write-not-holder", Op: model.Write, State: NotMine, Fence: AnyFence, Answer: Refused, Reason: machine.ReasonNotHolder, Fenced: true,
		Effect: "nothing stored, whatever fence is presented; this is what stops a holder paused past its TTL (a zombie) after the lease moved on"},

	{ID: "read", Op: model.Read, State: AnyState, Answer: OK,
		Effect: "the value of the last accepted write (HasValue false before any)"},
}

// Rule is one row of the contract: an op in a lease state (and, for renew,
// release and write, with a kind of fence presented) and what Do answers.
type Rule struct {
	ID    string // stable, e.g. "renew-not-holder"
	Op    model.Kind
	State State
	Fence Presented
	// Answer is what Do must return; Reason the refusal's Reason.
	Answer Answer
	Reason string
	// Fenced: the row holds only for backends whose writes are fenced
	// (Info.Writes); an unfenced backend accepts the write, and that
	// is the missing protection the suite reports.
	Fenced bool
	// Effect is what the op does to the lease and the data.
	Effect string
}

// State is the lease state as the requester of an op sees it.
type State uint8

const (
	// Free: nobody ever held the lease on this key.
	Free State = iota + 1
	// MineLive: the requester holds it, before its deadline.
	MineLive
	// MineExpired: the requester held it, its deadline passed, nobody
	// acquired since.
	MineExpired
	// OtherLive: someone else holds it, before its deadline.
	OtherLive
	// OtherExpired: someone else held it, its deadline passed, nobody
	// acquired since.
	OtherExpired
	// Released: the requester held it and released it; nobody since.
	Released
	// EarlierTerm: the requester held it, its deadline passed, and someone
	// else acquired it since.
	EarlierTerm
	// NotMine: Free, OtherLive, OtherExpired or EarlierTerm.
	NotMine
	// AnyState: whatever the lease's state.
	AnyState
)

var stateNames = [...]string{Free: "free (never held)", MineLive: "held by me, live", MineExpired: "held by me, expired, nobody since",
	OtherLive: "held by another, live", OtherExpired: "held by another, expired, nobody since", Released: "released by me, nobody since",
	EarlierTerm: "mine in an earlier term, another acquired since",
	NotMine:     "not mine (free, another's live or expired, or mine in an earlier term)", AnyState: "any"}

func (s State) String() string {
	if int(s) < len(stateNames) && stateNames[s] != "" {
		return stateNames[s]
	}
	return "State(?)"
}

// Presented is the kind of fence a renew, release or write presents.
type Presented uint8

const (
	// NoFencePresented: acquire and read present no fence.
	NoFencePresented Presented = iota
	// CurrentFence: the fence of the requester's own current grant (none on
	// a backend without fences).
	CurrentFence
	// StaleOrFutureFence: an earlier grant's fence, or one never granted
	// (backends with fences only).
	StaleOrFutureFence
	// AnyFence: none, stale, the current holder's or a future one.
	AnyFence
)

var presentedNames = [...]string{NoFencePresented: "", CurrentFence: "its current fence (none without fences)",
	StaleOrFutureFence: "a stale or a future fence", AnyFence: "any fence, or none"}

func (p Presented) String() string {
	if int(p) < len(presentedNames) {
		return presentedNames[p]
	}
	return "Presented(?)"
}

// Answer is what Do must return.
type Answer uint8

const (
	// OK: a Response with OK true.
	OK Answer = iota + 1
	// Refused: a Response with OK false and the Reason.
	Refused
	// OKOrError: OK true, or an error (outcome unknown); never a refusal.
	OKOrError
	// RefusedOrError: a refusal, or an error (outcome unknown); never OK.
	RefusedOrError
)

func (a Answer) String() string {
	switch a {
	case OK:
		return "ok"
	case Refused:
		return "refused"
	case OKOrError:
		return "ok, or an error (unknown); never refused"
	case RefusedOrError:
		return "refused, or an error (unknown); never ok"
	}
	return "Answer(?)"
}

// RuleByID returns the contract's rule with that ID.
func RuleByID(id string) (Rule, bool) {
	for _, r := range contract {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}
