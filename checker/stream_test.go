package checker

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/internal/timefmt"
	"github.com/leasecheck/leasecheck/model"
	"pgregory.net/rapid"
)

// streamed checks h written to a file, streaming it.
func streamed(t fataler, dir string, h *model.History, opts Options) *Result {
	var buf bytes.Buffer
	if err := model.WriteHistory(&buf, h); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "h.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	opts.StreamAbove = -1
	r, _, err := CheckFile(context.Background(), path, opts)
	if err != nil {
		t.Fatalf("CheckFile: %v", err)
	}
	return r
}

// verdicts lists a result's verdicts.
func verdicts(r *Result) []string {
	var out []string
	for _, p := range r.Properties {
		out = append(out, p.Name+"="+p.Verdict.String())
	}
	return out
}

// invariantViolations lists the invariants' violations, word for word.
func invariantViolations(r *Result) []string {
	var out []string
	for _, v := range r.Violations {
		if v.Property != Linearizable {
			out = append(out, fmt.Sprintf("%s %v: %s", v.Property, v.Lines, v.Explanation))
		}
	}
	return out
}

// Streaming a file judges it as reading it into memory does: the same
// verdicts (linearizability may be Unknown when only the in-memory search
// could decide it, never the opposite verdict), and the same invariant
// violations word for word.
func TestPropertyStreamingAgreesWithMemory(t *testing.T) {
	dir := t.TempDir()
	for _, m := range genModes {
		t.Run(m.name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				h := genHistory(t, m.o)
				if rapid.Bool().Draw(t, "corrupt") {
					op := &h.Ops[rapid.IntRange(0, len(h.Ops)-1).Draw(t, "op to corrupt")]
					if op.Returned && op.Kind != model.Acquire {
						op.OK = !op.OK
					}
				}
				mem := check(h)
				str := streamed(t, dir, h, Options{Timeout: -1})
				for i, p := range mem.Properties {
					got := str.Properties[i].Verdict
					if got != p.Verdict && !(p.Name == Linearizable && got == Unknown) {
						t.Fatalf("%s: in memory %s, streamed %s (%s)\n%s", p.Name, p.Verdict, got, str.Reason, describeHistory(h))
					}
				}
				if a, b := invariantViolations(mem), invariantViolations(str); !reflect.DeepEqual(a, b) {
					t.Fatalf("invariant violations differ:\nmemory   %v\nstreamed %v\n%s", a, b, describeHistory(h))
				}
			})
		})
	}
}

// A file whose lines are out of time order (each process's own in order,
// as the format requires) streams to the same verdicts: the first pass
// measures how far out of order, and the second waits that long.
func TestPropertyStreamingOutOfOrderFile(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(t *rapid.T) {
		h := genHistory(t, genOptions{exact: true, unknown: true, uncertainty: 1, keys: 2, maxOps: 30})
		want := verdicts(check(h))
		// Interleave the processes' lines in a random order.
		byProc := map[string][]model.Op{}
		var procs []string
		for _, op := range h.Ops {
			if _, ok := byProc[op.Process]; !ok {
				procs = append(procs, op.Process)
			}
			byProc[op.Process] = append(byProc[op.Process], op)
		}
		var ops []model.Op
		for len(ops) < len(h.Ops) {
			p := procs[rapid.IntRange(0, len(procs)-1).Draw(t, "next process")]
			if len(byProc[p]) > 0 {
				ops = append(ops, byProc[p][0])
				byProc[p] = byProc[p][1:]
			}
		}
		for i := range ops {
			ops[i].Line = i + 2
		}
		h2 := &model.History{Name: h.Name, Header: h.Header, Ops: ops}
		if got := verdicts(streamed(t, dir, h2, Options{Timeout: -1})); !reflect.DeepEqual(got, want) {
			if got2 := verdicts(check(h2)); !reflect.DeepEqual(got, got2) {
				t.Fatalf("out of order: streamed %v, in memory %v\n%s", got, got2, describeHistory(h2))
			}
		}
	})
}

