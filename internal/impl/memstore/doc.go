// Package memstore is leasecheck's reference lease coordinator: an in-memory,
// deterministic Go port of LeaseStore from lease.py, the runnable reference
// of the lease article this project grew from, which is the specification
// (docs/specification.md §1).
//
// Store keeps, per key, holder / expiry / fence / data and implements
// acquire, renew, release, write and read with exactly lease.py's semantics
// (see the table in docs/specification.md §1). The clock is injected: every call that
// needs time takes the coordinator's integer clock `now`; the package never
// reads a real clock, starts no goroutines and has no behaviour that depends
// on map iteration order. Renew and Release optionally take a fence (0 means
// "none presented"); a non-zero fence must equal the current one.
//
// Resource is docs/specification.md §1's second storage semantics, fenced storage: a
// resource separate from the coordinator that accepts a write iff its fence
// is >= 1 and >= the highest fence it has accepted for that key.
//
// TestDifferentialAgainstLeasePy checks Store against lease.py itself.
package memstore
