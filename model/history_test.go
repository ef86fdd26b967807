package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// readResult is everything a read yields.
type readResult struct {
	hdr      Header
	ops      []Op
	faults   []FaultRecord
	warnings []Warning
	err      error
}

// readMode reads data with a streaming Reader, decoding every line with the
// fast path (where it can) or, when slow, with encoding/json only. It
// returns the header, every op and fault read before the first error, the
// warnings, and that error (nil at a clean end).
func readMode(data []byte, slow, strict bool) readResult {
	return readModeWorkers(data, slow, strict, 0)
}

// readModeWorkers is readMode with a Reader decoding ahead on workers.
func readModeWorkers(data []byte, slow, strict bool, workers int) readResult {
	var res readResult
	o := ReadOptions{Strict: strict, Warn: func(w Warning) { res.warnings = append(res.warnings, w) }, Workers: workers}
	r := o.NewReader(bytes.NewReader(data), "h.jsonl")
	defer r.Close()
	r.dec.slow = slow
	for {
		op, err := r.Next()
		if err == io.EOF {
			res.hdr, res.faults = r.Header(), r.Faults()
			return res
		}
		if err != nil {
			// The error is sticky.
			if _, err2 := r.Next(); err2 != err {
				panic("Next after an error returned " + errString(err2) + ", want " + errString(err))
			}
			res.hdr, res.faults, res.err = r.Header(), r.Faults(), err
			return res
		}
		res.ops = append(res.ops, op)
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// readBoth reads data with the fast and the slow decoder, fails the test
// when they disagree in any way, and returns what they read.
func readBoth(t testing.TB, data []byte) (Header, []Op, error) {
	t.Helper()
	r := readAll(t, data, false)
	readAll(t, data, true)
	return r.hdr, r.ops, r.err
}

// readAll is readBoth with every result, strict or not. It also checks
// that Strict refuses exactly the first line a warning names.
func readAll(t testing.TB, data []byte, strict bool) readResult {
	t.Helper()
	r1 := readMode(data, false, strict)
	r2 := readMode(data, true, strict)
	if errString(r1.err) != errString(r2.err) {
		t.Fatalf("fast and slow decoders disagree on the error:\nfast: %v\nslow: %v\ninput: %q", r1.err, r2.err, data)
	}
	if r1.hdr != r2.hdr {
		t.Fatalf("fast and slow decoders disagree on the header: %+v vs %+v\ninput: %q", r1.hdr, r2.hdr, data)
	}
	if !reflect.DeepEqual(r1.ops, r2.ops) || !reflect.DeepEqual(r1.faults, r2.faults) || !reflect.DeepEqual(r1.warnings, r2.warnings) {
		t.Fatalf("fast and slow decoders disagree:\nfast: %+v\nslow: %+v\ninput: %q", r1, r2, data)
	}
	if strict && len(r1.warnings) > 0 {
		t.Fatalf("strict reading warned: %v", r1.warnings)
	}
	if !strict && len(r1.warnings) > 0 {
		// Strict stops at the first line with an unknown field.
		s := readMode(data, false, true)
		var pe *ParseError
		if !errors.As(s.err, &pe) || pe.Line != r1.warnings[0].Line || !strings.Contains(pe.Reason, "unknown field") {
			t.Fatalf("warned %v, but strict reading says %v\ninput: %q", r1.warnings, s.err, data)
		}
	}
	// A Reader that decodes ahead gives the same, whatever its block size.
	for _, block := range []int{1, 7, 64, 4096} {
		saved := parallelBlock
		parallelBlock = block
		rp := readModeWorkers(data, false, strict, 3)
		parallelBlock = saved
		if errString(rp.err) != errString(r1.err) || rp.hdr != r1.hdr || !reflect.DeepEqual(rp.ops, r1.ops) ||
			!reflect.DeepEqual(rp.faults, r1.faults) || !reflect.DeepEqual(rp.warnings, r1.warnings) {
			t.Fatalf("decoding ahead (block %d) disagrees:\nahead: %+v\nsequential: %+v\ninput: %q", block, rp, r1, data)
		}
	}
	// ReadHistory gives the same as the streaming reader, however many
	// chunks it decodes in parallel.
	checkHistory := func(how string, read func(o ReadOptions) (*History, error)) {
		t.Helper()
		var warnings []Warning
		h, err := read(ReadOptions{Strict: strict, Warn: func(w Warning) { warnings = append(warnings, w) }})
		if errString(err) != errString(r1.err) {
			t.Fatalf("%s: error %v, streaming reader %v\ninput: %q", how, err, r1.err, data)
		}
		if !reflect.DeepEqual(warnings, r1.warnings) {
			t.Fatalf("%s: warnings %v, streaming reader %v\ninput: %q", how, warnings, r1.warnings, data)
		}
		if err == nil && (h.Header != r1.hdr || !reflect.DeepEqual(h.Ops, r1.ops) || !reflect.DeepEqual(h.Faults, r1.faults) || h.Name != "h.jsonl") {
			t.Fatalf("%s read %+v, streaming reader %+v\ninput: %q", how, h, r1, data)
		}
	}
	checkHistory("ReadHistory", func(o ReadOptions) (*History, error) { return o.ReadHistory(bytes.NewReader(data), "h.jsonl") })
	checkHistory("readHistoryStreaming", func(o ReadOptions) (*History, error) {
		return o.readHistoryStreaming(bytes.NewReader(data), "h.jsonl")
	})
	for _, chunks := range []int{1, 2, 3, 7} {
		checkHistory(fmt.Sprintf("readHistoryChunks(%d)", chunks), func(o ReadOptions) (*History, error) {
			return o.readHistoryChunks(data, "h.jsonl", chunks)
		})
	}
	return r1
}

func withoutLines(ops []Op) []Op {
	out := make([]Op, len(ops))
	for i, op := range ops {
		op.Line = 0
		out[i] = op
	}
	return out
}

func writeHistory(t testing.TB, h *History) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteHistory(&buf, h); err != nil {
		t.Fatalf("WriteHistory: %v", err)
	}
	return buf.Bytes()
}

// sampleOps covers every kind, optional field and awkward string.
func sampleOps() []Op {
	return []Op{
		{Process: "A", Owner: "A", Key: "k", Kind: Acquire, TTL: 5, Fence: 1, Call: 0, Return: 1, Returned: true, At: 0, HasAt: true, OK: true},
		{Process: "A", Owner: "A", Key: "k", Kind: Write, Fence: 1, Value: "v1", HasValue: true, Call: 1, Return: 2, Returned: true, At: 2, HasAt: true, OK: true},
		{Process: "B", Owner: "node-b", Key: "k", Kind: Acquire, TTL: 5, Call: 1, Return: 3, Returned: true, OK: false, Error: "held"},
		{Process: "A", Owner: "A", Key: "k", Kind: Renew, TTL: 7, Fence: 1, Call: 2, Return: 4, Returned: true, OK: true},
		{Process: "C", Owner: "C", Kind: Read, Call: 3, Return: 4, Returned: true, OK: true},                                   // nothing written yet
		{Process: "C", Owner: "C", Kind: Read, Value: "", HasValue: true, Call: 5, Return: 6, Returned: true, OK: true},        // empty value
		{Process: "A", Owner: "A", Key: "k", Kind: Write, Fence: 1, Value: "", HasValue: true, Call: 5, Returned: false},       // never returned
		{Process: "A", Owner: "A", Key: "k", Kind: Release, Call: 6, Return: 9, Returned: true, At: 10, HasAt: true, OK: true}, // at within u
		{Process: "D", Owner: "", Key: "", Kind: Release, Fence: 3, Call: -50, Return: -40, Returned: true, OK: false, Error: "not-holder"},
		{Process: "E\"q\\", Owner: "ö\u2028\u2029<>&\x7f", Key: "tab\there\nnl\x01\x1f\b\f\r", Kind: Write, Fence: MaxFence,
			Value: "日本語 \U0001F600 </script>", HasValue: true, Call: -MaxTime, Return: MaxTime, Returned: true, OK: false, Error: "stale-fence"},
		{Process: "F", Owner: "F", Kind: Acquire, TTL: MaxTime, Call: 100, Returned: false, At: MaxTime, HasAt: true},
		{Process: "F", Owner: "F", Kind: Renew, TTL: 1, Fence: 9, Call: 101, Returned: false}, // (an unanswered acquire names no fence)
	}
}

func TestRoundTrip(t *testing.T) {
	h := &History{
		Name:   "h.jsonl",
		Header: Header{Version: 1, TimeUnit: "us", ClockUncertainty: 2, Semantics: FencedStorage},
		Ops:    sampleOps(),
	}
	out := writeHistory(t, h)
	hdr, ops, err := readBoth(t, out)
	if err != nil {
		t.Fatalf("reading what the writer wrote: %v\n%s", err, out)
	}
	if hdr != h.Header {
		t.Errorf("header %+v, want %+v", hdr, h.Header)
	}
	for i := range ops {
		if ops[i].Line != i+2 {
			t.Errorf("op %d: Line %d, want %d", i, ops[i].Line, i+2)
		}
	}
	if got := withoutLines(ops); !reflect.DeepEqual(got, h.Ops) {
		t.Errorf("round trip changed the ops:\ngot  %+v\nwant %+v", got, h.Ops)
	}
	again := writeHistory(t, &History{Name: "x", Header: hdr, Ops: ops})
	if !bytes.Equal(again, out) {
		t.Errorf("read-write is not byte-identical:\nfirst  %s\nsecond %s", out, again)
	}
}

func TestWriterExactBytes(t *testing.T) {
	h := &History{Header: DefaultHeader(), Ops: []Op{
		{Process: "A", Owner: "A", Key: "k", Kind: Acquire, TTL: 5, Fence: 1, Call: 0, Return: 1, Returned: true, At: 0, HasAt: true, OK: true},
		{Process: "B", Owner: "o", Kind: Write, Fence: 2, Value: "a<b>&\"c\"", HasValue: true, Call: 3, Returned: false, Error: "timeout"},
		{Process: "C", Owner: "C", Kind: Read, Call: 3, Return: 4, Returned: true, OK: true},
		{Process: "C", Owner: "C", Kind: Read, Value: "x", HasValue: true, Call: 4, Return: 5, Returned: true, OK: false},
		{Process: "D", Owner: "D", Kind: Release, TTL: 99, Call: 1, Return: 2, Returned: true, OK: true},
	}}
	want := `{"format":"leasecheck/history","version":1,"time_unit":"ms","clock_uncertainty":0,"semantics":"seed"}
{"process":"A","key":"k","op":"acquire","ttl":5,"fence":1,"call":0,"return":1,"at":0,"ok":true}
{"process":"B","owner":"o","op":"write","fence":2,"value":"a<b>&\"c\"","call":3,"error":"timeout"}
{"process":"C","op":"read","call":3,"return":4,"ok":true}
{"process":"C","op":"read","value":"x","call":4,"return":5,"ok":false}
{"process":"D","op":"release","call":1,"return":2,"ok":true}
`
	if got := string(writeHistory(t, h)); got != want {
		t.Errorf("writer output:\n%s\nwant:\n%s", got, want)
	}

	// The header carries its values; a zero Header is the default one.
	for _, tc := range []struct {
		h    Header
		want string
	}{
		{Header{}, `{"format":"leasecheck/history","version":1,"time_unit":"ms","clock_uncertainty":0,"semantics":"seed"}` + "\n"},
		{Header{Version: 1, TimeUnit: "ns", ClockUncertainty: 250, Semantics: FencedStorage},
			`{"format":"leasecheck/history","version":1,"time_unit":"ns","clock_uncertainty":250,"semantics":"fenced-storage"}` + "\n"},
		{Header{Version: 1, TimeUnit: "us", ClockUncertainty: 5, Semantics: Seed, Fences: Increasing, ExpiryLateness: 1500000},
			`{"format":"leasecheck/history","version":1,"time_unit":"us","clock_uncertainty":5,"semantics":"seed","fences":"increasing","expiry_lateness":1500000}` + "\n"},
	} {
		var buf bytes.Buffer
		w := NewWriter(&buf, tc.h)
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if buf.String() != tc.want {
			t.Errorf("header %+v written as %s, want %s", tc.h, buf.String(), tc.want)
		}
		if tc.h.Version == 0 {
			continue
		}
		back, err := ReadHistory(strings.NewReader(tc.want+`{"process":"A","op":"read","call":1}`+"\n"), "h")
		if err != nil {
			t.Errorf("header %s read back: %v", tc.want, err)
		} else if back.Header != tc.h {
			t.Errorf("header %s read back as %+v, want %+v", tc.want, back.Header, tc.h)
		}
	}

	var buf bytes.Buffer
	if err := NewWriter(&buf, DefaultHeader()).Write(&Op{Process: "A"}); err == nil {
		t.Error("writing an op without a kind: no error")
	}
}

func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	var all []byte
	for c := 0; c < 256; c++ {
		all = append(all, byte(c))
	}
	for _, s := range []string{"", "plain", "<>&", "\u2028\u2029", "\xff\xfe", "a\xc3", "\xed\xa0\x80", string(all),
		"日本語", "\U0001F600", "\"\\/", "\x00\x1f\x7f", "ok\u2027\u202a"} {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSuffix(buf.String(), "\n")
		if got := string(appendJSONString(nil, s)); got != want {
			t.Errorf("appendJSONString(%q) = %s, encoding/json: %s", s, got, want)
		}
	}
}

