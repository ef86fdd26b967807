package sim

// event is one entry of the event queue. Events run in (t, seq) order; seq
// is the order they were scheduled in, so ties break the same way every run.
type event struct {
	t    int64
	seq  uint64
	kind uint8
	node int32
	arg  int32
	gen  uint64
}

const (
	evDeliver  uint8 = iota + 1 // arg: message slot
	evWake                      // gen: the node's wake generation
	evFault                     // arg: fault index
	evFaultEnd                  // arg: fault index
	evResume                    // a pause ends; gen: the incarnation
	evUnfreeze                  // a freeze ends; gen: the incarnation
	evRestart                   // arg: fault index
)

// queue is a binary min-heap of events, written out to avoid container/heap's
// interface boxing on the hot path.
type queue struct {
	ev  []event
	seq uint64
}

func (q *queue) less(i, j int) bool {
	a, b := &q.ev[i], &q.ev[j]
	return a.t < b.t || (a.t == b.t && a.seq < b.seq)
}

func (q *queue) push(e event) {
	q.seq++
	e.seq = q.seq
	q.ev = append(q.ev, e)
	i := len(q.ev) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q.ev[i], q.ev[p] = q.ev[p], q.ev[i]
		i = p
	}
}

// pushKeep puts back an event taken out of the queue, keeping its place in
// the order of ties.
func (q *queue) pushKeep(e event) {
	q.ev = append(q.ev, e)
	i := len(q.ev) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q.ev[i], q.ev[p] = q.ev[p], q.ev[i]
		i = p
	}
}

func (q *queue) pop() event {
	top := q.ev[0]
	n := len(q.ev) - 1
	q.ev[0] = q.ev[n]
	q.ev = q.ev[:n]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && q.less(l, m) {
			m = l
		}
		if r < n && q.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		q.ev[i], q.ev[m] = q.ev[m], q.ev[i]
		i = m
	}
	return top
}
