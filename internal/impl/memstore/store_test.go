package memstore

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// TestArticleTranscript replays lease.py's module-level script step by step:
// its asserts and its three printed rejections.
func TestArticleTranscript(t *testing.T) {
	s := New()
	const k = "lease"
	mustWrite := func(owner string, fence int64, v string, now int64) {
		t.Helper()
		if err := s.Write(k, owner, fence, v, now); err != nil {
			t.Fatalf("write(%s, %d, %q, now=%d) = %v, want accepted", owner, fence, v, now, err)
		}
	}
	mustReject := func(label, owner string, fence int64, v string, now int64, reason, want string) {
		t.Helper()
		err := s.Write(k, owner, fence, v, now)
		var lle *LeaseLostError
		if !errors.As(err, &lle) {
			t.Fatalf("write(%s, %d, %q, now=%d) = %v, want *LeaseLostError", owner, fence, v, now, err)
		}
		if lle.Reason != reason {
			t.Errorf("reason = %q, want %q", lle.Reason, reason)
		}
		if got := label + ": " + err.Error(); got != want {
			t.Errorf("printed %q, want %q", got, want)
		}
	}

	tokenA, ok := s.Acquire(k, "A", 5, 0)
	if !ok || tokenA != 1 {
		t.Fatalf("acquire A = %d,%v want 1,true", tokenA, ok)
	}
	mustWrite("A", tokenA, "a-1", 2)
	if !s.Renew(k, "A", 5, 0, 4) {
		t.Fatal("renew A at 4 failed")
	}
	if _, exp, _ := s.Holder(k); exp != 9 {
		t.Fatalf("deadline after renew = %d, want 9", exp)
	}
	mustWrite("A", tokenA, "a-2", 8)
	mustReject("rejected expired write", "A", tokenA, "a-stale", 10, ReasonExpired,
		"rejected expired write: lease expired for A at t=10")
	if s.Renew(k, "A", 5, 0, 10) {
		t.Fatal("renew after expiry succeeded")
	}
	tokenB, ok := s.Acquire(k, "B", 5, 10)
	if !ok || tokenB != 2 {
		t.Fatalf("acquire B = %d,%v want 2,true", tokenB, ok)
	}
	mustWrite("B", tokenB, "b-1", 11)
	mustReject("rejected wrong fencing token", "B", tokenA, "b-wrong-token", 12, ReasonStaleFence,
		"rejected wrong fencing token: stale token 1 != 2")
	mustReject("rejected stale holder", "A", tokenA, "a-older-term", 12, ReasonNotHolder,
		"rejected stale holder: lease expired for A at t=12")
	if f, ok := s.Acquire(k, "C", 5, 12); ok {
		t.Fatalf("C acquired (fence %d) while B holds", f)
	}
	if s.Release(k, "A", 0) {
		t.Fatal("non-holder A released")
	}
	if !s.Release(k, "B", 0) {
		t.Fatal("holder B could not release")
	}
	tokenC, ok := s.Acquire(k, "C", 5, 13)
	if !ok || tokenC != 3 {
		t.Fatalf("acquire C = %d,%v want 3,true", tokenC, ok)
	}
	mustWrite("C", tokenC, "c-1", 14)
	if v, ok := s.Read(k); !ok || v != "c-1" {
		t.Fatalf("data = %q,%v want c-1", v, ok)
	}
	if s.Fence(k) != 3 {
		t.Fatalf("fence = %d, want 3", s.Fence(k))
	}
}

func TestFencedRenewRelease(t *testing.T) {
	s := New()
	f1, _ := s.Acquire("k", "A", 5, 0)
	tests := []struct {
		name  string
		fence int64
		want  bool
	}{
		{"wrong fence", f1 + 1, false},
		{"future fence", f1 + 100, false},
		{"current fence", f1, true},
		{"no fence", 0, true},
	}
	for _, tc := range tests {
		if got := s.Renew("k", "A", 5, tc.fence, 1); got != tc.want {
			t.Errorf("Renew %s = %v, want %v", tc.name, got, tc.want)
		}
	}
	if s.Release("k", "A", f1+1) {
		t.Error("Release with wrong fence succeeded")
	}
	if !s.Release("k", "A", f1) {
		t.Error("Release with current fence failed")
	}
	if s.Release("k", "A", 0) {
		t.Error("double release succeeded")
	}
	if owner, exp, held := s.Holder("k"); held || owner != "" || exp != 6 {
		t.Errorf("Holder after release = %q,%d,%v want \"\",6,false", owner, exp, held)
	}
	// After release, acquire succeeds even before the old deadline.
	if f, ok := s.Acquire("k", "B", 5, 2); !ok || f != 2 {
		t.Errorf("Acquire after release = %d,%v want 2,true", f, ok)
	}
}