const hdrLine = `{"format":"leasecheck/history","version":1,"time_unit":"ms","clock_uncertainty":2,"semantics":"seed"}`

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		input  string
		line   int
		reason string // a substring of the reason
	}{
		{"truncated JSON", `{"process":"A","op":"read","call":1,"return":2,"ok":true}` + "\n" + `{"process":"A","op":"read","ca`, 2, "invalid JSON: unexpected end of JSON input"},
		{"truncated after value", `{"process":"A","op":"read","call":1`, 1, "invalid JSON: "},
		{"garbage after object", `{"process":"A","op":"read","call":1} x`, 1, "invalid JSON: invalid character 'x' after top-level value"},
		{"two objects", `{"process":"A","op":"read","call":1}{"a":1}`, 1, "invalid JSON: "},
		{"leading zero", `{"process":"A","op":"read","call":01}`, 1, "invalid JSON: "},
		{"bad literal", `{"process":"A","op":"read","call":1,"return":2,"ok":tru}`, 1, "invalid JSON: "},
		{"control char in string", "{\"process\":\"A\x01\",\"op\":\"read\",\"call\":1}", 1, "invalid JSON: "},
		{"single quotes", `{'process':'A'}`, 1, "invalid JSON: "},
		{"invalid UTF-8", "{\"process\":\"A\xff\",\"op\":\"read\",\"call\":1}", 1, "invalid UTF-8 at byte 14"},
		{"array line", `[1,2]`, 1, "not a JSON object (got array)"},
		{"string line", `"hello"`, 1, "not a JSON object (got string)"},
		{"null line", `null`, 1, "not a JSON object (got null)"},
		{"number line", "\n 42 ", 2, "not a JSON object (got number)"},
		{"unknown op", `{"process":"A","op":"steal","call":1}`, 1, `field "op": unknown operation "steal"`},
		{"missing process", `{"op":"read","call":1}`, 1, `field "process" is required`},
		{"null process", `{"process":null,"op":"read","call":1}`, 1, `field "process" is required`},
		{"empty process", `{"process":"","op":"read","call":1}`, 1, `field "process": must not be empty`},
		{"missing op", `{"process":"A","call":1}`, 1, `field "op" is required`},
		{"missing call", `{"process":"A","op":"read","return":1,"ok":true}`, 1, `field "call" is required`},
		{"missing ok", `{"process":"A","op":"read","call":1,"return":2}`, 1, `field "ok" is required when "return" is present`},
		{"missing ttl", `{"process":"A","op":"acquire","call":1}`, 1, `field "ttl" is required for acquire`},
		{"missing ttl renew", `{"process":"A","op":"renew","call":1}`, 1, `field "ttl" is required for renew`},
		{"negative ttl", hdrLine + "\n\n" + `{"process":"A","op":"acquire","ttl":-3,"call":1}`, 3, `field "ttl": must be > 0, got -3`},
		{"zero ttl", `{"process":"A","op":"renew","ttl":0,"call":1}`, 1, `field "ttl": must be > 0, got 0`},
		{"missing fence write", `{"process":"A","op":"write","value":"v","call":1}`, 1, `field "fence" is required for write`},
		{"missing fence acquire ok", `{"process":"A","op":"acquire","ttl":5,"call":1,"return":2,"ok":true}`, 1, `field "fence" is required for an acquire that succeeded`},
		{"zero fence", `{"process":"A","op":"release","fence":0,"call":1}`, 1, `field "fence": must be >= 1, got 0`},
		{"missing value write", `{"process":"A","op":"write","fence":1,"call":1}`, 1, `field "value" is required for write`},
		{"return before call", `{"process":"A","op":"read","call":5,"return":4,"ok":true}`, 1, `field "return": 4 is before call 5`},
		{"overlap", `{"process":"A","op":"read","call":1,"return":7,"ok":true}` + "\n" + `{"process":"B","op":"read","call":2,"return":3,"ok":true}` + "\n" +
			`{"process":"A","op":"read","call":5,"return":8,"ok":true}`, 3,
			`process "A": call 5 is before the return 7 of its previous operation (line 1); a process's operations must not overlap`},
		{"out of order after unreturned", `{"process":"A","op":"read","call":10}` + "\n" + `{"process":"A","op":"read","call":9,"return":11,"ok":true}`, 2,
			`process "A": call 9 is before the call 10 of its previous operation (line 1, which never returned)`},
		{"overlap across unreturned", `{"process":"A","op":"read","call":1,"return":7,"ok":true}` + "\n" + `{"process":"A","op":"read","call":8}` + "\n" +
			`{"process":"A","op":"read","call":5,"return":9,"ok":true}`, 3, `call 5 is before the call 8 of its previous operation (line 2`},
		{"unsupported version", `{"format":"leasecheck/history","version":2}`, 1, "unsupported history version 2 (this leasecheck reads version 1)"},
		{"version zero", `{"format":"leasecheck/history","version":0}`, 1, "unsupported history version 0"},
		{"missing version", `{"format":"leasecheck/history"}`, 1, `header field "version" is required`},
		{"version string", `{"format":"leasecheck/history","version":"1"}`, 1, `header field "version": want an integer, got string`},
		{"wrong format", "\n\n" + `{"format":"other","version":1}`, 3, `header field "format": want "leasecheck/history", got "other"`},
		{"format not string", `{"format":1,"version":1}`, 1, `header field "format": want a string, got number`},
		{"bad time unit", `{"format":"leasecheck/history","version":1,"time_unit":"h"}`, 1, `header field "time_unit": want one of ns, us, ms, s, got "h"`},
		{"negative uncertainty", `{"format":"leasecheck/history","version":1,"clock_uncertainty":-1}`, 1, `header field "clock_uncertainty": must be >= 0, got -1`},
		{"negative expiry lateness", `{"format":"leasecheck/history","version":1,"expiry_lateness":-3}`, 1, `header field "expiry_lateness": must be >= 0, got -3`},
		{"expiry lateness not a number", `{"format":"leasecheck/history","version":1,"expiry_lateness":"1s"}`, 1, `header field "expiry_lateness": want`},
		{"bad semantics", `{"format":"leasecheck/history","version":1,"semantics":"strict"}`, 1, `header field "semantics": want "seed" or "fenced-storage", got "strict"`},
		{"header not first", `{"process":"A","op":"read","call":1}` + "\n" + hdrLine, 2, `a header line (it has a "format" field) must be the first non-blank line`},
		{"second header", hdrLine + "\n" + `{"process":"A","op":"read","call":1}` + "\n\n" + hdrLine, 4, `a second header line (it has a "format" field); the header is line 1`},
		{"at before call-u", hdrLine + "\n" + `{"process":"A","op":"read","call":10,"return":20,"at":7,"ok":true}`, 2,
			`field "at": 7 is outside [call - u, return + u] = [8, 22]`},
		{"at after return+u", hdrLine + "\n" + `{"process":"A","op":"read","call":10,"return":20,"at":23,"ok":true}`, 2,
			`field "at": 23 is outside [call - u, return + u] = [8, 22]`},
		{"at before call, no uncertainty", `{"process":"A","op":"read","call":10,"return":20,"at":9,"ok":true}`, 1,
			`field "at": 9 is outside [call - u, return + u] = [10, 20]`},
		{"at before call, unreturned", hdrLine + "\n" + `{"process":"A","op":"read","call":10,"at":7}`, 2, `field "at": 7 is before call - u = 8`},
		{"ttl string", `{"process":"A","op":"acquire","ttl":"5","call":1}`, 1, `field "ttl": want an integer, got string`},
		{"ttl fraction", `{"process":"A","op":"acquire","ttl":5.5,"call":1}`, 1, `field "ttl": want an integer, got 5.5`},
		{"ttl exponent", `{"process":"A","op":"acquire","ttl":5e2,"call":1}`, 1, `field "ttl": want an integer, got 5e2`},
		{"ttl 1.0", `{"process":"A","op":"acquire","ttl":1.0,"call":1}`, 1, `field "ttl": want an integer, got 1.0`},
		{"call too big", `{"process":"A","op":"read","call":9223372036854775808}`, 1, `field "call": 9223372036854775808 does not fit in a 64-bit integer`},
		{"call too small", `{"process":"A","op":"read","call":-9223372036854775809}`, 1, `field "call": -9223372036854775809 does not fit in a 64-bit integer`},
		{"call huge", `{"process":"A","op":"read","call":123456789012345678901234567890}`, 1, `does not fit in a 64-bit integer`},
		{"call bool", `{"process":"A","op":"read","call":true}`, 1, `field "call": want an integer, got boolean`},
		{"call object", `{"process":"A","op":"read","call":{"t":1}}`, 1, `field "call": want an integer, got object`},
		{"return array", `{"process":"A","op":"read","call":1,"return":[2]}`, 1, `field "return": want an integer, got array`},
		{"process number", `{"process":7,"op":"read","call":1}`, 1, `field "process": want a string, got number`},
		{"owner bool", `{"process":"A","owner":false,"op":"read","call":1}`, 1, `field "owner": want a string, got boolean`},
		{"key number", `{"process":"A","key":1,"op":"read","call":1}`, 1, `field "key": want a string, got number`},
		{"op number", `{"process":"A","op":1,"call":1}`, 1, `field "op": want a string, got number`},
		{"ok string", `{"process":"A","op":"read","call":1,"return":2,"ok":"yes"}`, 1, `field "ok": want true or false, got string`},
		{"value number", `{"process":"A","op":"write","fence":1,"value":3,"call":1}`, 1, `field "value": want a string, got number`},
		{"error number", `{"process":"A","op":"read","call":1,"error":500}`, 1, `field "error": want a string, got number`},
		{"at string", `{"process":"A","op":"read","call":1,"at":"1"}`, 1, `field "at": want an integer, got string`},
		{"fence string escaped", `{"process":"A","op":"write","fence":"\u0031","value":"v","call":1}`, 1, `field "fence": want an integer, got string`},
		{"unknown op escaped", `{"process":"A","op":"re\u0061dx","call":1}`, 1, `field "op": unknown operation "readx"`},
		{"empty", "", 1, "the history has no operation"},
		{"only blank lines", "\n \n\t\r\n", 3, "the history has no operation"},
		{"only a header", hdrLine, 1, "the history has no operation"},
		{"only a header and a fault", hdrLine + "\n" + `{"fault":"pause","target":"A","start":1}` + "\n", 2, "the history has no operation"},
		{"duplicate field", `{"process":"A","op":"write","op":"read","call":1}`, 1, `duplicate field "op": a field may appear only once in an object`},
		{"duplicate field, null", `{"process":"A","op":"read","call":1,"call":null}`, 1, `duplicate field "call"`},
		{"duplicate field, escaped", `{"process":"A","op":"read","call":1,"c\u0061ll":2}`, 1, `duplicate field "call"`},
		{"duplicate unknown field", `{"process":"A","op":"read","call":1,"x":1,"y":2,"x":3}`, 1, `duplicate field "x"`},
		{"duplicate header field", `{"format":"leasecheck/history","version":1,"version":1}`, 1, `duplicate field "version"`},
		{"call beyond MaxTime", `{"process":"A","op":"read","call":4611686018427387904}`, 1, `field "call": 4611686018427387904 is outside the times leasecheck can reason about exactly`},
		{"call below -MaxTime", `{"process":"A","op":"read","call":-9223372036854775808}`, 1, `field "call": -9223372036854775808 is outside`},
		{"return beyond MaxTime", `{"process":"A","op":"read","call":1,"return":9223372036854775807,"ok":true}`, 1, `field "return": 9223372036854775807 is outside`},
		{"at beyond MaxTime", `{"process":"A","op":"read","call":1,"at":9223372036854775807}`, 1, `field "at": 9223372036854775807 is outside`},
		{"ttl beyond MaxTime", `{"process":"A","op":"acquire","ttl":9223372036854775807,"call":1}`, 1, `field "ttl": 9223372036854775807 is above the largest time`},
		{"fence beyond MaxFence", `{"process":"A","op":"release","fence":9223372036854775807,"call":1}`, 1, `field "fence": 9223372036854775807 is above the largest fence`},
		{"uncertainty beyond MaxTime", `{"format":"leasecheck/history","version":1,"clock_uncertainty":9223372036854775807}`, 1, `header field "clock_uncertainty": 9223372036854775807 is above`},
		{"fence in a fence-less history", `{"format":"leasecheck/history","version":1,"fences":"none"}` + "\n" +
			`{"process":"A","op":"acquire","ttl":5,"fence":1,"call":1,"return":2,"ok":true}`, 2, `field "fence": the header declares "fences":"none"`},
		{"fence-less fenced storage", `{"format":"leasecheck/history","version":1,"fences":"none","semantics":"fenced-storage"}`, 1, `"fences":"none" cannot go with "semantics":"fenced-storage"`},
		{"bad fences", `{"format":"leasecheck/history","version":1,"fences":"random"}`, 1, `header field "fences": want "sequential", "increasing" or "none", got "random"`},
		{"fault without target", `{"fault":"pause","start":1}`, 1, `field "target" is required for a fault record`},
		{"fault with empty kind", `{"fault":"","target":"A","start":1}`, 1, `field "fault": must not be empty`},
		{"fault without start", `{"fault":"pause","target":"A","end":5}`, 1, `field "start" is required for a fault record`},
		{"fault ending before it starts", `{"fault":"pause","target":"A","start":5,"end":4}`, 1, `field "end": 4 is before start 5`},
		{"fault start string", `{"fault":"pause","target":"A","start":"5"}`, 1, `field "start": want an integer, got string`},
		{"fault partial string", `{"fault":"pause","target":"A","start":5,"partial":"yes"}`, 1, `field "partial": want true or false, got string`},
		{"fault and op", `{"fault":"pause","target":"A","start":5,"process":"A","op":"read","call":1}`, 1, `a line is an operation ("process") or a fault record ("fault"), not both`},
		{"fault before the header", `{"fault":"pause","target":"A","start":5}` + "\n" + hdrLine, 2, `must be the first non-blank line`},
		{"error after good lines", `{"process":"A","op":"read","call":1,"return":2,"ok":true}` + "\n   \n\t\r\n" + `{"process":"A","op":"read","call":3,"return":2,"ok":true}`, 4,
			`field "return": 2 is before call 3`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := readBoth(t, []byte(tc.input))
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("got error %v, want a *ParseError", err)
			}
			if pe.Name != "h.jsonl" || pe.Line != tc.line || !strings.Contains(pe.Reason, tc.reason) {
				t.Errorf("got %q (line %d), want line %d and a reason containing %q", err, pe.Line, tc.line, tc.reason)
			}
			if want := "h.jsonl:" + itoa(tc.line) + ": " + pe.Reason; err.Error() != want {
				t.Errorf("Error() = %q, want %q", err.Error(), want)
			}
		})
	}
}

