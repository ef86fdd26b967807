// Package natskv is a lock on NATS JetStream key-value with per-key TTLs,
// as NATS users build one with nats.go's jetstream package: a bucket
// whose keys carry a TTL of their own, acquire = Create, renew = Update
// with the last revision, release = Delete with LastRevision. It is
// leasecheck's backend "nats-kv" (fenced writes) and "nats-kv-unfenced"
// (a plain Put), run against nats-server embedded in the process
// (internal/servers.StartNATSCluster: one server, or a 3-server JetStream
// cluster with the bucket replicated 3 times).
//
// # The promise, in nats.go's own words (v1.56.0, jetstream/kv.go)
//
//   - Create: "will add the key/value pair if it does not exist. If the
//     key already exists, ErrKeyExists will be returned."
//   - KeyTTL: "sets the TTL for the key. This is the time after which the
//     key will be automatically deleted. The TTL is set when the key is
//     created and cannot be changed later. This requires LimitMarkerTTL to
//     be enabled on the bucket."
//   - Update: "will update the value if the latest revision matches ...
//     Update also resets the TTL associated with the key (if any)."
//   - Delete with LastRevision: "deletes if the latest revision matches
//     the provided one".
//   - LimitMarkerTTL: "It is required for per-key TTL to work and for
//     watcher to notify about TTL expirations".
//
// Read as a lock: whoever Created the key holds it until the key's TTL
// runs out, Update with the revision one read keeps it (if nobody changed
// it since), and an expired key is Created anew by the next client.
//
// # What the server does with it (findings)
//
//   - Update drops a per-key TTL. Update sends no TTL, so its message has
//     none and the key never expires again (TestUpdateDropsKeyTTL): a lock
//     renewed once with Update as it is outlives a crashed holder forever.
//     The Update doc says it "resets the TTL associated with the key", the
//     KeyTTL doc that the TTL "cannot be changed later": classified as a
//     documented hazard (a liveness loss, never two holders), since
//     "resets" is what it does. The adapter's renew sends Update's own
//     request (Nats-Expected-Last-Subject-Sequence) with the TTL again
//     (Nats-TTL), which the server honours (Options.DropTTLOnRenew
//     renews with Update as it is).
//   - The server truncates a Nats-TTL to whole seconds (parseMessageTTL:
//     int64(dur.Seconds())), so KeyTTL(1500ms) deletes the key at about
//     1 s (TestKeyTTLTruncated): before "the time after which the key
//     will be automatically deleted" — a bug against the docs, and a
//     safety one for a lock with a fractional TTL (another client Creates
//     the key while the holder believes it holds for half a second more).
//     TTLs under 1 s are refused (JSMessageTTLInvalidError). The adapter
//     rounds every TTL up to whole seconds and reports the TTL applied
//     (Response.TTL); Info declares TTLGranularity and MinTTL 1 s.
//   - The plain Put to the protected resource ("nats-kv-unfenced") lets a
//     holder paused past its TTL write after the next holder took the
//     lock: the documented hazard of every lock without a fence.
//
// # The mapping (the adapter contract)
//
// Keys of bucket B, for the lease key K: lock.K (the lock: the owner,
// with a per-key TTL), term.K (the owner and fence of the last grant
// whose acquire was answered ok, no TTL), data.K (the resource).
//
//	op       request                                          ok                     refused
//	acquire  Create(lock.K, owner, KeyTTL(ttl)); then term.K   created                ErrKeyExists ("held")
//	         published, expected lock.K's last sequence = rev
//	renew    read lock.K; publish lock.K ("owner fence")        published              not a live grant of owner's fence: expired (the term
//	         expecting its last sequence, with Nats-TTL          (TTL from now)          says it was owner's), not-holder, stale-fence
//	release  read lock.K; Delete marker expecting its last      deleted; or expired    released, another's, another fence ("not-holder",
//	         sequence                                           and the term owner's   "stale-fence")
//	write    read lock.K; publish data.K with                   stored                 as renew
//	         Nats-Expected-Last-Subject-Sequence = lock.K's
//	         last sequence (…-Subject: lock.K)
//	read     Get(data.K)                                        the value, or none     —
//
// The fence is the Create's revision (the stream sequence): larger for
// every later grant, with gaps (backend.IncreasingFences). A renew's
// revision is not a fence: the value "owner fence" carries the grant's
// fence across renewals. Every check is the server's: the write is stored
// only if lock.K's last message is still the one read — the holder's live
// grant — in the same step that stores it; an expiry (which removes the
// message and leaves a marker) or a new grant changes that sequence. A
// compare-and-set that lost to a change between the read and the publish
// stored nothing, so the op reads again (a few times), and one Do is still
// at most one effect. TTL expiry leaves no trace of whose lease ended
// (the marker replaces the message), so term.K keeps the last answered
// grant's owner and fence: a release by the owner whose lease expired is
// allowed (the contract's release-mine-expired), a stranger's refused.
//
// The bucket keeps one revision per key, file storage, markers for an
// hour (LimitMarkerTTL), and direct gets off (Options.Direct): a KV Get
// is by default a direct get that any replica may answer, stale on a
// cluster; off, every read is the stream leader's. nats.go retries a
// publish only on "no responders" (not delivered), and the connection has
// no reconnect buffer, so nothing is sent twice.
//
// # Time
//
// Nothing in JetStream's answers says when a key's TTL started (interval
// mode). A key's TTL runs from its message's timestamp, taken by the
// server when it stores it, so it never ends before the call plus the TTL;
// the server removes it late. TestExpiryLateness measures it from the
// acquire's answer plus the granted TTL to the first poll where another
// owner's Create succeeds: 0.24 to 0.36 s late, the worst of 8 leases
// (TTL 1 s) in each of 6 runs, one server on a shared 2-core machine; none
// ended before the acquire's call plus the TTL. Declared: Uncertainty
// 250 ms, ExpiryLateness 2 s (room for a loaded machine and, on a cluster,
// the stream leader's Raft proposal of the removal; a new stream leader
// keeps the messages' timestamps, so a leader change does not extend a
// lease as etcd's and ZooKeeper's do).
package natskv
