package holder

// Bug is a set of planted holder bugs: switches on the one reference
// protocol, each changing one decision at a line marked BUG. The zero value
// is the reference. impl/mutants names them and says which sentence of the
// article each breaks.
type Bug uint32

const (
	// BugWriteAfterFailedRenew ignores a failed or unanswered renew.
	BugWriteAfterFailedRenew Bug = 1 << iota
	// BugRenewLoopDies stops renewing on the first failure, quietly.
	BugRenewLoopDies
	// BugNoLocalDeadline keeps no deadline once the renewal loop died.
	BugNoLocalDeadline
	// BugTrustWallClock measures the lease on the wall clock.
	BugTrustWallClock
	// BugDeadlineFromReply counts the deadline from the reply, not the send.
	BugDeadlineFromReply
	// BugRenewEveryTTL renews once per TTL instead of every TTL/3.
	BugRenewEveryTTL
)
