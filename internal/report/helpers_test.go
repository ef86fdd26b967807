package report

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/model"
)

// The timeline cases under testdata/: NAME.jsonl is a history with fault
// records (copies of testdata/histories/ goldens, faults appended so the op
// lines stay those of the originals), NAME.trace.jsonl the runner's trace
// the beliefs come from, NAME.findings.json run-property findings.
var cases = []string{"gc-pause", "clock-skew", "renewal-loop-dies", "xss"}

// readHistory reads a history with fault records. Package model's reader
// is used when it knows the fault lines; until then the
// fault lines are read here and blanked for it, which keeps line numbers.
func readHistory(t testing.TB, path string) *model.History {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var faults []model.FaultRecord
	var rest bytes.Buffer
	for n, line := range bytes.Split(data, []byte("\n")) {
		var rec struct {
			Fault   *string `json:"fault"`
			Target  string  `json:"target"`
			Peer    string  `json:"peer"`
			Start   int64   `json:"start"`
			End     *int64  `json:"end"`
			Amount  int64   `json:"amount"`
			Detail  string  `json:"detail"`
			Partial bool    `json:"partial"`
		}
		if json.Unmarshal(line, &rec) == nil && rec.Fault != nil {
			f := model.FaultRecord{Line: n + 1, Kind: *rec.Fault, Target: rec.Target, Peer: rec.Peer, Start: rec.Start,
				Amount: rec.Amount, Detail: rec.Detail, Partial: rec.Partial}
			if rec.End != nil {
				f.End, f.HasEnd = *rec.End, true
			}
			faults = append(faults, f)
			line = nil
		}
		if n > 0 {
			rest.WriteByte('\n')
		}
		rest.Write(line)
	}
	if h, err := model.ReadHistory(bytes.NewReader(data), path); err == nil && len(h.Faults) == len(faults) {
		return h
	}
	h, err := model.ReadHistory(&rest, path)
	if err != nil {
		t.Fatal(err)
	}
	h.Faults = faults
	return h
}

