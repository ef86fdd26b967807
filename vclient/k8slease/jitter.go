package k8slease

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"
	_ "unsafe" // for go:linkname

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	_ "k8s.io/apimachinery/pkg/util/wait" // jitterRand's package
)

// jitterRand is the one source of randomness client-go's leader election
// draws from: wait.Jitter, which spreads the candidates' retries over
// RetryPeriod·[1, 1+JitterFactor). It is a package variable of
// k8s.io/apimachinery/pkg/util/wait, "so it can be overridden to make unit
// tests deterministic" (its own comment); the harness points it at the
// run's seeded source, so that a run replays exactly. Nothing of client-go
// is changed.
//
//go:linkname jitterRand k8s.io/apimachinery/pkg/util/wait.jitterRand
var jitterRand func() float64

// UseJitter points client-go's jitter — wait.Jitter, the one source of
// randomness its leader election draws from (and its workqueues' and
// backoffs' jittered waits) — at r until undo is called. It is what a
// client of your own needs to replay exactly in virtual time: make your
// vclient.Client a vclient.RandUser whose Use returns UseJitter(r), and
// the harness hands it the run's seeded source at the start of every run
// (and runs such clients one at a time, since the source is process-wide):
//
//	func (c *MyController) Use(r *rand.Rand) (undo func()) { return k8slease.UseJitter(r) }
//
// Nothing of client-go is changed: the variable it sets is the one
// k8s.io/apimachinery/pkg/util/wait keeps "so it can be overridden to make
// unit tests deterministic". Until undo, apimachinery's error handlers
// (utilruntime.ErrorHandlers) also rate-limit on the run's clock
// (runErrorHandlers).
func UseJitter(r *rand.Rand) (undo func()) { return useJitter(r) }

// useJitter points client-go's jitter at r until undo (vclient.RandUser).
// The draws are serialized: goroutines of one synctest bubble run in
// parallel while time stands still (several informers' reflectors back off
// at the same instant), and a rand.Rand is not safe for concurrent use.
func useJitter(r *rand.Rand) (undo func()) {
	old := jitterRand
	var mu sync.Mutex
	jitterRand = func() float64 {
		mu.Lock()
		defer mu.Unlock()
		return r.Float64()
	}
	oldHandlers := utilruntime.ErrorHandlers
	utilruntime.ErrorHandlers = runErrorHandlers(oldHandlers)
	return func() { jitterRand, utilruntime.ErrorHandlers = old, oldHandlers }
}

// runErrorHandlers is apimachinery's default error handlers (a log, then a
// 1 ms rate limit) with the rate limit's clock started in the run. The
// default one keeps the time of the last error process-wide, from its
// package's init: read in a synctest bubble, whose time starts in 2000,
// that time lies decades ahead, and the limit (1 ms minus the time since)
// sleeps as long — a LeaseCandidate whose update failed never returns,
// and how long it sleeps depends on when the process started, not on the
// seed. Handlers other than the default two are left alone.
func runErrorHandlers(hs []utilruntime.ErrorHandler) []utilruntime.ErrorHandler {
	if len(hs) != 2 {
		return hs
	}
	var mu sync.Mutex
	last := time.Now()
	return []utilruntime.ErrorHandler{hs[0], func(context.Context, error, string, ...any) {
		mu.Lock()
		d := time.Since(last)
		last = time.Now()
		mu.Unlock()
		time.Sleep(time.Millisecond - d)
	}}
}
