package model

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzReadHistory: no input makes the reader panic; the fast decoder, the
// encoding/json fallback, ReadHistory and its parallel chunks agree on
// every input (same ops, faults and warnings, or the same error), strict
// or not, and Strict refuses exactly the first line a warning names; a
// *ParseError names a line of the input; whatever reads OK passes Validate
// and round-trips through the writer to an equal history, byte-identical
// from the second write on. Besides the inputs added here, its seed
// corpus in testdata/fuzz/FuzzReadHistory/ holds real histories of
// checker/testdata (fault records, keys, fenced storage, lost answers).
func FuzzReadHistory(f *testing.F) {
	for _, s := range []string{
		"",
		"\n\n",
		hdrLine,
		hdrLine + "\n" + `{"process":"A","op":"acquire","ttl":5,"fence":1,"call":0,"return":1,"at":1,"ok":true}`,
		`{"process":"A","key":"k","op":"write","fence":1,"value":"v","call":1,"return":2,"at":2,"ok":true,"error":"e"}` + "\n" +
			`{"process":"B","owner":"b","key":"k","op":"read","value":"v","call":1,"return":3,"ok":true}` + "\n" +
			`{"process":"A","key":"k","op":"renew","ttl":5,"call":2}` + "\n" +
			`{"process":"A","key":"k","op":"release","fence":1,"call":3,"return":3,"ok":false}`,
		`{"format":"leasecheck/history","version":1,"time_unit":"ns","clock_uncertainty":3,"semantics":"fenced-storage"}` + "\r\n\r\n" +
			`{"process":"A","op":"read","call":10,"return":20,"at":7,"ok":true}`,
		`{"format":"leasecheck/history","version":2}`,
		`{"process":"A","op":"read","call":1}` + "\n" + hdrLine,
		`{"process":"A","op":"read","call":5,"return":7,"ok":true}` + "\n" + `{"process":"A","op":"read","call":6}`,
		`{"process":"A","op":"read","call":5}` + "\n" + `{"process":"A","op":"read","call":4}`,
		`{"process":"A","op":"acquire","ttl":-3,"call":1}`,
		`{"process":"A","op":"acquire","ttl":1.5,"call":1}`,
		`{"process":"A","op":"acquire","ttl":"5","call":1}`,
		`{"process":"A","op":"steal","call":1}`,
		`{"process":"A","op":"read","call":99999999999999999999}`,
		`{"process":"A","op":"read","call":-9223372036854775808,"return":9223372036854775807,"ok":true,"at":0}`,
		`{"process":"A\u0000\"\\\ud800","op":"read","value":"\u2028","call":1,"x":{"y":[1,{"z":null}]}}`,
		"{\"process\":\"\xff\",\"op\":\"read\",\"call\":1}",
		"\xef\xbb\xbf" + `{"process":"A","op":"read","call":1}`,
		`{"process":"A","op":"read","call":1`,
		`[{"process":"A"}]`,
		`null`,
		`{"process":"A","op":"read","call":1,"call":null}`,
		`{"process":"A","op":"write","fence":1,"value":"v","call":1,"return":0,"ok":true}`,
		hdrLine + "\n" + `{"fault":"pause","target":"A","start":1,"end":9,"detail":"d"}` + "\n" + `{"process":"A","op":"read","call":1}`,
		`{"fault":"clock-step","target":"coordinator","start":-4,"amount":7,"peer":"x","partial":true,"extra":[1]}` + "\n" + `{"process":"A","op":"read","call":1,"retrun":2}`,
		`{"format":"leasecheck/history","version":1,"fences":"none"}` + "\n" + `{"process":"A","op":"acquire","ttl":2,"call":1,"return":2,"ok":true}`,
		`{"process":"A","op":"read","call":1,"call":2}`,
		`{"process":"A","op":"read","call":4611686018427387904}`,
	} {
		f.Add([]byte(s))
	}
	for _, name := range []string{"valid.jsonl", "bad_overlap.jsonl"} {
		if data, err := os.ReadFile(filepath.Join("testdata", name)); err == nil {
			f.Add(data)
		}
	}
	f.Add(writeHistory(f, genHistory(50, 3, 2, 1)))

	f.Fuzz(func(t *testing.T, data []byte) {
		readAll(t, data, true)
		r := readAll(t, data, false)
		hdr, ops, faults, err := r.hdr, r.ops, r.faults, r.err
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("reading from memory failed with a non-ParseError: %v", err)
			}
			if lines := bytes.Count(data, []byte{'\n'}) + 1; pe.Line < 1 || pe.Line > lines || pe.Reason == "" {
				t.Fatalf("error %q names line %d of %d", err, pe.Line, lines)
			}
			return
		}
		for i := 1; i < len(ops); i++ {
			if ops[i].Line <= ops[i-1].Line {
				t.Fatalf("op lines out of order: %d then %d", ops[i-1].Line, ops[i].Line)
			}
		}
		if err := Validate(&History{Name: "h.jsonl", Header: hdr, Ops: ops, Faults: faults}); err != nil {
			t.Fatalf("read OK, yet Validate says %v\ninput: %q", err, data)
		}
		out := writeHistory(t, &History{Name: "h.jsonl", Header: hdr, Ops: ops, Faults: faults})
		r2 := readAll(t, out, true)
		hdr2, ops2, faults2, err := r2.hdr, r2.ops, r2.faults, r2.err
		if err != nil {
			t.Fatalf("the writer's output does not read back strictly: %v\ninput: %q\noutput: %s", err, data, out)
		}
		if hdr2 != hdr || !reflect.DeepEqual(withoutLines(ops2), withoutLines(ops)) || !reflect.DeepEqual(faultsWithoutLines(faults2), faultsWithoutLines(faults)) {
			t.Fatalf("round trip changed the history\ninput: %q\noutput: %s\nbefore: %+v %+v\nafter:  %+v %+v", data, out, hdr, ops, hdr2, ops2)
		}
		if out2 := writeHistory(t, &History{Name: "h.jsonl", Header: hdr2, Ops: ops2, Faults: faults2}); !bytes.Equal(out, out2) {
			t.Fatalf("read-write is not byte-identical:\n%s\n%s", out, out2)
		}
	})
}

func faultsWithoutLines(fs []FaultRecord) []FaultRecord {
	out := make([]FaultRecord, len(fs))
	for i, f := range fs {
		f.Line = 0
		out[i] = f
	}
	return out
}
