package explore

import "testing"

// TestFifoKeepsOrder: the blocked breadth-first queue hands items out in
// the order they were pushed, across block boundaries, with takes and
// pushes interleaved as the search does them (a chunk taken, its children
// pushed), and empties and refills.
func TestFifoKeepsOrder(t *testing.T) {
	var q fifo
	var next, want int32
	var dst []item
	push := func(k int) {
		for range k {
			q.push(item{depth: next})
			next++
		}
	}
	take := func(k int) {
		dst = q.take(dst, k)
		for _, it := range dst {
			if it.depth != want {
				t.Fatalf("took item %d, want %d", it.depth, want)
			}
			want++
		}
		if q.len() != int(next-want) {
			t.Fatalf("len %d, want %d", q.len(), next-want)
		}
	}
	push(1)
	for round := 0; round < 3000; round++ {
		take(64)
		push(round%7*23 + round%3) // grows, with rounds that push nothing
	}
	for q.len() > 0 {
		take(1000)
	}
	push(fifoBlock + 5)
	take(fifoBlock + 5)
	push(3)
	take(64)
	if want != next || len(q.blocks) > 1 {
		t.Fatalf("took %d of %d, %d blocks left", want, next, len(q.blocks))
	}
}