func itoa(n int) string { return string(appendInt(nil, n)) }

func appendInt(b []byte, n int) []byte {
	if n >= 10 {
		b = appendInt(b, n/10)
	}
	return append(b, byte('0'+n%10))
}

// TestLenient covers what the reader accepts and how it reads it.
func TestLenient(t *testing.T) {
	for _, tc := range []struct {
		name  string
		input string
		hdr   Header
		ops   []Op
	}{
		{"header defaults", "\n" + `{"format":"leasecheck/history","version":1}` + "\n" + `{"process":"A","op":"read","call":1}`,
			DefaultHeader(), []Op{{Line: 3, Process: "A", Owner: "A", Kind: Read, Call: 1}}},
		{"header after blank lines, CRLF", "\r\n  \r\n" + `{"format":"leasecheck/history","version":1,"time_unit":"s","semantics":"fenced-storage"}` + "\r\n" +
			`{"process":"A","op":"read","call":1}` + "\r\n",
			Header{Version: 1, TimeUnit: "s", Semantics: FencedStorage}, []Op{{Line: 4, Process: "A", Owner: "A", Kind: Read, Call: 1}}},
		{"BOM", "\xef\xbb\xbf" + `{"process":"A","op":"read","call":1}`, DefaultHeader(), []Op{{Line: 1, Process: "A", Owner: "A", Kind: Read, Call: 1}}},
		{"unknown fields, nested", `{"trace":{"id":[1,2,{"x":null}]},"process":"A","span":[],"op":"read","extra":1.5e3,"call":1,"z":"\u00e9\n","n":null,"b":true}`,
			DefaultHeader(), []Op{{Line: 1, Process: "A", Owner: "A", Kind: Read, Call: 1}}},
		{"null fields are absent", `{"process":"A","owner":null,"key":null,"op":"read","value":null,"call":1,"return":null,"at":null,"ok":null,"error":null,"fence":null}`,
			DefaultHeader(), []Op{{Line: 1, Process: "A", Owner: "A", Kind: Read, Call: 1}}},
		{"format null is not a header", `{"format":null,"process":"A","op":"read","call":1}`, DefaultHeader(), []Op{{Line: 1, Process: "A", Owner: "A", Kind: Read, Call: 1}}},
		{"unreturned: ok ignored", `{"process":"A","op":"acquire","ttl":3,"call":1,"ok":"whatever"}`, DefaultHeader(),
			[]Op{{Line: 1, Process: "A", Owner: "A", Kind: Acquire, TTL: 3, Call: 1}}},
		{"unreturned: ok true does not need a fence", `{"process":"A","op":"acquire","ttl":3,"call":1,"ok":true}`, DefaultHeader(),
			[]Op{{Line: 1, Process: "A", Owner: "A", Kind: Acquire, TTL: 3, Call: 1}}},
		{"failed acquire needs no fence", `{"process":"A","op":"acquire","ttl":3,"call":1,"return":1,"ok":false,"error":"held"}`, DefaultHeader(),
			[]Op{{Line: 1, Process: "A", Owner: "A", Kind: Acquire, TTL: 3, Call: 1, Return: 1, Returned: true, Error: "held"}}},
		{"ttl and value ignored where they do not belong", `{"process":"A","op":"release","ttl":-1,"value":7,"call":1,"return":2,"ok":true}`, DefaultHeader(),
			[]Op{{Line: 1, Process: "A", Owner: "A", Kind: Release, Call: 1, Return: 2, Returned: true, OK: true}}},
		{"keys are case-sensitive", `{"process":"A","Process":"B","op":"read","OP":"write","call":1}`, DefaultHeader(),
			[]Op{{Line: 1, Process: "A", Owner: "A", Kind: Read, Call: 1}}},
		{"escapes", `{"process":"A\"\\\/\u00e9\ud83d\ude00","owner":"\t","key":"\ud800","op":"read","value":"x\u2028","call":-0}`, DefaultHeader(),
			[]Op{{Line: 1, Process: "A\"\\/é\U0001F600", Owner: "\t", Key: "\uFFFD", Kind: Read, Value: "x\u2028", HasValue: true}}},
		{"extreme times", `{"process":"A","op":"read","call":-4611686018427387903,"return":4611686018427387903,"ok":true,"at":4611686018427387903}`, DefaultHeader(),
			[]Op{{Line: 1, Process: "A", Owner: "A", Kind: Read, Call: -MaxTime, Return: MaxTime, Returned: true, OK: true, At: MaxTime, HasAt: true}}},
		{"at within uncertainty, huge u", `{"format":"leasecheck/history","version":1,"clock_uncertainty":4611686018427387903}` + "\n" +
			`{"process":"A","op":"read","call":-5,"return":5,"at":-4611686018427387903,"ok":true}`,
			Header{Version: 1, TimeUnit: "ms", ClockUncertainty: MaxTime},
			[]Op{{Line: 2, Process: "A", Owner: "A", Kind: Read, Call: -5, Return: 5, Returned: true, At: -MaxTime, HasAt: true, OK: true}}},
		{"fence-less", `{"format":"leasecheck/history","version":1,"fences":"none"}` + "\n" +
			`{"process":"A","op":"acquire","ttl":5,"call":1,"return":2,"ok":true}` + "\n" + `{"process":"A","op":"write","value":"v","call":3,"return":4,"ok":true}`,
			Header{Version: 1, TimeUnit: "ms", Fences: NoFences},
			[]Op{{Line: 2, Process: "A", Owner: "A", Kind: Acquire, TTL: 5, Call: 1, Return: 2, Returned: true, OK: true},
				{Line: 3, Process: "A", Owner: "A", Kind: Write, Value: "v", HasValue: true, Call: 3, Return: 4, Returned: true, OK: true}}},
		{"unreturned op does not constrain the next by its return", `{"process":"A","op":"write","fence":1,"value":"v","call":1}` + "\n" +
			`{"process":"A","op":"read","call":1,"return":2,"ok":true}`, DefaultHeader(),
			[]Op{{Line: 1, Process: "A", Owner: "A", Kind: Write, Fence: 1, Value: "v", HasValue: true, Call: 1},
				{Line: 2, Process: "A", Owner: "A", Kind: Read, Call: 1, Return: 2, Returned: true, OK: true}}},
		{"processes overlap each other freely; call may equal the previous return", `{"process":"A","op":"read","call":1,"return":5,"ok":true}` + "\n" +
			`{"process":"B","op":"read","call":0,"return":9,"ok":true}` + "\n" + `{"process":"A","op":"read","call":5,"return":5,"ok":true}`, DefaultHeader(),
			[]Op{{Line: 1, Process: "A", Owner: "A", Kind: Read, Call: 1, Return: 5, Returned: true, OK: true},
				{Line: 2, Process: "B", Owner: "B", Kind: Read, Call: 0, Return: 9, Returned: true, OK: true},
				{Line: 3, Process: "A", Owner: "A", Kind: Read, Call: 5, Return: 5, Returned: true, OK: true}}},
		{"whitespace everywhere", " \t{ \"process\" : \"A\" ,\r\"op\":\t\"read\" , \"call\" : 1 } \t\r", DefaultHeader(),
			[]Op{{Line: 1, Process: "A", Owner: "A", Kind: Read, Call: 1}}},
		{"last line without newline", "\n\n" + `{"process":"A","op":"read","call":1}`, DefaultHeader(), []Op{{Line: 3, Process: "A", Owner: "A", Kind: Read, Call: 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hdr, ops, err := readBoth(t, []byte(tc.input))
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if hdr != tc.hdr {
				t.Errorf("header %+v, want %+v", hdr, tc.hdr)
			}
			if !reflect.DeepEqual(ops, tc.ops) {
				t.Errorf("ops:\ngot  %+v\nwant %+v", ops, tc.ops)
			}
		})
	}
}

func TestBlankLinesCounted(t *testing.T) {
	input := "\n" + hdrLine + "\n\n  \n" + `{"process":"A","op":"read","call":1}` + "\n\t\n" + `{"process":"B","op":"read","call":1}` + "\n\n"
	_, ops, err := readBoth(t, []byte(input))
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 2 || ops[0].Line != 5 || ops[1].Line != 7 {
		t.Fatalf("got ops %+v, want lines 5 and 7", ops)
	}
}

// TestHeaderBeforeNext: the header is the default until Next reads it.
func TestHeaderBeforeNext(t *testing.T) {
	r := NewReader(strings.NewReader(`{"format":"leasecheck/history","version":1,"time_unit":"ns"}`+"\n"+`{"process":"A","op":"read","call":1}`), "x")
	if r.Header() != DefaultHeader() {
		t.Errorf("Header() before Next = %+v", r.Header())
	}
	if _, err := r.Next(); err != nil {
		t.Fatalf("Next = %v, want the op", err)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("Next = %v, want io.EOF", err)
	}
	if r.Header().TimeUnit != "ns" {
		t.Errorf("Header() after Next = %+v", r.Header())
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("Next after EOF = %v, want io.EOF", err)
	}
}

// TestFastPathTaken makes sure the fast decoder handles what the writer
// writes, so that the speed is not an accident of the fallback.
func TestFastPathTaken(t *testing.T) {
	out := writeHistory(t, &History{Header: DefaultHeader(), Ops: sampleOps()[:9]})
	for i, line := range bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n")) {
		var raw rawLine
		if !decodeFast(line, &raw) {
			t.Errorf("line %d: the fast decoder gave up on %s", i+1, line)
		}
	}
}