// Every golden history streams to the verdicts its golden file shows.
func TestGoldensStream(t *testing.T) {
	files, err := filepath.Glob("testdata/histories/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatal("no golden histories", err)
	}
	for _, f := range files {
		h, err := model.ReadHistoryFile(f)
		if err != nil {
			t.Fatal(err)
		}
		mem := mustCheck(t, h, Options{})
		r, _, err := CheckFile(context.Background(), f, Options{StreamAbove: -1})
		if err != nil {
			t.Fatal(err)
		}
		if a, b := verdicts(mem), verdicts(r); !reflect.DeepEqual(a, b) {
			t.Errorf("%s: in memory %v, streamed %v (%s)", f, a, b, r.Reason)
		}
		if a, b := invariantViolations(mem), invariantViolations(r); !reflect.DeepEqual(a, b) {
			t.Errorf("%s: invariant violations differ:\n%v\n%v", f, a, b)
		}
	}
}

// A timeout stops the streaming check in whatever phase it is, with an
// honest Unknown.
func TestStreamingTimeout(t *testing.T) {
	dir := t.TempDir()
	h := workload{ops: 200_000, keys: 3, holders: 3, seed: 9}.history()
	start := time.Now()
	r := streamed(t, dir, h, Options{Timeout: time.Millisecond})
	t.Logf("a 1ms budget returned after %v: %s", time.Since(start), r.Reason)
	if r.OK() || r.Reason == "" || !strings.Contains(r.Reason, "time budget") {
		t.Fatalf("1ms budget: verdicts %v, reason %q; want unknown with the reason", verdicts(r), r.Reason)
	}
}

// Fault records never change a verdict, in memory or streamed; a story
// names those that overlap the ops it cites, and at most a few.
func TestPropertyFaultsChangeNoVerdict(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(t *rapid.T) {
		h := genHistory(t, genOptions{exact: true, unknown: true, uncertainty: 1, keys: 2})
		if rapid.Bool().Draw(t, "corrupt") {
			op := &h.Ops[rapid.IntRange(0, len(h.Ops)-1).Draw(t, "op to corrupt")]
			if op.Returned && op.Kind != model.Acquire {
				op.OK = !op.OK
			}
		}
		before := check(h)
		kinds := []string{"pause", "clock-step", "partition", "a-kind-nobody-knows"}
		for range rapid.IntRange(1, 9).Draw(t, "faults") {
			start := rapid.Int64Range(-5, 60).Draw(t, "start")
			f := model.FaultRecord{Kind: rapid.SampledFrom(kinds).Draw(t, "kind"), Target: "p0", Start: start}
			if rapid.Bool().Draw(t, "ends") {
				f.End, f.HasEnd = start+rapid.Int64Range(0, 20).Draw(t, "length"), true
			}
			h.Faults = append(h.Faults, f)
		}
		after := check(h)
		str := streamed(t, dir, h, Options{Timeout: -1})
		if !reflect.DeepEqual(verdicts(before), verdicts(after)) || !reflect.DeepEqual(verdicts(after), verdicts(str)) && !strings.Contains(str.Reason, "key") {
			t.Fatalf("faults changed the verdicts: %v, then %v, streamed %v", verdicts(before), verdicts(after), verdicts(str))
		}
		for i, v := range after.Violations {
			if !strings.HasPrefix(v.Explanation, before.Violations[i].Explanation) {
				t.Fatalf("the story changed, not only by a fault's mention:\n%s\n%s", before.Violations[i].Explanation, v.Explanation)
			}
			if n := strings.Count(v.Explanation, ") ["); n > maxFaultsNamed+1 {
				t.Fatalf("a story names %d faults", n)
			}
		}
	})
}

