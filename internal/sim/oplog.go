package sim

import (
	"sync/atomic"

	"github.com/leasecheck/leasecheck/model"
)

// opLog is the history's operations, in chunks of opChunk shared between a
// world and its copies (Clone) until one of them changes a chunk: a state
// transition appends an op or answers a recent one, so a copy that writes
// copies one chunk and the list of chunk pointers, not the whole history.
// Copying the whole history on the first write was a third of the
// explorer's allocated bytes and a tenth of its time on the default plan.
//
// A chunk is writable by the log whose epoch it carries. Clone takes the
// epoch away from the original (every chunk becomes shared); the next
// write draws a fresh epoch, copies the list, and copies each chunk it
// writes. Epochs are drawn from one counter, so no two logs ever hold the
// same one.
type opLog struct {
	chunks []*opChunkT
	n      int
	// epoch is the epoch of the chunks this log may write, 0 when the log
	// owns none (nor its chunk list).
	epoch cow
}

// cow is an epoch of copy-on-write ownership: the parts that carry a
// world's current epoch are its own to write; the rest it shares with a
// copy and copies before writing. Clone takes the epoch away from the
// original (everything becomes shared); the next write draws a fresh
// epoch. Epochs are drawn from one counter, so no two owners ever hold the
// same one. Atomic: copies of one world are made on several goroutines,
// each storing 0 here (Clone).
type cow struct{ e uint64 }

var cowEpochs atomic.Uint64

// own returns the epoch, drawing a fresh one when there is none (fresh
// tells: whatever was shared must be copied before it is written).
func (c *cow) own() (e uint64, fresh bool) {
	e = atomic.LoadUint64(&c.e)
	if e == 0 {
		e = cowEpochs.Add(1)
		atomic.StoreUint64(&c.e, e)
		return e, true
	}
	return e, false
}

// share takes the epoch away: everything the owner had is shared now.
func (c *cow) share() {
	if atomic.LoadUint64(&c.e) != 0 {
		// Only a world its goroutine owns has an epoch: a world shared by
		// waiting states was copied before it was shared, so this store
		// never meets another copy of it.
		atomic.StoreUint64(&c.e, 0)
	}
}

// A chunk is two operations: a write copies a chunk (an operation is
// about 160 bytes) and the list of chunk pointers, so a smaller chunk
// copies less per write and a larger one a shorter list. Two allocated
// least and ran fastest of 1, 2 and 8 (docs/exploration.md, "Measured
// choices in the code").
const (
	opChunkBits = 1
	opChunk     = 1 << opChunkBits
)

type opChunkT struct {
	epoch uint64
	ops   [opChunk]model.Op
}

func (l *opLog) len() int { return l.n }

// at returns op i for reading.
func (l *opLog) at(i int) *model.Op { return &l.chunks[i>>opChunkBits].ops[i&(opChunk-1)] }

// own makes the chunk list this log's own, and returns its epoch.
func (l *opLog) own() uint64 {
	e, fresh := l.epoch.own()
	if fresh {
		l.chunks = append(make([]*opChunkT, 0, len(l.chunks)+1), l.chunks...)
	}
	return e
}

// chunkW returns chunk c for writing, copied first when it is shared.
func (l *opLog) chunkW(c int) *opChunkT {
	e := l.own()
	ch := l.chunks[c]
	if ch.epoch != e {
		cp := new(opChunkT) // not a local copy moved to the heap: that copied twice
		*cp = *ch
		cp.epoch = e
		ch = cp
		l.chunks[c] = ch
	}
	return ch
}

// mut returns op i for writing.
func (l *opLog) mut(i int) *model.Op { return &l.chunkW(i >> opChunkBits).ops[i&(opChunk-1)] }

// add appends op.
func (l *opLog) add(op model.Op) {
	if l.n&(opChunk-1) == 0 {
		e := l.own()
		l.chunks = append(l.chunks, &opChunkT{epoch: e})
	}
	*l.mut(l.n) = op
	l.n++
}

// share returns a copy of the log sharing every chunk, and makes the
// original's chunks shared too.
func (l *opLog) share() opLog {
	var c opLog
	c.chunks = l.chunks[:len(l.chunks):len(l.chunks)]
	c.n = l.n
	l.epoch.share()
	return c
}

// slice returns the operations as one slice of their own.
func (l *opLog) slice() []model.Op { return l.sliceInto(nil) }

// sliceInto returns the operations as one slice, in buf's room when it
// has enough.
func (l *opLog) sliceInto(buf []model.Op) []model.Op {
	out := buf[:0]
	if out == nil || cap(out) < l.n { // never nil: an empty history is [] in JSON
		out = make([]model.Op, l.n)
	}
	out = out[:l.n]
	for i := 0; i < l.n; i += opChunk {
		copy(out[i:], l.chunks[i>>opChunkBits].ops[:min(opChunk, l.n-i)])
	}
	return out
}
