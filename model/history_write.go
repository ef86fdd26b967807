package model

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// Writer writes a history in format v1. Its output is deterministic: the
// same header and ops always give the same bytes (the simulator's
// byte-identical histories depend on it).
//
// Fields are written in a fixed order and absent ones are omitted:
// process, owner (when != process), key (when != ""), op, ttl (acquire and
// renew), fence (when != 0), value (write; read when HasValue), call, return
// (when Returned), at (when HasAt), ok (when Returned), error (when != "").
// Strings are escaped as encoding/json escapes them, without HTML escaping.
//
// A fault record (WriteFault) is a line of its own, with the fields fault,
// target, start, end (when HasEnd), amount (when != 0), peer, detail (when
// != "") and partial (when true), in that order. WriteHistory puts a
// history's fault records after the header and before the ops, in the
// order of History.Faults; a recorder that streams may interleave them
// with the ops as they happen. Readers accept them anywhere after the
// header. A reader that predates the extension refuses such a line (it has
// no "process"): an old leasecheck exits 2 on a new file rather than
// misjudging it.
type Writer struct {
	bw  *bufio.Writer
	buf []byte // scratch for one line
	err error
}

// NewWriter returns a Writer to w and writes the header line to its buffer.
// A zero Version or an empty TimeUnit in h is written as the default (1 and
// "ms"). Errors surface from Write and Flush.
func NewWriter(w io.Writer, h Header) *Writer {
	wr := &Writer{bw: bufio.NewWriterSize(w, 64<<10)}
	if h.Version == 0 {
		h.Version = 1
	}
	if h.TimeUnit == "" {
		h.TimeUnit = "ms"
	}
	b := append([]byte(nil), `{"format":"leasecheck/history","version":`...)
	b = strconv.AppendInt(b, int64(h.Version), 10)
	b = append(b, `,"time_unit":`...)
	b = appendJSONString(b, h.TimeUnit)
	b = append(b, `,"clock_uncertainty":`...)
	b = strconv.AppendInt(b, h.ClockUncertainty, 10)
	b = append(b, `,"semantics":`...)
	b = appendJSONString(b, h.Semantics.String())
	if h.Fences != Sequential {
		b = append(b, `,"fences":`...)
		b = appendJSONString(b, h.Fences.String())
	}
	if h.ExpiryLateness != 0 {
		b = append(b, `,"expiry_lateness":`...)
		b = strconv.AppendInt(b, h.ExpiryLateness, 10)
	}
	if h.Tokens != GrantTokens {
		b = append(b, `,"tokens":`...)
		b = appendJSONString(b, h.Tokens.String())
	}
	b = append(b, "}\n"...)
	_, wr.err = wr.bw.Write(b)
	wr.buf = b[:0]
	return wr
}

// Write writes one op line. It fails only for an op whose Kind is not one
// of the five, and when the underlying writer fails.
func (w *Writer) Write(op *Op) error {
	if w.err != nil {
		return w.err
	}
	if op.Kind < Acquire || op.Kind > Read {
		return fmt.Errorf("leasecheck history: cannot write op with %s (line %d)", op.Kind, op.Line)
	}
	w.buf = appendOp(w.buf[:0], op)
	_, w.err = w.bw.Write(w.buf)
	return w.err
}

// WriteFault writes one fault-record line.
func (w *Writer) WriteFault(f *FaultRecord) error {
	if w.err != nil {
		return w.err
	}
	w.buf = appendFault(w.buf[:0], f)
	_, w.err = w.bw.Write(w.buf)
	return w.err
}

// Flush writes any buffered data to the underlying writer.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	w.err = w.bw.Flush()
	return w.err
}

// WriteHistory writes h to w: its header, its fault records, then its ops.
func WriteHistory(w io.Writer, h *History) error {
	wr := NewWriter(w, h.Header)
	for i := range h.Faults {
		if err := wr.WriteFault(&h.Faults[i]); err != nil {
			return err
		}
	}
	for i := range h.Ops {
		if err := wr.Write(&h.Ops[i]); err != nil {
			return err
		}
	}
	return wr.Flush()
}

// appendOp appends op's line, with its '\n'.
func appendOp(b []byte, op *Op) []byte {
	b = append(b, `{"process":`...)
	b = appendJSONString(b, op.Process)
	if op.Owner != op.Process {
		b = append(b, `,"owner":`...)
		b = appendJSONString(b, op.Owner)
	}
	if op.Key != "" {
		b = append(b, `,"key":`...)
		b = appendJSONString(b, op.Key)
	}
	b = append(b, `,"op":"`...)
	b = append(b, kindNames[op.Kind]...)
	b = append(b, '"')
	if op.Kind == Acquire || op.Kind == Renew {
		b = append(b, `,"ttl":`...)
		b = strconv.AppendInt(b, op.TTL, 10)
	}
	if op.Fence != 0 {
		b = append(b, `,"fence":`...)
		b = strconv.AppendInt(b, op.Fence, 10)
	}
	if op.Kind == Write || (op.Kind == Read && op.HasValue) {
		b = append(b, `,"value":`...)
		b = appendJSONString(b, op.Value)
	}
	b = append(b, `,"call":`...)
	b = strconv.AppendInt(b, op.Call, 10)
	if op.Returned {
		b = append(b, `,"return":`...)
		b = strconv.AppendInt(b, op.Return, 10)
	}
	if op.HasAt {
		b = append(b, `,"at":`...)
		b = strconv.AppendInt(b, op.At, 10)
	}
	if op.Returned {
		if op.OK {
			b = append(b, `,"ok":true`...)
		} else {
			b = append(b, `,"ok":false`...)
		}
	}
	if op.Error != "" {
		b = append(b, `,"error":`...)
		b = appendJSONString(b, op.Error)
	}
	return append(b, "}\n"...)
}

// appendFault appends a fault record's line, with its '\n'.
func appendFault(b []byte, f *FaultRecord) []byte {
	b = append(b, `{"fault":`...)
	b = appendJSONString(b, f.Kind)
	b = append(b, `,"target":`...)
	b = appendJSONString(b, f.Target)
	b = append(b, `,"start":`...)
	b = strconv.AppendInt(b, f.Start, 10)
	if f.HasEnd {
		b = append(b, `,"end":`...)
		b = strconv.AppendInt(b, f.End, 10)
	}
	if f.Amount != 0 {
		b = append(b, `,"amount":`...)
		b = strconv.AppendInt(b, f.Amount, 10)
	}
	if f.Peer != "" {
		b = append(b, `,"peer":`...)
		b = appendJSONString(b, f.Peer)
	}
	if f.Detail != "" {
		b = append(b, `,"detail":`...)
		b = appendJSONString(b, f.Detail)
	}
	if f.Partial {
		b = append(b, `,"partial":true`...)
	}
	return append(b, "}\n"...)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string, escaped exactly as
// encoding/json escapes it with HTML escaping off: '"', '\\' and control
// characters are escaped (\b \f \n \r \t in short form), invalid UTF-8
// becomes \ufffd, and U+2028 and U+2029 are escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// NumberLines sets every record's Line to the line WriteHistory writes it
// on: the header is line 1, the fault records follow it, then the ops. A
// producer calls it once its history is complete, so that the lines a
// verdict cites are the lines of the file it saves.
func (h *History) NumberLines() {
	for i := range h.Faults {
		h.Faults[i].Line = i + 2
	}
	for i := range h.Ops {
		h.Ops[i].Line = len(h.Faults) + i + 2
	}
}