func TestEdgeCases(t *testing.T) {
	s := New()
	// Unknown key: nothing held, nothing written, and a write is not-holder.
	if _, ok := s.Read("x"); ok {
		t.Error("Read of unknown key ok")
	}
	if s.Renew("x", "", 1, 0, 0) || s.Release("x", "", 0) {
		t.Error("renew/release with empty owner on unheld key succeeded")
	}
	var lle *LeaseLostError
	if err := s.Write("x", "", 0, "v", 0); !errors.As(err, &lle) || lle.Reason != ReasonNotHolder {
		t.Errorf("Write on unheld key = %v, want not-holder", err)
	}
	// The empty string is a valid owner, distinct from "no holder".
	if f, ok := s.Acquire("x", "", 3, 0); !ok || f != 1 {
		t.Fatalf("Acquire by empty owner = %d,%v", f, ok)
	}
	if err := s.Write("x", "", 1, "e", 2); err != nil {
		t.Errorf("Write by empty owner = %v", err)
	}
	// Expired but unreplaced holder: still reported, may still release (no deadline check).
	if _, _, held := s.Holder("x"); !held {
		t.Error("holder vanished")
	}
	if err := s.Write("x", "", 1, "late", 3); !errors.As(err, &lle) || lle.Reason != ReasonExpired {
		t.Errorf("Write at expiry = %v, want expired", err)
	}
	if !s.Release("x", "", 0) {
		t.Error("expired holder could not release")
	}
	// Same owner re-acquires after expiry with a new fence; old fence is stale.
	s.Acquire("y", "A", 2, 0)
	if f, ok := s.Acquire("y", "A", 2, 2); !ok || f != 2 {
		t.Errorf("re-acquire = %d,%v want 2,true", f, ok)
	}
	if err := s.Write("y", "A", 1, "v", 3); !errors.As(err, &lle) || lle.Reason != ReasonStaleFence ||
		lle.Error() != "stale token 1 != 2" {
		t.Errorf("stale write = %v", err)
	}
	// Keys are independent.
	if s.Fence("x") != 1 || s.Fence("y") != 2 || s.Fence("z") != 0 {
		t.Errorf("fences x,y,z = %d,%d,%d", s.Fence("x"), s.Fence("y"), s.Fence("z"))
	}
}

func TestSnapshotRestore(t *testing.T) {
	s := New()
	s.Acquire("a", "A", 5, 0)
	s.Write("a", "A", 1, "a1", 1)
	snap := s.Snapshot()
	s.Write("a", "A", 1, "a2", 2)
	s.Release("a", "A", 0)
	s.Acquire("b", "B", 5, 2)
	if v, _ := snap.Read("a"); v != "a1" {
		t.Errorf("snapshot aliased live state: %q", v)
	}
	if snap.Fence("b") != 0 {
		t.Error("snapshot sees later key")
	}
	s.Restore(snap)
	if owner, exp, held := s.Holder("a"); owner != "A" || exp != 5 || !held {
		t.Errorf("restored holder = %q,%d,%v", owner, exp, held)
	}
	if s.Fence("b") != 0 {
		t.Error("restore kept later key")
	}
	s.Write("a", "A", 1, "a3", 3)
	if v, _ := snap.Read("a"); v != "a1" {
		t.Errorf("restore aliased snapshot: %q", v)
	}
}

func TestResource(t *testing.T) {
	r := NewResource()
	steps := []struct {
		key    string
		fence  int64
		value  string
		accept bool
		data   string
		high   int64
	}{
		{"k", 0, "zero", false, "", 0},
		{"k", -1, "neg", false, "", 0},
		{"k", 1, "v1", true, "v1", 1},
		{"k", 1, "v1b", true, "v1b", 1}, // equal fence accepted
		{"k", 3, "v3", true, "v3", 3},   // gaps allowed
		{"k", 2, "v2", false, "v3", 3},  // lower rejected
		{"k", 0, "zero", false, "v3", 3},
		{"j", 1, "j1", true, "j1", 1}, // independent key
		{"k", 4, "v4", true, "v4", 4},
	}
	for i, st := range steps {
		err := r.Write(st.key, st.fence, st.value)
		if st.accept != (err == nil) {
			t.Fatalf("step %d: Write(%s,%d) = %v, want accept=%v", i, st.key, st.fence, err, st.accept)
		}
		var sfe *StaleFenceError
		if err != nil && (!errors.As(err, &sfe) || sfe.Fence != st.fence) {
			t.Fatalf("step %d: error %v is not a *StaleFenceError for fence %d", i, err, st.fence)
		}
		v, ok := r.Read(st.key)
		if v != st.data || ok != (st.data != "") || r.Highest(st.key) != st.high {
			t.Fatalf("step %d: state %q,%v,%d want %q,%d", i, v, ok, r.Highest(st.key), st.data, st.high)
		}
	}
}

