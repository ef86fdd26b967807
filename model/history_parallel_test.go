package model

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// The Reader that decodes ahead (history_parallel.go) against the
// sequential one: whatever the block size, however the input's reads are
// cut, and when one Reader is stopped early and another reads the same file
// again, it reads exactly what the sequential Reader reads.

// piecesReader hands out its data in pieces that end at the given offsets
// (then in one piece), so that the bufio.Reader under a Reader fills at
// those bytes: inside a string, between a ':' and its value, at a line end.
type piecesReader struct {
	data []byte
	cuts []int // increasing offsets into data
	off  int
}

func (p *piecesReader) Read(b []byte) (int, error) {
	if p.off >= len(p.data) {
		return 0, io.EOF
	}
	end := len(p.data)
	for len(p.cuts) > 0 && p.cuts[0] <= p.off {
		p.cuts = p.cuts[1:]
	}
	if len(p.cuts) > 0 {
		end = p.cuts[0]
	}
	n := copy(b, p.data[p.off:end])
	p.off += n
	return n, nil
}

// fataler is what the helpers need of a *testing.T or a *rapid.T.
type fataler interface {
	Helper()
	Fatal(args ...any)
}

// readAhead reads everything from r with a Reader decoding ahead on
// workers goroutines, in blocks of block bytes.
func readAhead(t fataler, r io.Reader, block, workers int) readResult {
	t.Helper()
	saved := parallelBlock
	parallelBlock = block
	defer func() { parallelBlock = saved }()
	var res readResult
	rd := ReadOptions{Workers: workers, Warn: func(w Warning) { res.warnings = append(res.warnings, w) }}.NewReader(r, "h.jsonl")
	defer rd.Close()
	for {
		op, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			res.err = err
			break
		}
		res.ops = append(res.ops, op)
	}
	res.hdr, res.faults = rd.Header(), rd.Faults()
	return res
}

func sameRead(a, b readResult) string {
	switch {
	case errString(a.err) != errString(b.err):
		return fmt.Sprintf("error %v, want %v", a.err, b.err)
	case a.hdr != b.hdr:
		return fmt.Sprintf("header %+v, want %+v", a.hdr, b.hdr)
	case len(a.ops) != len(b.ops):
		return fmt.Sprintf("%d ops, want %d", len(a.ops), len(b.ops))
	case !reflect.DeepEqual(a.faults, b.faults):
		return fmt.Sprintf("faults %+v, want %+v", a.faults, b.faults)
	case !reflect.DeepEqual(a.warnings, b.warnings):
		return fmt.Sprintf("warnings %+v, want %+v", a.warnings, b.warnings)
	}
	for i := range a.ops {
		if !reflect.DeepEqual(a.ops[i], b.ops[i]) {
			return fmt.Sprintf("op %d is %+v, want %+v", i, a.ops[i], b.ops[i])
		}
	}
	return ""
}

