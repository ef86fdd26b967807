package model

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"sync"
)

// A Reader with ReadOptions.Workers > 1 decodes ahead: after the head of
// the history (up to its first non-blank line, which decides the header) it
// cuts the rest into blocks of whole lines, decodes them on that many
// goroutines, and hands the ops back in file order, checking each process's
// order as it goes. Everything it reports — ops, faults, warnings, the
// first error and its line — is what the sequential Reader reports; memory
// stays bounded by a few blocks. Call Close when done with it early.
//
// Close waits until the goroutine that reads ahead has stopped: a caller
// that stops one Reader early and starts another on the same file (the
// checker seeks back to the start and reads again) must not have the first
// one still reading. Both would read from the one file offset, each taking
// blocks the other then misses: the second would see lines cut at any byte,
// with no data race a detector could see, as the file's own lock orders the
// reads.

// parallelBlock is the size of the blocks a decoding-ahead Reader decodes
// at once. Tests lower it.
var parallelBlock = 256 << 10

type block struct {
	data      []byte
	firstLine int
	lines     int   // lines in data (a last one without '\n' counts)
	ioErr     error // reading failed after this block
	eof       bool  // the input ended with this block
	// Decoded by a worker:
	ops      []Op
	faults   []FaultRecord
	warnings []Warning
	errLine  int
	reason   string
	done     chan struct{}
}

type pipeline struct {
	out    chan *block // in file order
	stop   chan struct{}
	done   sync.WaitGroup // the reading goroutine and the workers
	closed bool
	cur    *block
	oi     int // next op of cur
	fi     int // next fault of cur
	wi     int // next warning of cur
	warn   map[string]bool
}

// startPipeline starts decoding ahead from where r stands.
func (r *Reader) startPipeline() {
	workers := r.opts.Workers
	p := &pipeline{out: make(chan *block, 2*workers+1), stop: make(chan struct{}), warn: map[string]bool{}}
	for f := range r.dec.unknown {
		p.warn[f] = true
	}
	jobs := make(chan *block, 2*workers)
	stop := p.stop
	base := r.dec
	for range workers {
		p.done.Go(func() {
			d := newDecoder()
			d.hdr, d.headerLine, d.sawLine, d.strict = base.hdr, base.headerLine, true, base.strict
			for {
				select {
				case <-stop:
					return
				case b, ok := <-jobs:
					if !ok {
						return
					}
					decodeBlock(b, &d)
					close(b.done)
				}
			}
		})
	}
	size := parallelBlock
	p.done.Go(func() {
		defer close(jobs)
		next := r.line + 1
		for {
			b := readBlock(r.br, next, size)
			next += b.lines
			select {
			case jobs <- b:
			case <-stop:
				return
			}
			select {
			case p.out <- b:
			case <-stop:
				return
			}
			if b.eof || b.ioErr != nil {
				return
			}
		}
	})
	r.pipe = p
}

// readBlock reads the next block of whole lines.
func readBlock(br *bufio.Reader, firstLine, size int) *block {
	b := &block{firstLine: firstLine, done: make(chan struct{})}
	buf := make([]byte, size)
	n, err := io.ReadFull(br, buf)
	buf = buf[:n]
	switch err {
	case nil:
		// Complete the last line.
		for {
			rest, err := br.ReadSlice('\n')
			buf = append(buf, rest...)
			if err == bufio.ErrBufferFull {
				continue
			}
			if err == io.EOF {
				b.eof = true
			} else if err != nil {
				b.ioErr = err
			}
			break
		}
	case io.EOF, io.ErrUnexpectedEOF:
		b.eof = true
	default:
		b.ioErr = err
	}
	if b.ioErr != nil {
		// As the sequential Reader: the line being read when reading
		// failed is lost, and the error is reported at it.
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
			buf = buf[:i+1]
		} else {
			buf = buf[:0]
		}
	}
	b.data = buf
	b.lines = bytes.Count(buf, []byte{'\n'})
	if len(buf) > 0 && buf[len(buf)-1] != '\n' {
		b.lines++
	}
	return b
}