func readTrace(t testing.TB, path string) []TraceLine {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []TraceLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e struct {
			T      int64  `json:"t"`
			Node   string `json:"node"`
			What   string `json:"what"`
			Detail string `json:"detail"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, TraceLine{T: e.T, Node: e.Node, What: e.What, Detail: e.Detail})
	}
	return out
}

// loadCase builds the Input a command would: the history, the checker's
// verdict, the beliefs of the trace and the findings.
func loadCase(t testing.TB, name string) Input {
	t.Helper()
	path := filepath.Join("testdata", name+".jsonl")
	h := readHistory(t, path)
	in := Input{
		Title:   name,
		History: h,
		Check:   mustCheck(context.Background(), h, checker.Options{Workers: 1}),
		Replay:  "leasecheck check internal/report/" + filepath.ToSlash(path) + " --html timeline.html",
	}
	in.Beliefs = BeliefsFromTrace(readTrace(t, filepath.Join("testdata", name+".trace.jsonl")), historyEnd(h))
	if data, err := os.ReadFile(filepath.Join("testdata", name+".findings.json")); err == nil {
		var fs []struct {
			Property    string `json:"property"`
			Explanation string `json:"explanation"`
			Lines       []int  `json:"lines"`
			From        int64  `json:"from"`
			To          int64  `json:"to"`
		}
		if err := json.Unmarshal(data, &fs); err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			in.Extra = append(in.Extra, Finding{Property: f.Property, Explanation: f.Explanation, Lines: f.Lines, From: f.From, To: f.To})
		}
	}
	if name == "xss" {
		in.Title = `<b>xss</b> "title" & </title><script>alert(7)</script>`
		in.Replay = `leasecheck repro </script><script>alert(8)</script>`
		in.Secondary = "javascript:alert(9)"
	}
	return in
}

func render(t testing.TB, in Input, opts Options) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteTimeline(&b, in, opts); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// pageData cuts the embedded JSON out of a page.
func pageData(t testing.TB, page []byte) []byte {
	t.Helper()
	const open = `<script id="data" type="application/json">` + "\n"
	_, rest, ok := bytes.Cut(page, []byte(open))
	if !ok {
		t.Fatal("page has no data element")
	}
	data, _, ok := bytes.Cut(rest, []byte("</script>"))
	if !ok {
		t.Fatal("data element not closed")
	}
	return data
}

// genHistory generates a valid exact-mode history of n ops under the
// reference semantics: procs holders contend for keys leases (ttl 50),
// write under them, renew, release, read; now and then a renew gets no
// answer (it still took effect) and the holder stops writing. With zombie,
// one holder whose lease expired writes under its old fence halfway
// through and the coordinator accepts it: a linearizable and a
// fence-monotonic violation.
func genHistory(n, procs, keys int, zombie bool, seed uint64) *model.History {
	rng := rand.New(rand.NewPCG(seed, 0x1ea5e))
	type lease struct {
		holder        int
		fence, expiry int64
		data          string
		hasData       bool
	}
	type proc struct {
		name     string
		key      int
		fence    int64 // held, or 0
		lastHeld int64 // the fence it last held (for the zombie)
		lastKey  int
		busy     int64 // returns at
		writes   int
	}
	ls := make([]lease, keys)
	for k := range ls {
		ls[k].holder = -1
	}
	ps := make([]proc, procs)
	for i := range ps {
		ps[i] = proc{name: fmt.Sprintf("h%d", i+1), key: -1, lastKey: -1}
	}
	keyName := func(k int) string {
		if keys == 1 {
			return ""
		}
		return fmt.Sprintf("k%03d", k)
	}
	h := &model.History{Name: "generated", Header: model.Header{Version: 1, TimeUnit: "ms", Semantics: model.Seed}}
	h.Ops = make([]model.Op, 0, n)
	const ttl = 50
	t := int64(0)
	for len(h.Ops) < n {
		t += 1 + rng.Int64N(2)
		pi := rng.IntN(procs)
		p := &ps[pi]
		if p.busy > t {
			continue
		}
		call, at, ret := t, t+1, t+2+rng.Int64N(3)
		p.busy = ret + 1
		op := model.Op{Line: len(h.Ops) + 2, Process: p.name, Owner: p.name, Call: call, Return: ret, Returned: true, At: at, HasAt: true}
		if zombie && len(h.Ops) >= n/2 && p.fence == 0 && p.lastHeld > 0 && ls[p.lastKey].fence > p.lastHeld {
			l := &ls[p.lastKey]
			op.Key, op.Kind, op.Fence, op.Value, op.HasValue, op.OK = keyName(p.lastKey), model.Write, p.lastHeld, "zombie", true, true
			l.data, l.hasData = "zombie", true
			zombie = false
			h.Ops = append(h.Ops, op)
			continue
		}
		if p.fence == 0 {
			k := rng.IntN(keys)
			l := &ls[k]
			op.Key, op.Kind, op.TTL = keyName(k), model.Acquire, ttl
			if rng.IntN(8) == 0 {
				op.Kind, op.OK, op.Value, op.HasValue = model.Read, true, l.data, l.hasData
			} else if l.holder < 0 || at >= l.expiry {
				l.holder, l.fence, l.expiry = pi, l.fence+1, at+ttl
				p.fence, p.key, p.writes = l.fence, k, 0
				op.OK, op.Fence = true, l.fence
			} else {
				op.Error = "held"
			}
			h.Ops = append(h.Ops, op)
			continue
		}
		l := &ls[p.key]
		op.Key = keyName(p.key)
		live := l.holder == pi && at < l.expiry && l.fence == p.fence
		switch r := rng.IntN(10); {
		case r < 6 && p.writes < 8:
			p.writes++
			op.Kind, op.Fence, op.Value, op.HasValue = model.Write, p.fence, fmt.Sprintf("%s:%d", p.name, len(h.Ops)), true
			if live {
				op.OK, l.data, l.hasData = true, op.Value, true
			} else {
				op.Error = "expired"
				p.lastHeld, p.lastKey, p.fence = p.fence, p.key, 0
			}
		case r < 8:
			op.Kind, op.TTL, op.Fence = model.Renew, ttl, p.fence
			if live {
				l.expiry = at + ttl
				op.OK = true
				if rng.IntN(100) == 0 { // the answer is lost; it still took effect
					op.Returned, op.Return, op.OK = false, 0, false
					p.lastHeld, p.lastKey, p.fence = p.fence, p.key, 0
				}
			} else {
				op.Error = "expired"
				p.lastHeld, p.lastKey, p.fence = p.fence, p.key, 0
			}
		default:
			op.Kind, op.Fence = model.Release, p.fence
			if l.holder == pi {
				l.holder = -1
				op.OK = true
			} else {
				op.Error = "not-holder"
			}
			p.lastHeld, p.lastKey, p.fence = p.fence, p.key, 0
		}
		h.Ops = append(h.Ops, op)
	}
	return h
}

func encodeHistory(t testing.TB, h *model.History) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := model.WriteHistory(&b, h); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// mustCheck is checker.Check for histories the tests built themselves: a
// malformed one is a bug in the test.
func mustCheck(ctx context.Context, h *model.History, o checker.Options) *checker.Result {
	r, err := checker.Check(ctx, h, o)
	if err != nil {
		panic(err)
	}
	return r
}
