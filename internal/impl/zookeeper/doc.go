// Package zookeeper is the ZooKeeper lease backend: ZooKeeper's lock
// recipe (the one Curator's InterProcessMutex implements: ephemeral
// sequential nodes under a lock path, the lowest sequence holds), with the
// session as the lease and a fenced write, over github.com/go-zookeeper/zk.
//
// # The lease is a session
//
// Every grant has a ZooKeeper session of its own, opened by the acquire
// with the TTL as its timeout: the lease lives as long as the session, and
// session expiry is lease expiry. A renew is a request on that session
// (the server restarts a session's timeout whenever it hears from it), a
// release deletes the lock node and closes the session. Nothing else may
// touch a lease session, or the lease would outlive the holder's renewals
// (session.go): go-zookeeper's background pings are put off by telling it
// the session lasts a day (the server keeps the negotiated timeout), and a
// lease session never reconnects, since resuming a session renews it.
// Writes, reads and lookups go over a separate data session, which
// reconnects as go-zookeeper likes and holds no lease.
//
// Znodes, under the root P (e.g. /leasecheck/<run prefix>):
//
//   - P/locks/K/OWNER-SEQ: the lock nodes of key K, ephemeral and
//     sequential (ZooKeeper appends SEQ, a 10-digit counter of the
//     parent), created by the acquire's session. A node is granted when it
//     is the lowest; the acquire then sets its data to the owner, so a
//     granted node has version 1 and a node still waiting version 0.
//   - P/terms/K/OWNER-SEQ: the term of a grant, persistent, created in the
//     same multi that marks the lock node granted and set (version 1) by
//     its release in the same multi that deletes the lock node. It outlives
//     the lease, so a release or renew that finds the lock node gone can
//     tell an expired lease (version 0) from a released one (1) and from a
//     fence this owner was never granted (no term): the contract's answers
//     need that, and an ephemeral node alone cannot say it.
//   - P/data/K: the data, persistent; version 0 means nothing written.
//
// The fence is SEQ + 1: a later grant always has a larger sequence (a node
// is granted only when every lower one is gone), with gaps (refused
// attempts and deletions advance the counter): backend.IncreasingFences. The
// owner and the fence name the lock node, so every check is the server's:
// the fenced write is one multi, check(P/locks/K/OWNER-SEQ, version 1) and
// setData(P/data/K): it is accepted only while that node exists — the
// session is alive, the lease not released — and was granted. The
// unfenced variant ("zookeeper-unfenced") writes with a plain setData; a
// holder paused past its TTL gets its write accepted after another holder
// took the lock, and the checker must say so.
//
// # The adapter contract
//
//	op       request                                 ok                     refused                                 error (outcome unknown)
//	acquire  new session (timeout TTL); create        the node is the        a lower node exists: deleted in a       connection loss, timeout, no
//	         P/locks/K/OWNER- (ephemeral, sequential); lowest; setData     multi with check(predecessor), so it    session: the session is left
//	         children                                 marks it granted       was never the lowest ("held")           untouched, and expires on the server
//	renew    multi check(node, 1) on the grant's      the node is there      the node is gone: expired (term 0,      connection loss, timeout; a grant of
//	         session                                  and granted            "expired"), released (term 1), never    another client's session, or whose
//	                                                                         the owner's fence (no term): "not-holder" connection is lost (not renewed)
//	                                                                         ("stale-fence": it holds another)
//	release  multi delete(node, version 1) +          deleted; or expired    a waiting node, released before (term   connection loss, timeout
//	         setData(term, version 0), close session  with no later term:    1), never this owner's fence (no term),
//	                                                  allowed, term set      or expired and granted to anyone since
//	                                                                         ("not-holder"; "stale-fence")
//	write    multi check(node, 1) + setData(data)     set                    the node is gone ("expired", or         connection loss, timeout
//	                                                                         "not-holder": not this owner's fence)
//	read     sync + getData(data) on the data session the value, or none     —                                       connection loss, timeout
//
// Every lookup on the data session (why a lock node is gone, whether a
// later term exists, the read) is preceded by a sync: on an ensemble that
// session may sit on a lagging follower, which could otherwise answer
// from before another session's grant. The fence itself is never read: it
// is the sequence number the create returned.
//
// Connection loss (go-zookeeper's ErrConnectionClosed, a reset, a request
// the context's deadline cut short) is an unknown outcome: the request
// may have been applied. Session expiry is a definite refusal ("expired"):
// the server ended the session, and its lock node with it. The renew a
// lost connection could not carry is unknown too, not a refusal: the
// session may still be alive on the server, and the lease with it.
// go-zookeeper retries nothing itself (its protected-create helper does;
// it is not used), so one Do is at most one effect; every call honours the
// context's deadline by returning at it, the request left to the library.
//
// # Time
//
// ZooKeeper's replies carry no clock that decided a lease (a session's
// timeout runs on the server's monotonic clock), so histories are in
// interval mode. Info declares the uncertainty: how late the server ends a
// session past its timeout. The session tracker expires sessions in
// buckets of one tick (the server's tickTime), so a session ends between
// its timeout and one tick after it — 100 ms on the server
// internal/servers starts; TestSessionExpiryLateness measures it
// (Uncertainty says the number). For another server, ServerInfo infers the
// tick from the smallest session timeout it grants.
//
// A server restart does what ZooKeeper is designed to do: it restores
// every session from its log with a fresh timeout counted from its
// recovery, so a lease whose holder could not renew during the outage
// lives on for about one TTL after the restart.
package zookeeper