// ---- differential test against lease.py ----

type pyOp struct {
	Op    string `json:"op"`
	Owner string `json:"owner"`
	TTL   int64  `json:"ttl,omitempty"`
	Now   int64  `json:"now"`
	Fence int64  `json:"fence"`
	Value string `json:"value"`
}

type pyOutcome struct {
	R   json.RawMessage `json:"r"`
	Err *string         `json:"err"`
	S   [4]any          `json:"s"` // holder (string|nil), expiry, fence, data (string|nil)
}

// goOutcome runs op on s and renders the outcome the way the driver does.
func goOutcome(s *Store, op pyOp) (r string, errMsg *string, state string) {
	const k = "k"
	switch op.Op {
	case "acquire":
		if f, ok := s.Acquire(k, op.Owner, op.TTL, op.Now); ok {
			r = fmt.Sprint(f)
		} else {
			r = "null"
		}
	case "renew":
		r = fmt.Sprint(s.Renew(k, op.Owner, op.TTL, op.Fence, op.Now))
	case "release":
		r = fmt.Sprint(s.Release(k, op.Owner, op.Fence))
	case "write":
		if err := s.Write(k, op.Owner, op.Fence, op.Value, op.Now); err != nil {
			m := err.Error()
			errMsg, r = &m, "null"
		} else {
			r = "true"
		}
	case "read":
		if v, ok := s.Read(k); ok {
			b, _ := json.Marshal(v)
			r = string(b)
		} else {
			r = "null"
		}
	}
	holder, exp, held := s.Holder(k)
	var h any
	if held {
		h = holder
	}
	var d any
	if v, ok := s.Read(k); ok {
		d = v
	}
	return r, errMsg, fmt.Sprint([]any{h, exp, s.Fence(k), d})
}

func pyState(s [4]any) string {
	// JSON numbers decode as float64; render them as integers.
	out := make([]any, 4)
	for i, v := range s {
		if f, ok := v.(float64); ok {
			out[i] = int64(f)
		} else {
			out[i] = v
		}
	}
	return fmt.Sprint(out)
}

// randomSequence builds n ops on one key: owners from a small set (including
// the empty string, a valid owner distinct from "no holder"), ttl 1..6, now
// non-decreasing by 0..3 (often unchanged), and fences that are sometimes
// current, sometimes the owner's last grant, sometimes stale/wrong/absent.
// To pick realistic tokens it steers by a shadow Store; that only chooses
// inputs — every outcome is then checked against lease.py.
func randomSequence(rng *rand.Rand, n int) []pyOp {
	owners := []string{"A", "B", "C", ""}
	shadow := New()
	var now int64
	last := map[string]int64{}
	ops := make([]pyOp, 0, n)
	fence := func(owner string, allowZero bool) int64 {
		cur := shadow.Fence("k")
		switch rng.IntN(6) {
		case 0, 1:
			return last[owner]
		case 2:
			return cur
		case 3:
			return cur - 1
		case 4:
			if allowZero {
				return 0
			}
			return cur + 1
		default:
			return rng.Int64N(cur + 3)
		}
	}
	for i := 0; i < n; i++ {
		if rng.IntN(3) > 0 {
			now += rng.Int64N(4)
		}
		owner := owners[rng.IntN(len(owners))]
		if h, _, held := shadow.Holder("k"); held && rng.IntN(2) == 0 {
			owner = h // favour the current (possibly expired) holder
		}
		ttl := 1 + rng.Int64N(6)
		var op pyOp
		switch x := rng.IntN(20); {
		case x < 5:
			op = pyOp{Op: "acquire", Owner: owner, TTL: ttl, Now: now}
		case x < 9:
			f := int64(0)
			if rng.IntN(2) == 0 {
				f = fence(owner, true)
			}
			op = pyOp{Op: "renew", Owner: owner, TTL: ttl, Now: now, Fence: f}
		case x < 11:
			f := int64(0)
			if rng.IntN(2) == 0 {
				f = fence(owner, true)
			}
			op = pyOp{Op: "release", Owner: owner, Now: now, Fence: f}
		case x < 18:
			op = pyOp{Op: "write", Owner: owner, Now: now, Fence: fence(owner, false), Value: fmt.Sprintf("%s-%d", owner, i)}
		default:
			op = pyOp{Op: "read", Now: now}
		}
		ops = append(ops, op)
		goOutcome(shadow, op)
		if op.Op == "acquire" {
			if h, _, held := shadow.Holder("k"); held && h == owner {
				last[owner] = shadow.Fence("k")
			}
		}
	}
	return ops
}