// TestFastSlowAgreeLineByLine forces the fallback on each line of many
// inputs, one at a time, and compares the result with the fast path's.
func TestFastSlowAgreeLineByLine(t *testing.T) {
	lines := []string{
		`{"process":"A","op":"read","call":1}`,
		`{"process":"A","op":"acquire","ttl":5,"fence":1,"call":1,"return":2,"at":2,"ok":true,"error":"x"}`,
		`{"process":"A","owner":"B","key":"k","op":"write","fence":2,"value":"v","call":3}`,
		`{}`, `{ }`, `{"a":1}`, `{"process":"A","op":"read","call":1,}`, `{"process":"A" "op":"read"}`, `{"process":"A",,"op":"read"}`,
		`{"process":"A","op":"read","call":-}`, `{"process":"A","op":"read","call":-01}`, `{"process":"A","op":"read","call":1.}`,
		`{"process":"A","op":"read","call":1e}`, `{"process":"A","op":"read","call":1E+2}`, `{"process":"A","op":"read","call":-0.0}`,
		`{"process":"A","op":"read","call":1,"return":2,"ok":false}`, `{"process":"A","op":"read","call":1,"return":2,"ok":fals}`,
		`{"process":"A","op":"read","call":1,"return":2,"ok":nul}`, `{"process":"A","op":"read","call":1,"return":2,"ok":nullx}`,
		`{"process":"A","op":"read","call":1,"return":2,"ok":truex}`, `{"process":"A","op":"read","call":1}}`, `{"process":"A","op":"read","call":1`,
		`{"process":"A","op":"read","call":1,"x":{"y":[1,{"z":"}"}]}}`, `{"process":"A","op":"read","call":1,"x":[}`,
		`{"process":"Ä","op":"read","call":1}`, "{\"process\":\"A\xc3\",\"op\":\"read\",\"call\":1}", "{\"process\xff\":\"A\",\"op\":\"read\",\"call\":1}",
		`{"pro\u0063ess":"A","op":"read","call":1}`, `{"process":"A","op":"read","call":1,"at":5}`,
		`{"format":"leasecheck/history","version":1}`, `{"format":"leasecheck/history","version":1.0}`,
		"{\"process\":\"A\",\"op\":\"read\",\"call\":1}\x00", `{"process":"A","op":"read","call":9223372036854775807}`,
		`{"process":"A","op":"read","call":99999999999999999999}`, `{"process":"A","op":"read","call":-9223372036854775808}`,
		`{"process":"A","op":"read","call":00}`, `{"process":"A","op":"read","call":+1}`, `{"process":"A","op":"read","call":1} `, `1`, `{"process":"A","op":"read","call":1}//`,
	}
	for _, l1 := range lines {
		for _, l2 := range lines[:3] {
			for _, input := range []string{l1, l2 + "\n" + l1, l1 + "\n" + l2, hdrLine + "\n" + l1 + "\n\n" + l2} {
				readBoth(t, []byte(input))
				// Force the fallback on one line at a time.
				n := strings.Count(input, "\n") + 1
				want := readMode([]byte(input), false, false)
				wantOps, wantErr := want.ops, want.err
				for k := 1; k <= n; k++ {
					_, ops, err := readForcingLine([]byte(input), k)
					if errString(err) != errString(wantErr) || !reflect.DeepEqual(ops, wantOps) {
						t.Errorf("input %q, fallback on line %d: got %v %+v, want %v %+v", input, k, err, ops, wantErr, wantOps)
					}
				}
			}
		}
	}
}

