package vclient

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"testing/synctest"
	"time"
)

// A client's goroutine that outlives every candidate's Start — blocked on
// a channel nobody closes, a timer nobody stops — keeps its bubble from
// ending, and synctest then ends the whole test binary ("deadlock: main
// bubble goroutine has exited but blocked goroutines remain"), naming no
// run. reportLeaks tells which run, and where each such goroutine is
// blocked, before that happens.

var bubbleID = regexp.MustCompile(`synctest bubble (\d+)\]`)

// reportLeaks is called by the bubble's main goroutine once every Start
// has returned: when goroutines of the bubble remain, it writes the seed
// and their stacks to standard error and returns how many there are.
func (w *world) reportLeaks() int {
	if len(w.bubbled()) == 0 {
		return 0
	}
	// What only waits for a timer ends as virtual time passes: give it a
	// run's length (nothing of it is recorded any more) before judging.
	time.Sleep(time.Duration(max(w.sc.Horizon, 60_000)) * ms)
	leaked := w.bubbled()
	if len(leaked) == 0 {
		return 0
	}
	fmt.Fprintf(os.Stderr, "vclient: seed %d (%s): %d goroutine(s) of the client outlived every candidate's Start and are still blocked; "+
		"the run cannot end (synctest's deadlock panic follows). Where each is blocked:\n\n%s\n\n",
		w.sc.Seed, w.sc.Implementation, len(leaked), bytes.Join(leaked, []byte("\n\n")))
	return len(leaked)
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
