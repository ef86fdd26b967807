package machine

import "github.com/leasecheck/leasecheck/model"

// Dest says which server a request goes to.
type Dest uint8

const (
	ToCoordinator Dest = iota // the lease coordinator (and the data, under seed semantics)
	ToResource                // fenced storage, separate from the coordinator
)

// Request is a client's call. ID is unique within the sending incarnation, so
// a server can answer duplicates from a cache and a client can match replies.
type Request struct {
	ID    uint64
	To    Dest
	Kind  model.Kind
	Key   string
	Owner string
	TTL   int64 // acquire, renew: in the driver's time unit
	Fence int64 // acquire: unused; renew/release: presented (0 none); write: presented (0 none)
	Value string
}

// Reply answers the request with the same ID.
type Reply struct {
	ID       uint64
	OK       bool
	Fence    int64 // acquire: the token granted (0: the service grants none)
	Value    string
	HasValue bool
	// Err says why a request was refused: one of the Reason constants or the
	// service's own word.
	Err string
	// At is the coordinator's lease clock when the request was applied; the
	// driver fills it in.
	At int64
	// TTL is the TTL the coordinator applied to a granted acquire or an
	// accepted renew when it differs from the one asked (a cap, a rounding);
	// 0: as asked. The holder counts its deadline from it and the history
	// records it, so a lease granted shorter than asked is judged as granted.
	TTL int64
}

// Refusal reasons, as the history's "error" field spells them.
const (
	ReasonHeld       = "held"        // acquire: someone holds a live lease
	ReasonExpired    = "expired"     // renew, write: the lease ran out
	ReasonNotHolder  = "not-holder"  // renew, release, write: owner is not the holder
	ReasonStaleFence = "stale-fence" // renew, release, write: the fence is not the current grant's
	ReasonRefused    = "refused"     // the service said no and did not say why
)
