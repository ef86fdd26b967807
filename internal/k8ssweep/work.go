package k8ssweep

import (
	"context"
	"time"

	"github.com/leasecheck/leasecheck/vclient"
)

// WorkOptions say how the leader's work (Work) checks and fences its
// writes.
type WorkOptions struct {
	// Leading is the client's own leadership check, asked before every
	// write (client-go's IsLeader); a write it denies is skipped. nil: no
	// check beyond the work's context, as a controller-runtime Runnable
	// has none.
	Leading func() bool
	// Fence returns the token the write presents; 0 means no grant seen
	// by this incarnation, and the write is skipped (nothing to present).
	// nil: unfenced, the writes carry no token.
	Fence func() int64
	// TermContext makes the writes go out under ctx, the term's context,
	// as most controllers do, instead of their own: when the term ends
	// while a write is on its way (a pause held it) the client gives up on
	// the write, which the store may still apply. Only the store's log then
	// shows it (campaign.Execution.Store).
	TermContext bool
}

// Work is the leader's side effect, one implementation for every client
// of k8slease's kind (its Elector, and package ctrlruntime's manager): the
// holder's work items (c.Process.Work) in a loop until ctx ends, each a
// wait and then its writes to the resource through c.Write, each write
// checked and fenced as o says. ctx is the term: the context the client's
// library gives the leader's code (OnStartedLeading's, a Runnable's).
func Work(ctx context.Context, c *vclient.Candidate, o WorkOptions) {
	items := c.Process.Work
	if len(items) == 0 {
		<-ctx.Done()
		return
	}
	for {
		var spent time.Duration
		for _, it := range items {
			d := time.Duration(it.Work) * time.Millisecond
			spent += d
			if !sleep(ctx, between(d)) {
				return
			}
			for range it.Writes {
				if ctx.Err() != nil {
					return
				}
				if o.Leading != nil && !o.Leading() {
					continue
				}
				var fence int64
				if o.Fence != nil {
					if fence = o.Fence(); fence == 0 {
						continue // no grant seen by this incarnation: nothing to present
					}
				}
				// The write is the user's own call, not the term's: once
				// issued it is not withdrawn when the term ends (a write
				// already on its way to a database is not recalled) —
				// unless the user passes the term's context down.
				wctx := context.Background()
				if o.TermContext {
					wctx = ctx
				}
				_, err := c.Write(wctx, "", fence)
				if err != nil && ctx.Err() != nil {
					return
				}
			}
		}
		if spent < minCycle && !sleep(ctx, between(minCycle-spent)) {
			return
		}
	}
}

// minCycle is the shortest a round of the work program may take, so that
// a program shrunk to no waiting still lets virtual time pass.
const minCycle = 100 * time.Millisecond

// between returns how long to sleep for d to end half a millisecond past
// a whole one. The harness answers at whole milliseconds, so client-go's
// renew loop, its deadlines and the term's end all fall on them; a work
// timer on the same instant would race the term's end in the goroutine
// scheduler's order (a write sent or not), where in real time a tie has
// no chance. Half a millisecond in between, it never ties.
func between(d time.Duration) time.Duration {
	now := time.Now()
	return now.Add(d).Truncate(time.Millisecond).Add(time.Millisecond / 2).Sub(now)
}

func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
