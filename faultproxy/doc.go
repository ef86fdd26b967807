// Package faultproxy puts network faults between a client and its server
// at the socket, one client at a time, for a library author's own tests.
//
// Start a Proxy in front of the server's address, give each client its own
// end of it (Proxy.Client: a listener of its own to dial instead of the
// server), and fault each client's connections per leg — Request, client
// to server, and Reply — while the test runs: Delay, Jitter, Lose,
// Blackhole, Hold, Duplicate, Reject. Every fault is recorded as it was
// applied at the socket (Client.Record: when it took and let go of the
// socket, and what it dropped, held, slowed or copied, on which leg), and
// every client's bytes and framed messages are counted per leg
// (Client.Counts), so a test can excuse exactly what the network did and
// measure what a client sends.
//
// What a proxy can do to TCP is what a network can: a connection's bytes
// arrive in order or not at all. So reordering is of whole messages across
// a client's connections (Jitter), lost bytes end their connection when
// the loss ends (Lose), and a duplicate is a retry on a connection of its
// own — only for requests the proxy can frame and answer apart (RESP:
// Redis, Valkey). It counts the messages of RESP, HTTP/1 and gRPC over
// HTTP/2, and only the bytes of anything else; it copies nothing but RESP.
// docs/specification.md (fault kinds at a client's socket) has the table.
//
// It is the proxy leasecheck's own real runner puts in front of each
// client (the network fault kinds of package faults); `leasecheck verify`
// uses it for every backend that gives the server's address.
package faultproxy