// readForcingLine reads data with the fallback decoder on line k only.
func readForcingLine(data []byte, k int) (Header, []Op, error) {
	r := NewReader(bytes.NewReader(data), "h.jsonl")
	var ops []Op
	for {
		r.dec.slow = r.line+1 == k
		op, err := r.Next()
		if err == io.EOF {
			return r.Header(), ops, nil
		}
		if err != nil {
			return r.Header(), ops, err
		}
		ops = append(ops, op)
	}
}

// TestLongLine: a line longer than the reader's buffer.
func TestLongLine(t *testing.T) {
	long := strings.Repeat("x", 200<<10)
	input := "\n" + `{"process":"A","op":"write","fence":1,"value":"` + long + `","call":1}` + "\n" +
		`{"process":"B","op":"read","pad":"` + long + `","call":1}` + "\n" + `{"process":"C","op":"read","call":1}`
	_, ops, err := readBoth(t, []byte(input))
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 3 || ops[0].Value != long || ops[0].Line != 2 || ops[1].Line != 3 || ops[2].Line != 4 {
		t.Fatalf("got %d ops, lines %v", len(ops), func() (l []int) {
			for _, op := range ops {
				l = append(l, op.Line)
			}
			return
		}())
	}
}

type errReader struct{ data []byte }

