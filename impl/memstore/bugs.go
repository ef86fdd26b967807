package memstore

// Bug is a set of planted bugs: switches on the one reference
// implementation, each changing one decision at a line marked BUG. The zero
// value is the reference. impl/mutants names them and says which sentence of
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

	// BugNoFenceCheck is the fenced resource's: it accepts a write under any
	// granted fence, not only one >= the highest it has seen.
	BugNoFenceCheck
)
