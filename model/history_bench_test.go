package model

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// genHistory makes a valid history of n ops in exact mode (every op carries
// at): procs processes, keys keys, a mix of all five kinds, a few ops that
// never returned.
func genHistory(n, procs, keys int, seed uint64) *History {
	rng := rand.New(rand.NewPCG(seed, 0))
	h := &History{Name: "gen", Header: Header{Version: 1, TimeUnit: "ms", ClockUncertainty: 0, Semantics: Seed}}
	h.Ops = make([]Op, 0, n)
	free := make([]int64, procs) // when each process may call next
	var now int64
	fence := int64(0)
	for len(h.Ops) < n {
		now += int64(rng.IntN(3))
		p := rng.IntN(procs)
		call := max(now, free[p])
		op := Op{
			Process: fmt.Sprintf("p%d", p),
			Key:     fmt.Sprintf("key-%d", rng.IntN(keys)),
			Call:    call,
		}
		op.Owner = op.Process
		if rng.IntN(8) == 0 {
			op.Owner = fmt.Sprintf("owner-%d", p)
		}
		switch r := rng.IntN(10); {
		case r < 2:
			op.Kind, op.TTL = Acquire, 30
		case r < 4:
			op.Kind, op.TTL = Renew, 30
		case r < 5:
			op.Kind = Release
		case r < 8:
			op.Kind, op.Value, op.HasValue = Write, fmt.Sprintf("v%d", rng.IntN(1000)), true
		default:
			op.Kind = Read
			if rng.IntN(4) != 0 {
				op.Value, op.HasValue = fmt.Sprintf("v%d", rng.IntN(1000)), true
			}
		}
		if rng.IntN(50) == 0 {
			// Never returned; the process goes on after its call.
			op.At, op.HasAt = call+int64(rng.IntN(5)), true
			free[p] = call
		} else {
			op.Return, op.Returned = call+1+int64(rng.IntN(6)), true
			op.At, op.HasAt = call+int64(rng.IntN(int(op.Return-call)+1)), true
			op.OK = rng.IntN(4) != 0
			if !op.OK {
				op.Error = []string{"held", "expired", "stale-fence", "not-holder"}[rng.IntN(4)]
			}
			free[p] = op.Return
		}
		if op.Kind == Acquire && op.OK {
			fence++
			op.Fence = fence
		}
		if op.Kind == Write || (op.Kind != Acquire && rng.IntN(2) == 0) {
			op.Fence = 1 + int64(rng.IntN(int(fence)+1))
		}
		h.Ops = append(h.Ops, op)
	}
	return h
}

var bench100k []byte

func bench100kData(b *testing.B) []byte {
	if bench100k == nil {
		bench100k = writeHistory(b, genHistory(100_000, 10, 100, 1))
	}
	return bench100k
}

func BenchmarkReadHistory100k(b *testing.B) {
	data := bench100kData(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		h, err := ReadHistory(bytes.NewReader(data), "bench")
		if err != nil {
			b.Fatal(err)
		}
		if len(h.Ops) != 100_000 {
			b.Fatalf("%d ops", len(h.Ops))
		}
	}
}

// BenchmarkReadHistory100kOneChunk: ReadHistory without parallel chunks.
func BenchmarkReadHistory100kOneChunk(b *testing.B) {
	data := bench100kData(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		h, err := ReadOptions{}.readHistoryChunks(data, "bench", 1)
		if err != nil {
			b.Fatal(err)
		}
		if len(h.Ops) != 100_000 {
			b.Fatalf("%d ops", len(h.Ops))
		}
	}
}

// BenchmarkReadHistory100kChunks: parallel chunks, one per GOMAXPROCS,
// whatever parallelMinProcs says.
func BenchmarkReadHistory100kChunks(b *testing.B) {
	data := bench100kData(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		h, err := ReadOptions{}.readHistoryChunks(data, "bench", runtime.GOMAXPROCS(0))
		if err != nil {
			b.Fatal(err)
		}
		if len(h.Ops) != 100_000 {
			b.Fatalf("%d ops", len(h.Ops))
		}
	}
}

// BenchmarkReadHistory100kStreaming: the Reader alone, no slice of ops.
func BenchmarkReadHistory100kStreaming(b *testing.B) {
	data := bench100kData(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r := NewReader(bytes.NewReader(data), "bench")
		var op Op
		n := 0
		for {
			op = Op{}
			if err := r.next(&op); err != nil {
				break
			}
			n++
		}
		if n != 100_000 {
			b.Fatalf("%d ops", n)
		}
	}
}

// naiveOp is the baseline's line type: encoding/json into pointer fields.
type naiveOp struct {
	Format   *string `json:"format"`
	Version  *int    `json:"version"`
	Process  *string `json:"process"`
	Owner    *string `json:"owner"`
	Key      *string `json:"key"`
	Op       *string `json:"op"`
	TTL      *int64  `json:"ttl"`
	Fence    *int64  `json:"fence"`
	Value    *string `json:"value"`
	Call     *int64  `json:"call"`
	Return   *int64  `json:"return"`
	At       *int64  `json:"at"`
	OK       *bool   `json:"ok"`
	ErrorMsg *string `json:"error"`
}

// BenchmarkReadHistory100kEncodingJSON is the naive baseline: a Scanner and
// json.Unmarshal per line into a struct with pointer fields, converted to
// Ops, with no validation at all.
func BenchmarkReadHistory100kEncodingJSON(b *testing.B) {
	data := bench100kData(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		sc := bufio.NewScanner(bytes.NewReader(data))
		var ops []Op
		line := 0
		for sc.Scan() {
			line++
			if len(bytes.TrimSpace(sc.Bytes())) == 0 {
				continue
			}
			var n naiveOp
			if err := json.Unmarshal(sc.Bytes(), &n); err != nil {
				b.Fatal(err)
			}
			if n.Format != nil {
				continue
			}
			op := Op{Line: line, Process: *n.Process, Owner: *n.Process, Call: *n.Call}
			op.Kind, _ = ParseKind(*n.Op)
			if n.Owner != nil {
				op.Owner = *n.Owner
			}
			if n.Key != nil {
				op.Key = *n.Key
			}
			if n.TTL != nil {
				op.TTL = *n.TTL
			}
			if n.Fence != nil {
				op.Fence = *n.Fence
			}
			if n.Value != nil {
				op.Value, op.HasValue = *n.Value, true
			}
			if n.Return != nil {
				op.Return, op.Returned = *n.Return, true
			}
			if n.At != nil {
				op.At, op.HasAt = *n.At, true
			}
			if n.OK != nil && op.Returned {
				op.OK = *n.OK
			}
			if n.ErrorMsg != nil {
				op.Error = *n.ErrorMsg
			}
			ops = append(ops, op)
		}
		if len(ops) != 100_000 {
			b.Fatalf("%d ops", len(ops))
		}
	}
}

func BenchmarkWriteHistory100k(b *testing.B) {
	h := genHistory(100_000, 10, 100, 1)
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := WriteHistory(&buf, h); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(buf.Len()))
}

// TestGeneratedHistory: the benchmark's history is valid and round-trips.
func TestGeneratedHistory(t *testing.T) {
	h := genHistory(5000, 10, 100, 7)
	out := writeHistory(t, h)
	hdr, ops, err := readBoth(t, out)
	if err != nil {
		t.Fatal(err)
	}
	if hdr != h.Header || !equalOps(withoutLines(ops), h.Ops) {
		t.Fatal("generated history does not round-trip")
	}
}

func equalOps(a, b []Op) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