// encodeGen is genHistory's history as the file a recorder writes, with a
// fault record and a blank line now and then, and a field the format does
// not know, so that every kind of line meets every kind of cut.
func encodeGen(t fataler, n, procs, keys int, seed uint64) []byte {
	t.Helper()
	h := genHistory(n, procs, keys, seed)
	var buf bytes.Buffer
	w := NewWriter(&buf, h.Header)
	for i := range h.Ops {
		if err := w.Write(&h.Ops[i]); err != nil {
			t.Fatal(err)
		}
		if i%97 == 5 {
			if err := w.WriteFault(&FaultRecord{Kind: "pause", Target: h.Ops[i].Process, Start: h.Ops[i].Call, End: h.Ops[i].Call + 3, HasEnd: true}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	// Blank lines and an unknown field (a warning, handed on in line
	// order) after the head, where the reader decodes ahead.
	data = bytes.Replace(data, []byte("\n{\"process\":\"p1\""), []byte("\n\n{\"process\":\"p1\""), 3)
	data = bytes.Replace(data, []byte(`"call":`), []byte(`"note":"x:\"y\",z","call":`), 2)
	return data
}

// TestReaderBlocksCutEverywhere decodes ahead in blocks of every size from
// one byte to past the longest line, so that the first block's cut falls on
// every byte of a line (inside a string, between a ':' and its value, at
// the line's end), over an input whose reads end at random bytes, the
// header's included; every read equals the sequential one. Run it with
// -race: the blocks cross goroutines.
func TestReaderBlocksCutEverywhere(t *testing.T) {
	data := encodeGen(t, 1500, 5, 3, 42)
	want := readMode(data, false, false)
	if want.err != nil || len(want.ops) != 1500 || len(want.warnings) == 0 || len(want.faults) == 0 {
		t.Fatalf("the generated history reads as %d ops, %d faults, %d warnings, error %v", len(want.ops), len(want.faults), len(want.warnings), want.err)
	}
	longest := 0
	for line := range strings.SplitSeq(string(data), "\n") {
		longest = max(longest, len(line))
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for block := 1; block <= longest+2; block++ {
		var cuts []int
		for off := rng.IntN(200); off < len(data); off += 1 + rng.IntN(5000) {
			cuts = append(cuts, off)
		}
		got := readAhead(t, &piecesReader{data: data, cuts: cuts}, block, 1+block%4)
		if d := sameRead(got, want); d != "" {
			t.Fatalf("block %d: %s", block, d)
		}
	}
}

// TestReaderSameFiftyTimes reads one large history 50 times, decoding
// ahead, and gets the same every time.
func TestReaderSameFiftyTimes(t *testing.T) {
	n := 8000
	if testing.Short() {
		n = 2000
	}
	data := encodeGen(t, n, 7, 1, 3)
	want := readMode(data, false, false)
	for i := range 50 {
		got := readAhead(t, bytes.NewReader(data), 1<<10+i*37, 4)
		if d := sameRead(got, want); d != "" {
			t.Fatalf("read %d: %s", i, d)
		}
	}
}

// TestReaderCloseThenReadAgain is what the checker does with a file too
// large to hold: a Reader decoding ahead is stopped part-way (its pass gave
// up), the file is seeked back to its start, and a second Reader reads it
// whole. The first must have stopped reading when Close returned: reading
// on, it took blocks from the file's one offset that the second then missed,
// which the second reported as lines cut at any byte ("line 1: invalid
// JSON") or, worse, decoded as other values.
func TestReaderCloseThenReadAgain(t *testing.T) {
	data := encodeGen(t, 4000, 7, 1, 11)
	want := readMode(data, false, false)
	path := filepath.Join(t.TempDir(), "h.jsonl")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	saved := parallelBlock
	defer func() { parallelBlock = saved }()
	rounds := 200
	if testing.Short() {
		rounds = 60
	}
	for i := range rounds {
		parallelBlock = 1<<9 + i*37
		first := ReadOptions{Workers: 3}.NewReader(f, "h.jsonl")
		for range i * 13 % 3000 {
			if _, err := first.Next(); err != nil {
				t.Fatalf("round %d: the first pass: %v", i, err)
			}
		}
		first.Close()
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		got := readAhead(t, f, parallelBlock, 3)
		if d := sameRead(got, want); d != "" {
			t.Fatalf("round %d (the first pass stopped after %d ops): the second pass: %s", i, i*13%3000, d)
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPropertyReaderSplitAnywhere: any valid history, its reads cut at any
// bytes, decoded ahead in blocks of any size on any number of workers,
// reads as the sequential Reader reads it whole; so does ReadHistory in any
// number of chunks.
func TestPropertyReaderSplitAnywhere(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 300).Draw(rt, "ops")
		data := encodeGen(rt, n, rapid.IntRange(1, 6).Draw(rt, "procs"), rapid.IntRange(1, 4).Draw(rt, "keys"), rapid.Uint64().Draw(rt, "seed"))
		if rapid.Bool().Draw(rt, "bom") {
			data = append(append([]byte{}, utf8BOM...), data...)
		}
		want := readMode(data, false, false)
		if want.err != nil {
			rt.Fatalf("a generated history does not read: %v", want.err)
		}
		cuts := rapid.SliceOfDistinct(rapid.IntRange(1, len(data)), rapid.ID[int]).Draw(rt, "cuts")
		cuts = append([]int{}, cuts...)
		slices.Sort(cuts)
		block := rapid.IntRange(1, len(data)+1).Draw(rt, "block")
		workers := rapid.IntRange(2, 5).Draw(rt, "workers")
		if d := sameRead(readAhead(rt, &piecesReader{data: data, cuts: cuts}, block, workers), want); d != "" {
			rt.Fatalf("decoding ahead: %s", d)
		}
		chunks := rapid.IntRange(1, 9).Draw(rt, "chunks")
		h, err := ReadOptions{}.readHistoryChunks(data, "h.jsonl", chunks)
		if err != nil {
			rt.Fatalf("readHistoryChunks(%d): %v", chunks, err)
		}
		if d := sameRead(readResult{hdr: h.Header, ops: h.Ops, faults: h.Faults, warnings: want.warnings}, want); d != "" {
			rt.Fatalf("readHistoryChunks(%d): %s", chunks, d)
		}
	})
}

// FuzzReaderBlocks: any input, its reads cut at a drawn stride and decoded
// ahead in small blocks, reads as the sequential Reader reads it — the same
// ops, faults and warnings, and for bad input the same error at the same
// line.
func FuzzReaderBlocks(f *testing.F) {
	f.Add([]byte(hdrLine+"\n"+`{"process":"A","op":"acquire","ttl":5,"fence":1,"call":0,"return":1,"at":1,"ok":true}`+"\n"), uint8(1), uint8(3))
	if data, err := os.ReadFile(filepath.Join("testdata", "valid.jsonl")); err == nil {
		f.Add(data, uint8(5), uint8(7))
		f.Add(data, uint8(64), uint8(1))
	}
	f.Fuzz(func(t *testing.T, data []byte, block, stride uint8) {
		want := readMode(data, false, false)
		var cuts []int
		for off := int(stride) + 1; off < len(data); off += int(stride) + 1 {
			cuts = append(cuts, off)
		}
		got := readAhead(t, &piecesReader{data: data, cuts: cuts}, int(block)+1, 3)
		if d := sameRead(got, want); d != "" {
			t.Fatalf("block %d, stride %d: %s\ninput: %q", int(block)+1, int(stride)+1, d, data)
		}
	})
}
