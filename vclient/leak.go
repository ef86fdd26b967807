package vclient

import (
	"bytes"
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"testing/synctest"
	"time"
)

// A client's goroutine that outlives every candidate's Start — blocked on
// a channel nobody closes, a timer nobody stops — or a Start that does not
// return once its context ended keeps its bubble from ending, and synctest
// would end the whole test binary ("deadlock: main bubble goroutine has
// exited but blocked goroutines remain"), naming no run. The harness gives
// such goroutines a run's length of virtual time (leakGrace) to end, then
// ends the run in an error naming the seed, the implementation, the Starts
// that had not returned and where each goroutine is blocked; run recovers
// synctest's panic and returns that error (the run is not judged).

var bubbleID = regexp.MustCompile(`synctest bubble (\d+)\]`)

// leakGrace is how long, in virtual time, the harness waits for the
// client's goroutines to end after every context ended: a run's length,
// and at least a minute (a controller's graceful shutdown).
func (w *world) leakGrace() time.Duration { return time.Duration(max(w.sc.Horizon, 60_000)) * ms }

// leaks is called by the bubble's main goroutine once the shutdown is
// over: when goroutines of the bubble remain, it returns the error that
// names them, nil when none does.
func (w *world) leaks() error {
	if len(w.bubbled()) == 0 {
		return nil
	}
	if len(w.stuck) == 0 {
		// What only waits for a timer ends as virtual time passes: give it
		// a run's length (nothing of it is recorded any more) before
		// judging. A stuck Start had that already.
		time.Sleep(w.leakGrace())
	}
	leaked := w.bubbled()
	if len(leaked) == 0 {
		return nil
	}
	what := fmt.Sprintf("every candidate's Start returned, but %d goroutine(s) it started were still blocked %v after", len(leaked), w.leakGrace())
	if len(w.stuck) > 0 {
		what = fmt.Sprintf("the Start of %s had not returned %v after its context ended (%d goroutine(s) of the client still blocked)",
			strings.Join(w.stuck, ", "), w.leakGrace(), len(leaked))
	}
	return fmt.Errorf("vclient: seed %d (%s): the client outlived its run: %s; the run cannot end and is not judged. "+
		"A Start must return, and stop every goroutine it started, once its context is done. Where each goroutine is blocked:\n\n%s",
		w.sc.Seed, w.sc.Implementation, what, bytes.Join(leaked, []byte("\n\n")))
}

// isSynctestDeadlock reports whether r, recovered from synctest.Test, is
// its deadlock panic (the runtime's unexported synctestDeadlockError).
func isSynctestDeadlock(r any) bool {
	err, ok := r.(error)
	return ok && strings.HasPrefix(err.Error(), "deadlock: ")
}

// bubbled returns the stacks of the bubble's goroutines but the caller's,
// once each of them is blocked (synctest.Wait).
func (w *world) bubbled() [][]byte {
	synctest.Wait()
	own := make([]byte, 512)
	own = own[:runtime.Stack(own, false)]
	m := bubbleID.FindSubmatch(own)
	if m == nil {
		return nil // a runtime that does not say which bubble a goroutine is in
	}
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	ownHeader := own[:bytes.IndexByte(own, '\n')]
	var leaked [][]byte
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		header, frames, _ := bytes.Cut(g, []byte("\n"))
		if bytes.Equal(header, ownHeader) || bytes.HasPrefix(frames, []byte("internal/synctest.Run(")) ||
			bytes.HasPrefix(frames, []byte("testing/synctest.testingSynctestTest(")) {
			continue // synctest's own: the bubble's root and its test's goroutine
		}
		if gm := bubbleID.FindSubmatch(header); gm != nil && bytes.Equal(gm[1], m[1]) {
			leaked = append(leaked, g)
		}
	}
	return leaked
}
