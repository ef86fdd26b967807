package holder

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
	TTL   int64
	Fence int64 // acquire: unused; renew/release: presented (0 none); write: presented
	Value string
}

// Reply answers the request with the same ID.
type Reply struct {
	ID       uint64
	OK       bool
	Fence    int64 // acquire: the token granted
	Value    string
	HasValue bool
	Err      string
	// At is the coordinator's lease clock when the request was applied.
	At int64
}
