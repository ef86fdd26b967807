package backend

import "time"

// Holding is an optional capability: an adapter for a library that holds a
// lock while it says so — it renews by itself in the background (a
// goroutine extending the key every half validity) and signals the loss
// through a context, a channel or a callback. Such a library has no renew
// to call; the adapter reports what the library itself does instead:
//
//   - Signal returns the library's own signal for owner's lock on key,
//     taken right after a granted acquire: a channel that is closed when
//     the library says the lock is lost (its context's Done, its channel,
//     its callback turned into a close). Nil when owner holds nothing.
//     Release ends the hold without a loss: the suite reads the signal
//     only while the owner holds.
//   - Observe registers fn to hear every background renewal the library
//     makes, as it makes it (an adapter that wraps the library's
//     connection sees them; one that cannot leaves them out, and the
//     history then knows of no renewal). The runner records each as a
//     renew of the owner, from the process "<owner>/renewer".
//
// A Do(renew) of such an adapter runs the library's own refresh when it
// has one, and answers with that renewal. A library with no refresh sends
// nothing, so its adapter answers refused once the library has said the
// lock is lost and, while it holds, with the library's next background
// renewal if one comes within the request's deadline, else an error (the
// outcome unknown) — never ok with an earlier renewal's time, which would
// date a renewal before its call (docs/holding-libraries.md, "What the
// contract says of renewals").
//
// Info.LossLateness declares how late after the lock is lost the library
// may signal it (its renew interval plus a request timeout, for a library
// that finds out on its next renewal): the property loss-signal judges the
// promise "the context is cancelled once the lock is lost" against it.
type Holding interface {
	Signal(key, owner string) <-chan struct{}
	Observe(fn func(Renewal))
}

// Renewal is one background renewal a library made by itself.
type Renewal struct {
	Key, Owner string
	// Fence is the fence of the grant the renewal is for, when the library
	// knows it (0: not known). A library that still renews an earlier
	// grant of the owner's after a later one is refused for the earlier
	// one: the history tells the two apart only by it.
	Fence int64
	// Start and End bracket the request on the local clock.
	Start, End time.Time
	// Answered: the server answered (OK or not); false: no answer, the
	// outcome unknown.
	Answered, OK bool
	// TTL the renewal asked for (or was granted).
	TTL time.Duration
	// At is the server's clock when it applied the renewal, when the
	// adapter can tell (as Response.At).
	At time.Time
	// Release: this is no renewal but the library letting go of the lock
	// by itself — it released it, or ended the session that held it (it
	// closed the connection of a lock that lives as long as its session,
	// Info.EndsWithClient, as a driver does with a connection whose query
	// timed out) — at Start at the earliest: never later than the instant
	// the release or the close could first reach the server. The runner
	// records it as a release of the owner's grant (Fence) from
	// "<owner>/renewer"; unanswered (a server says nothing when it frees a
	// closed session's lock) it may take effect at any time after Start,
	// as an unanswered release of the owner's does. renew-rate and
	// loss-signal leave it out: it renews nothing.
	Release bool
}

// Stopper is an optional capability: stop the whole client of owner — its
// renewal goroutine and its connection, not only the adapter's calls — as
// a process pause does, until resume is called. A library that renews by
// itself keeps its lock alive through a pause of the adapter's calls alone;
// the suite's and verify's pauses stop the whole client through this (for
// a networked client, the harness's TCP proxy does the same by holding the
// client's connection).
type Stopper interface {
	StopClient(owner string) (resume func())
}

// unwrapper is a Backend that wraps another (a workload that duplicates
// requests, a recorder), which As looks through.
type unwrapper interface{ Unwrap() Backend }

// As returns b's optional capability T (Holding, Stopper, Clock, ...),
// looking through a Backend that wraps another (a workload that duplicates
// requests, a recorder) by its method Unwrap() Backend.
func As[T any](b Backend) (T, bool) {
	for b != nil {
		if t, ok := b.(T); ok {
			return t, true
		}
		u, ok := b.(unwrapper)
		if !ok {
			break
		}
		b = u.Unwrap()
	}
	var zero T
	return zero, false
}
