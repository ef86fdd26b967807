package explore

// Breadth-first search: a FIFO of waiting states expanded a chunk at a
// time, in parallel, merged in queue order.

import (
	"sync"
	"sync/atomic"

	"github.com/leasecheck/leasecheck/internal/sim"
)

// fifo is the breadth-first queue, in blocks of fifoBlock items: a level of
// tens of millions of waiting states grows by a block at a time, never by
// copying the whole queue into one twice its size (which held three times
// the queue at once at the moment of growth).
type fifo struct {
	blocks [][]item // blocks[0][head:] is the head; each block but the last is full
	head   int
	n      int
}

const fifoBlock = 1 << 14

func (q *fifo) len() int { return q.n }

func (q *fifo) push(it item) {
	if k := len(q.blocks); k == 0 || len(q.blocks[k-1]) == fifoBlock {
		q.blocks = append(q.blocks, make([]item, 0, fifoBlock))
	}
	k := len(q.blocks) - 1
	q.blocks[k] = append(q.blocks[k], it)
	q.n++
}

// take moves up to n items from the head into dst.
func (q *fifo) take(dst []item, n int) []item {
	dst = dst[:0]
	for len(dst) < n && q.n > 0 {
		b := q.blocks[0]
		k := min(n-len(dst), len(b)-q.head)
		dst = append(dst, b[q.head:q.head+k]...)
		clear(b[q.head : q.head+k])
		q.head += k
		q.n -= k
		if q.head == len(b) { // spent (a block not full is the last: the queue is empty)
			q.blocks[0] = nil
			q.blocks = q.blocks[1:]
			q.head = 0
		}
	}
	return dst
}

// bfsChunk is how many waiting states breadth-first search expands at
// once, in parallel on Options.Workers goroutines, before merging what they
// found into the visited set in queue order. It is a constant, not the
// number of workers: the states of a chunk are expanded with the sleep sets
// their visited entries had when the chunk began, so the counts and the
// counterexample depend on the chunk, never on the workers or GOMAXPROCS.
const bfsChunk = 64

func (x *explorer) bfs(root *sim.World) {
	x.rep.DistinctStates++
	x.reuse = max(x.o.reuse, 0)
	var queue fifo
	queue.push(x.rootItem(root))
	workers := max(x.o.Workers, 1)
	var chunk []item
	var sleeps [][]tkey
	var results [][]cand
	for queue.len() > 0 && !x.outOfBudget() {
		chunk = queue.take(chunk, bfsChunk)
		n := len(chunk)
		sleeps = sleeps[:0]
		for i := range chunk {
			sleeps = append(sleeps, x.claim(&chunk[i]))
		}
		results = append(results[:0], make([][]cand, n)...)
		if workers == 1 || n == 1 {
			for i := range chunk {
				results[i] = x.expandPure(&chunk[i], sleeps[i], nil)
			}
		} else {
			var next atomic.Int64
			var wg sync.WaitGroup
			for range min(workers, n) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
						results[i] = x.expandPure(&chunk[i], sleeps[i], nil)
					}
				}()
			}
			wg.Wait()
		}
		for i := range chunk {
			if i > 0 && x.outOfBudget() {
				break
			}
			x.apply(&chunk[i], results[i], queue.push)
			results[i] = nil
		}
		clear(chunk)
	}
}