// decodeBlock decodes a block's lines with d, stopping at the first error.
func decodeBlock(b *block, d *decoder) {
	lineNo := b.firstLine
	for rest := b.data; len(rest) > 0; lineNo++ {
		var line []byte
		line, rest = cutLine(rest)
		b.ops = append(b.ops, Op{})
		var fault FaultRecord
		kind, reason := d.decodeLine(line, lineNo, &b.ops[len(b.ops)-1], &fault)
		if kind != lineOp || reason != "" {
			b.ops = b.ops[:len(b.ops)-1]
		}
		if reason != "" {
			b.errLine, b.reason = lineNo, reason
			break
		}
		if kind == lineFault {
			b.faults = append(b.faults, fault)
		}
	}
	b.warnings = d.warnings
	d.warnings = nil
}

// Close stops a Reader that decodes ahead; the sequential Reader needs no
// closing. When it returns, the Reader no longer reads from its input (it
// waits for a read in progress to return), so the input may be read again,
// from where the caller seeks, by another Reader. It is safe to call more
// than once, and after the end.
func (r *Reader) Close() {
	if r.pipe != nil && !r.pipe.closed {
		close(r.pipe.stop)
		r.pipe.closed = true
		r.pipe.done.Wait()
	}
}

// catchUp hands on the current block's faults and warnings from lines
// before line (0: all of them), in file order.
func (r *Reader) catchUp(line int) {
	p := r.pipe
	b := p.cur
	for p.fi < len(b.faults) && (line == 0 || b.faults[p.fi].Line < line) {
		if len(r.faults) < maxFaults {
			r.faults = append(r.faults, b.faults[p.fi])
		} else {
			r.dropped++
		}
		p.fi++
	}
	for p.wi < len(b.warnings) && (line == 0 || b.warnings[p.wi].Line <= line) {
		w := b.warnings[p.wi]
		p.wi++
		if p.warn[w.Field] || len(p.warn) > maxWarnedFields {
			continue
		}
		p.warn[w.Field] = true
		if len(p.warn) > maxWarnedFields {
			w.Message = "more unknown fields, not listed"
		}
		if r.opts.Warn != nil {
			w.Name = r.name
			r.opts.Warn(w)
		}
	}
}

// nextParallel is next for a Reader that decodes ahead.
func (r *Reader) nextParallel(op *Op) error {
	p := r.pipe
	for {
		if p.cur == nil {
			b, ok := <-p.out
			if !ok {
				return r.err // stopped
			}
			<-b.done
			p.cur, p.oi, p.fi, p.wi = b, 0, 0, 0
		}
		b := p.cur
		if p.oi < len(b.ops) {
			o := &b.ops[p.oi]
			p.oi++
			r.catchUp(o.Line)
			r.line = o.Line
			if reason := r.order.check(o); reason != "" {
				r.Close()
				return r.fail(reason)
			}
			*op = *o
			*o = Op{}
			r.ops++
			return nil
		}
		// The block is done: what it ended with.
		switch {
		case b.reason != "":
			r.catchUp(b.errLine)
			r.line = b.errLine
			r.Close()
			return r.fail(b.reason)
		case b.ioErr != nil:
			r.catchUp(0)
			r.line = b.firstLine + b.lines - 1
			r.Close()
			r.err = fmt.Errorf("%s:%d: %w", r.name, r.line+1, b.ioErr)
			return r.err
		case b.eof:
			r.catchUp(0)
			r.line = b.firstLine + b.lines - 1
			r.Close()
			if r.ops == 0 {
				r.line = max(r.line, 1)
				return r.fail(noOpReason)
			}
			r.err = io.EOF
			return io.EOF
		}
		r.catchUp(0)
		p.cur = nil
	}
}