func (r *errReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, errors.New("disk on fire")
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestReadError(t *testing.T) {
	_, err := ReadHistory(&errReader{data: []byte(`{"process":"A","op":"read","call":1}` + "\n")}, "h")
	var pe *ParseError
	if err == nil || errors.As(err, &pe) || !strings.Contains(err.Error(), "disk on fire") || !strings.HasPrefix(err.Error(), "h:2: ") {
		t.Fatalf("got %v, want the read error, not a ParseError", err)
	}
}

func TestReadHistoryFile(t *testing.T) {
	h, err := ReadHistoryFile(filepath.Join("testdata", "valid.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if h.Name != filepath.Join("testdata", "valid.jsonl") || h.Header.ClockUncertainty != 1 || h.Header.TimeUnit != "ms" || len(h.Ops) != 8 {
		t.Fatalf("read %+v", h)
	}
	// Read-write-read is byte-identical, and the round trip keeps the ops.
	out := writeHistory(t, h)
	h2, err := ReadHistory(bytes.NewReader(out), "out")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(withoutLines(h2.Ops), withoutLines(h.Ops)) || h2.Header != h.Header {
		t.Fatalf("round trip changed the history")
	}
	if out2 := writeHistory(t, h2); !bytes.Equal(out, out2) {
		t.Fatalf("not byte-identical:\n%s\n%s", out, out2)
	}

	_, err = ReadHistoryFile(filepath.Join("testdata", "bad_overlap.jsonl"))
	want := filepath.Join("testdata", "bad_overlap.jsonl") + `:6: process "A": call 5 is before the return 7 of its previous operation (line 4); a process's operations must not overlap`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}

	if _, err := ReadHistoryFile(filepath.Join(t.TempDir(), "missing.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

// TestParallelMatchesSequential: ReadHistory's parallel chunks give exactly
// what the streaming reader gives, including which error comes first when
// several chunks hold one.
func TestParallelMatchesSequential(t *testing.T) {
	defer func(p, a, b int) {
		parallelMinProcs, parallelMinBytes, parallelChunkBytes = p, a, b
	}(parallelMinProcs, parallelMinBytes, parallelChunkBytes)
	parallelMinProcs, parallelMinBytes, parallelChunkBytes = 1, 1, 1

	good := writeHistory(t, genHistory(3000, 10, 20, 3))
	lines := strings.Split(strings.TrimSuffix(string(good), "\n"), "\n")
	with := func(edit func(l []string) []string) []byte {
		l := edit(append([]string(nil), lines...))
		return []byte(strings.Join(l, "\n") + "\n")
	}
	overlap := `{"process":"p1","op":"read","call":-1000,"return":-999,"ok":true}`
	for _, tc := range []struct {
		name string
		data []byte
		line int // of the first error; 0: none
	}{
		{"valid", good, 0},
		{"blank lines", with(func(l []string) []string {
			for i := 5; i < len(l); i += 97 {
				l[i] = "  \n" + l[i] + "\n"
			}
			return l
		}), 0},
		{"late bad line", with(func(l []string) []string { l[2900] = "{"; return l }), 2901},
		{"overlap before a bad line", with(func(l []string) []string { l[1500] = overlap; l[2900] = "{"; return l }), 1501},
		{"bad line before an overlap", with(func(l []string) []string { l[1500] = "[]"; l[2900] = overlap; return l }), 1501},
		{"header late", with(func(l []string) []string { l[2000] = hdrLine; return l }), 2001},
		{"bad header", with(func(l []string) []string { l[0] = `{"format":"leasecheck/history","version":3}`; return l }), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ops, err := readBoth(t, tc.data) // compares 1, 2, 3 and 7 chunks
			var pe *ParseError
			switch {
			case tc.line == 0 && err != nil:
				t.Fatal(err)
			case tc.line == 0 && len(ops) != 3000:
				t.Fatalf("%d ops", len(ops))
			case tc.line != 0 && (!errors.As(err, &pe) || pe.Line != tc.line):
				t.Fatalf("got %v, want an error at line %d", err, tc.line)
			}
			for _, chunks := range []int{4, 16, 100} {
				h, err2 := ReadOptions{}.readHistoryChunks(tc.data, "h.jsonl", chunks)
				if errString(err2) != errString(err) || (err == nil && !reflect.DeepEqual(h.Ops, ops)) {
					t.Fatalf("%d chunks: %v, want %v", chunks, err2, err)
				}
			}
			h, err2 := ReadHistory(bytes.NewReader(tc.data), "h.jsonl")
			if errString(err2) != errString(err) || (err == nil && !reflect.DeepEqual(h.Ops, ops)) {
				t.Fatalf("ReadHistory: %v, want %v", err2, err)
			}
		})
	}
}

// Validate refuses a history built in memory exactly as the reader refuses
// the same history written to a file: same line, same reason.
func TestValidateMatchesReader(t *testing.T) {
	mutations := []func(h *History, op *Op){
		func(h *History, op *Op) { op.Return, op.Returned = op.Call-1, true },
		func(h *History, op *Op) { op.Kind, op.TTL = Acquire, -1 },
		func(h *History, op *Op) { op.Kind, op.TTL = Renew, 0 },
		func(h *History, op *Op) { op.Fence = -2 },
		func(h *History, op *Op) { op.Kind, op.Fence, op.HasValue = Write, 0, true },
		func(h *History, op *Op) {
			op.Kind, op.Returned, op.Return, op.OK, op.Fence, op.TTL = Acquire, true, op.Call+1, true, 0, 5
		},
		func(h *History, op *Op) { op.At, op.HasAt = op.Call-h.Header.ClockUncertainty-1, true },
		func(h *History, op *Op) { op.Process = "" },
		func(h *History, op *Op) { // before its process's previous op
			for i := len(h.Ops) - 1; i >= 0; i-- {
				if prev := &h.Ops[i]; prev != op && prev.Process == op.Process && prev.Call <= op.Call {
					op.Call = prev.Call - 1
					op.Return = max(op.Return, op.Call)
					op.At = op.Call
					return
				}
			}
			op.Process = "" // a process of one op: break something else
		},
		func(h *History, op *Op) { h.Header.ClockUncertainty = -1 },
		func(h *History, op *Op) { h.Header.TimeUnit = "days" },
		func(h *History, op *Op) { h.Header.Fences = NoFences; op.Fence = 1 },
		func(h *History, op *Op) { op.Call = MaxTime + 1 },
		func(h *History, op *Op) { h.Header.Fences, h.Header.Semantics = NoFences, FencedStorage },
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range 400 {
		h := genHistory(30, 3, 2, uint64(i))
		if i%len(mutations) == 11 { // a fence-less history but for one op
			for j := range h.Ops {
				if op := &h.Ops[j]; op.Kind == Acquire || op.Kind == Write || op.Fence != 0 {
					op.Fence = 0
				}
			}
		}
		m := mutations[i%len(mutations)]
		m(h, &h.Ops[rng.IntN(len(h.Ops))])
		for j := range h.Ops {
			h.Ops[j].Line = j + 2
		}
		verr := Validate(h)
		var buf bytes.Buffer
		if err := WriteHistory(&buf, h); err != nil {
			t.Fatal(err)
		}
		_, rerr := ReadHistory(&buf, h.Name)
		if verr == nil || errString(verr) != errString(rerr) {
			t.Fatalf("mutation %d: Validate = %v, reading it back = %v", i%len(mutations), verr, rerr)
		}
		// Without lines, the op is named by its position instead.
		for j := range h.Ops {
			h.Ops[j].Line = 0
		}
		var pe *ParseError
		if err := Validate(h); !errors.As(err, &pe) || pe.Line != 0 || (pe.Reason != rerr.(*ParseError).Reason && !strings.Contains(pe.Reason, "History.Ops[") && !strings.HasPrefix(pe.Reason, "header")) {
			t.Fatalf("mutation %d without lines: %v (the reader: %v)", i%len(mutations), err, rerr)
		}
	}
	if err := Validate(genHistory(200, 4, 3, 1)); err != nil {
		t.Fatalf("a valid history: %v", err)
	}
}

// Unknown fields are warned about once per distinct name, at the first line
// they appear on, in line order; a known field on a line of another kind
// counts as unknown there. Strict refuses the first one.
func TestUnknownFieldWarnings(t *testing.T) {
	input := `{"format":"leasecheck/history","version":1,"ttl":5}` + "\n" +
		`{"process":"A","op":"read","call":1,"retrun":2,"ok":true}` + "\n" +
		`{"process":"A","op":"read","call":3,"retrun":4,"Call":3,"ok":true}` + "\n" +
		`{"fault":"pause","target":"A","start":1,"value":"x","note":"n"}` + "\n" +
		`{"process":"B","op":"read","call":1,"note":null}`
	r := readAll(t, []byte(input), false)
	if r.err != nil {
		t.Fatal(r.err)
	}
	var got []string
	for _, w := range r.warnings {
		got = append(got, w.String())
	}
	want := []string{
		`h.jsonl:1: unknown field "ttl" in the header, ignored`,
		`h.jsonl:2: unknown field "retrun" in an operation, ignored`,
		`h.jsonl:3: unknown field "Call" in an operation, ignored`,
		`h.jsonl:4: unknown field "value" in a fault record, ignored`,
		`h.jsonl:4: unknown field "note" in a fault record, ignored`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("warnings:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	s := readAll(t, []byte(input), true)
	if errString(s.err) != `h.jsonl:1: unknown field "ttl" in the header (--strict refuses unknown fields)` {
		t.Errorf("strict: %v", s.err)
	}
	// Many distinct unknown fields: the warnings stop, saying so.
	var b strings.Builder
	for i := range 2 * maxWarnedFields {
		fmt.Fprintf(&b, `{"process":"A","op":"read","call":%d,"x%d":1}`+"\n", i, i)
	}
	r = readAll(t, []byte(b.String()), false)
	if n := len(r.warnings); n != maxWarnedFields+1 || r.warnings[n-1].Message != "more unknown fields, not listed" {
		t.Errorf("%d warnings, last %v; want %d, the last saying more are not listed", n, r.warnings[n-1], maxWarnedFields+1)
	}
}

// Fault records read and write back, byte for byte; they may appear
// anywhere after the header, and WriteHistory puts them before the ops.
func TestFaultRecords(t *testing.T) {
	input := hdrLine + "\n" +
		`{"process":"A","op":"acquire","ttl":5,"fence":1,"call":0,"return":1,"ok":true}` + "\n" +
		`{"fault":"pause","target":"A","start":120,"end":380,"detail":"A paused \"between\" check and write"}` + "\n" +
		`{"fault":"clock-step","target":"coordinator","start":200,"amount":-50,"partial":true}` + "\n" +
		`{"fault":"partition","target":"B","peer":"coordinator","start":10,"end":10,"amount":0,"peer2":1}` + "\n"
	r := readAll(t, []byte(input), false)
	if r.err != nil {
		t.Fatal(r.err)
	}
	want := []FaultRecord{
		{Line: 3, Kind: "pause", Target: "A", Start: 120, End: 380, HasEnd: true, Detail: `A paused "between" check and write`},
		{Line: 4, Kind: "clock-step", Target: "coordinator", Start: 200, Amount: -50, Partial: true},
		{Line: 5, Kind: "partition", Target: "B", Peer: "coordinator", Start: 10, End: 10, HasEnd: true},
	}
	if !reflect.DeepEqual(r.faults, want) {
		t.Fatalf("faults:\n%+v\nwant\n%+v", r.faults, want)
	}
	h := &History{Name: "h.jsonl", Header: r.hdr, Ops: r.ops, Faults: r.faults}
	out := string(writeHistory(t, h))
	wantOut := hdrLine + "\n" +
		`{"fault":"pause","target":"A","start":120,"end":380,"detail":"A paused \"between\" check and write"}` + "\n" +
		`{"fault":"clock-step","target":"coordinator","start":200,"amount":-50,"partial":true}` + "\n" +
		`{"fault":"partition","target":"B","start":10,"end":10,"peer":"coordinator"}` + "\n" +
		`{"process":"A","op":"acquire","ttl":5,"fence":1,"call":0,"return":1,"ok":true}` + "\n"
	if out != wantOut {
		t.Errorf("written:\n%s\nwant\n%s", out, wantOut)
	}
	if err := Validate(h); err != nil {
		t.Errorf("Validate: %v", err)
	}
	h.Faults[1].HasEnd, h.Faults[1].End = true, 100
	if err := Validate(h); errString(err) != `h.jsonl:4: field "end": 100 is before start 200` {
		t.Errorf("Validate of a fault ending before it starts: %v", err)
	}
}
