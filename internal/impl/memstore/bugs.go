package memstore

// Bug is a set of planted bugs: switches on the one reference
// implementation, each changing one decision at a line marked BUG. The zero
// value is the reference. internal/impl/mutants names them and says which sentence of
// the article each breaks.
type Bug uint32

// The coordinator's planted bugs.
const (
	// BugGreedyGrant grants every acquire, even while another holder's
	// lease is live.
	BugGreedyGrant Bug = 1 << iota
	// BugFenceNotBumped keeps the old fence when an expired lease is taken over.
	BugFenceNotBumped
	// BugRenewAfterExpiry accepts a renew after the lease expired (owner
	// checked, deadline not).
	BugRenewAfterExpiry
	// BugExpiryOffByOne treats now == expiry as live.
	BugExpiryOffByOne
	// BugNoExpiry makes the lease a lock: only a release frees it.
	BugNoExpiry
	// BugForgetOnRestart loses the lease table in a coordinator crash.
	BugForgetOnRestart
	// BugReleaseAnyone lets anyone release the lease.
	BugReleaseAnyone
	// BugWriteSkipsExpiry accepts the holder's write after its lease expired.
	BugWriteSkipsExpiry
	// BugWallClock measures leases on the coordinator's wall clock.
	BugWallClock

	// Checks behind the fence check, which well-formed requests never reach
	// (only an adversarial client exercises them).

	// BugRenewTrustsFence extends the lease for any renew presenting the
	// current fence, without comparing the owner.
	BugRenewTrustsFence
	// BugReleaseTrustsFence frees the lease for any release presenting the
	// current fence, without comparing the owner.
	BugReleaseTrustsFence
	// BugFencelessRenew extends the lease for any renew presenting no fence.
	BugFencelessRenew
	// BugReentrantAcquire grants the live holder a second acquire.
	BugReentrantAcquire
	// BugWriteAfterRelease accepts the releaser's write after its release.
	BugWriteAfterRelease
	// BugFutureFence accepts a fence never granted (compares for stale only).
	BugFutureFence

	// Exact instants, which random timings rarely hit and exploration
	// enumerates.

	// BugSameTickGrant grants two acquires in one tick of the lease clock.
	BugSameTickGrant
	// BugRenewOffByOne accepts a renew on the expiry tick.
	BugRenewOffByOne

	// BugNoFenceCheck is the fenced resource's: it accepts a write under any
	// granted fence, not only one >= the highest it has seen.
	BugNoFenceCheck
)