func TestFaultsNamedInStories(t *testing.T) {
	f := found{Violation: Violation{Explanation: "something happened"}, from: 10, to: 20}
	faults := []model.FaultRecord{
		{Kind: "pause", Target: "A", Start: 0, End: 9, HasEnd: true},  // before: not named
		{Kind: "pause", Target: "B", Start: 5, End: 10, HasEnd: true}, // touches: named
		{Kind: "clock-step", Target: "coordinator", Start: 3},         // open: lasts, named
		{Kind: "partition", Target: "C", Peer: "coordinator", Start: 15, End: 30, HasEnd: true, Partial: true},
		{Kind: "crash", Target: "D", Start: 21}, // after: not named
	}
	got := annotate(f, faults, timefmt.Times{}).Explanation
	// The shorter before the longer: the clock step lasts to the end.
	want := "something happened. This happened during pause(B) [5,10], partition(C↔coordinator) [15,30] (partly applied), clock-step(coordinator) from t=3."
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// The fault that explains the violation comes first: with every fault
	// kind on, a clock offset active since t=0 and a pause of one of the
	// processes the violation cites, the pause leads, whatever their order.
	cited := found{Violation: Violation{Explanation: "h2 wrote late"}, from: 100, to: 120, procs: []string{"h1", "h2"}}
	noisy := []model.FaultRecord{
		{Kind: "clock-offset", Target: "h1", Start: 0},
		{Kind: "clock-drift", Target: "h3", Start: 0},
		{Kind: "delay", Target: "h3", Start: 90, End: 110, HasEnd: true},
		{Kind: "drop-heartbeats", Target: "h4", Start: 95, End: 105, HasEnd: true},
		{Kind: "partition", Target: "h5", Start: 99, End: 101, HasEnd: true},
		{Kind: "pause", Target: "h2", Start: 60, End: 118, HasEnd: true},
	}
	got = annotate(cited, noisy, timefmt.Times{}).Explanation
	if want := "h2 wrote late. This happened during pause(h2) [60,118], clock-offset(h1) from t=0, partition(h5) [99,101]"; !strings.HasPrefix(got, want) {
		t.Errorf("got  %s\nwant %s...", got, want)
	}
	if !strings.HasSuffix(got, " and 1 more fault.") {
		t.Errorf("six faults, five named: %s", got)
	}
	var many []model.FaultRecord
	for i := range 8 {
		many = append(many, model.FaultRecord{Kind: "pause", Target: fmt.Sprintf("h%d", i), Start: 12, End: 13, HasEnd: true})
	}
	if got := annotate(f, many, timefmt.Times{}).Explanation; !strings.HasSuffix(got, "pause(h4) [12,13] and 3 more faults.") {
		t.Errorf("eight faults: %s", got)
	}
}

// CheckReader holds a small input in memory and spools a large one to a
// file it streams: the same verdicts either way.
func TestCheckReaderSpools(t *testing.T) {
	h := workload{ops: 3000, keys: 3, holders: 3, lostRenews: 5, lostWrites: 5, seed: 4}.history()
	breakAt(h, 2500)
	var buf bytes.Buffer
	if err := model.WriteHistory(&buf, h); err != nil {
		t.Fatal(err)
	}
	want := verdicts(check(h))
	for _, above := range []int64{0, 100, -1} {
		r, got, err := CheckReader(context.Background(), bytes.NewReader(buf.Bytes()), "-", Options{StreamAbove: above})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(verdicts(r), want) || got.Name != "-" || got.Header != h.Header {
			t.Errorf("StreamAbove %d: %v (history %q %+v), want %v", above, verdicts(r), got.Name, got.Header, want)
		}
		if above == 0 && len(got.Ops) != len(h.Ops) || above != 0 && got.Ops != nil {
			t.Errorf("StreamAbove %d: the history comes back with %d ops", above, len(got.Ops))
		}
	}
}

// TestStreamFallbackReadsTheFileAgain streams a history whose first pass
// must give up half-way (a read called at the start is written in the
// middle, as a recorder writes a slow op at its return) and is read again
// from the start by the survey and the second pass. Read 10 times, it
// is decided the same every time. The first pass's reader once went on
// reading after it was stopped, taking blocks of the file from under the
// survey: a valid file was refused as invalid JSON at any line, or read
// as other values.
func TestStreamFallbackReadsTheFileAgain(t *testing.T) {
	h := workload{ops: 40000, keys: 1, holders: 4, seed: 9, interval: true, latency: 3}.history()
	j := len(h.Ops) / 2
	for h.Ops[j].Kind != model.Read || !h.Ops[j].Returned {
		j++
	}
	slow := h.Ops[j]
	slow.Process, slow.Owner, slow.Call = "audit", "audit", h.Ops[0].Call
	h.Ops = slices.Insert(h.Ops, j+1, slow)
	path := filepath.Join(t.TempDir(), "h.jsonl")
	if err := os.WriteFile(path, encodeHistory(t, h), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := Options{StreamAbove: -1, Timeout: time.Minute}
	opts.Read.Workers = 3
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, cancel := opts.budget(context.Background())
	defer cancel()
	if _, _, done, err := streamPass(b, f, path, opts.Read, nil, nil, 0); done || err != nil {
		t.Fatalf("the first pass did not give up (done %v, error %v): the test reads the file once", done, err)
	}
	for i := range 10 {
		r, _, err := CheckFile(context.Background(), path, opts)
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if !r.OK() || r.Ops != len(h.Ops) {
			t.Fatalf("run %d: %d ops, %+v %s", i, r.Ops, r.Properties, r.Reason)
		}
	}
}
