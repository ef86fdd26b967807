// Package holder is the client side of the lease protocol in the article
// (docs/specification.md §1) as a pure state
// machine in the style of etcd-io/raft: it does no I/O and reads no clock.
// Tick and Receive feed it its own clock reading and the replies it gets;
// Ready hands back the requests to send, the local time it next wants to be
// woken at and whether it believes it holds the lease. The simulator (package
// sim) and a real runner are two drivers of the same machine.
//
// The protocol:
//   - acquire; renew every TTL/3 by its own monotonic clock;
//   - a local deadline computed conservatively from when it sent the request
//     that granted or extended the lease: sent + TTL·(1 − 2ρ) − margin;
//   - identity, deadline and fence re-checked before every write;
//   - the iron rule: a failed or unanswered renew (or a write the store
//     refuses, or the deadline passing) stops all writing, abandons the
//     request in flight and re-acquires with exponential backoff;
//   - release (presenting the fence) when its work is done; work items may
//     outlast the TTL: renewals go on while the work runs.
//
// The holder has one request in flight at a time, so its operations form one
// sequential process in the history (docs/specification.md §4). Reader is a tiny client
// that reads the key periodically.
//
// Index: wire.go (Request, Reply), holder.go (Config, Holder), reader.go.
package holder