// skipOrFail skips when the reference cannot be run on a developer's
// machine, but fails under CI (CI is set), where .ci/run provides both.
func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf(format+" (CI is set)", args...)
	}
	t.Skipf(format, args...)
}

func TestDifferentialAgainstLeasePy(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		skipOrFail(t, "python3 not found on PATH; cannot compare against lease.py")
	}
	// lease.py is the article's reference implementation, not part of this
	// repository (docs/specification.md §1 says how to get it): the test
	// looks for it at $LEASECHECK_LEASE_PY, and else where this project's
	// workplace keeps it, in reference/ beside the clone.
	ref := os.Getenv("LEASECHECK_LEASE_PY")
	if ref == "" {
		ref = filepath.Join("..", "..", "..", "..", "shared", "reference", "lease.py")
	}
	if _, err := os.Stat(ref); err != nil {
		skipOrFail(t, "the reference lease.py is not at %s (%v): save the article's listing as lease.py (docs/specification.md §1) and set LEASECHECK_LEASE_PY to its path", ref, err)
	}

	cmd := exec.Command(py, filepath.Join("testdata", "lease_driver.py"), ref)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdoutPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil && !t.Failed() {
			t.Errorf("python driver: %v", err)
		}
	}()
	out := bufio.NewScanner(stdoutPipe)
	out.Buffer(make([]byte, 1<<20), 1<<24)
	if !out.Scan() {
		t.Fatalf("python driver did not start: %v", out.Err())
	}

	const sequences, opsPer = 4000, 30
	rng := rand.New(rand.NewPCG(20240601, 1))
	enc := json.NewEncoder(stdin)
	compared, ops := 0, 0
	cover := map[string]int{}
	for seq := 0; seq < sequences; seq++ {
		batch := randomSequence(rng, opsPer)
		if err := enc.Encode(batch); err != nil {
			t.Fatalf("send: %v", err)
		}
		if !out.Scan() {
			t.Fatalf("python driver died: %v", out.Err())
		}
		var got []pyOutcome
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatalf("decode %q: %v", out.Text(), err)
		}
		if len(got) != len(batch) {
			t.Fatalf("seq %d: %d outcomes for %d ops", seq, len(got), len(batch))
		}
		s := New()
		for i, op := range batch {
			r, em, st := goOutcome(s, op)
			want := got[i]
			bad := r != string(want.R) || st != pyState(want.S) ||
				(em == nil) != (want.Err == nil) || (em != nil && *em != *want.Err)
			if bad {
				wantErr := "<nil>"
				if want.Err != nil {
					wantErr = *want.Err
				}
				gotErr := "<nil>"
				if em != nil {
					gotErr = *em
				}
				t.Fatalf("seq %d op %d %+v:\n go: r=%s err=%s state=%s\n py: r=%s err=%s state=%s\nsequence: %+v",
					seq, i, op, r, gotErr, st, want.R, wantErr, pyState(want.S), batch[:i+1])
			}
			ops++
			switch {
			case em != nil:
				cover[op.Op+" rejected: "+(*em)[:5]]++
			case r == "null" || r == "false":
				cover[op.Op+" refused"]++
			default:
				cover[op.Op+" ok"]++
			}
		}
		compared++
	}
	for _, k := range slices.Sorted(maps.Keys(cover)) {
		t.Logf("  %-26s %6d", k, cover[k])
	}
	t.Logf("compared %d sequences (%d ops) against %s: all outcomes and states identical", compared, ops, ref)
}

// ---- benchmark ----

func BenchmarkStoreOps(b *testing.B) {
	keys := []string{"k0", "k1", "k2", "k3"}
	owners := []string{"A", "B", "C"}
	rng := rand.New(rand.NewPCG(1, 2))
	type bop struct {
		kind       int
		key, owner string
		ttl, fence int64
		now        int64
	}
	const n = 4096
	stream := make([]bop, n)
	var now int64
	for i := range stream {
		now += rng.Int64N(3)
		stream[i] = bop{rng.IntN(5), keys[rng.IntN(len(keys))], owners[rng.IntN(len(owners))],
			1 + rng.Int64N(6), rng.Int64N(8), now}
	}
	b.ReportAllocs()
	s := New()
	var base int64
	for i := 0; b.Loop(); i++ {
		op := stream[i%n]
		if i%n == 0 && i > 0 {
			base += now + 10 // keep the clock non-decreasing across laps
		}
		t := base + op.now
		switch op.kind {
		case 0:
			s.Acquire(op.key, op.owner, op.ttl, t)
		case 1:
			s.Renew(op.key, op.owner, op.ttl, op.fence, t)
		case 2:
			s.Release(op.key, op.owner, op.fence)
		case 3:
			s.Write(op.key, op.owner, s.Fence(op.key), "v", t)
		default:
			s.Read(op.key)
		}
	}
}
