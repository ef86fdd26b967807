package holder

// Bug is a set of planted holder bugs: switches on the one reference
// protocol, each changing one decision at a line marked BUG. The zero value
// is the reference. internal/impl/mutants names them and says which sentence of the
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

	// Bugs a fixed margin, drift bound and renew interval hide (so the
	// protocol's parameters are drawn).

	// BugDriftOnce subtracts only the holder's own drift from its deadline.
	BugDriftOnce
	// BugDriftIgnored subtracts no drift at all.
	BugDriftIgnored
	// BugDeadlineAtNextRenewal believes at least until the next renewal.
	BugDeadlineAtNextRenewal

	// Bugs only the run properties see (so they are judged on every run).

	// BugBeliefUntilReleaseAck believes until its release is answered.
	BugBeliefUntilReleaseAck
	// BugNoRelease stops without releasing when its work is done.
	BugNoRelease
	// BugBackoffUncapped doubles its acquire backoff without a cap.
	BugBackoffUncapped

	// Bugs that need an order of simultaneous events that scheduling order
	// never gives (only exploration meets it): a reply handled before
	// the holder's own wake-up at the same instant.

	// BugLastMomentRenew counts a renew answered on its deadline tick from
	// the answer.
	BugLastMomentRenew
)

// Bugs that blame someone else when judged carelessly: the judges must
// attribute them from the coordinator's record, not the holder's word.
const (
	// BugIgnoreGrantedTTL counts its deadline from the TTL it asked for,
	// not the shorter one the coordinator granted.
	BugIgnoreGrantedTTL Bug = BugLastMomentRenew << (1 + iota)
	// BugFenceZeroOnRenew overwrites its own fence with 0 when a renew
	// succeeds: it goes on believing, and reports fence 0.
	BugFenceZeroOnRenew
)
