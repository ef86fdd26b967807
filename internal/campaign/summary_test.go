package campaign

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/impl/mutants"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/model"
)

func TestLatencyPercentiles(t *testing.T) {
	var l Latency
	for i := 100; i >= 1; i-- {
		l.Observe(int64(i))
	}
	if l.N() != 100 || l.Percentile(50) != 50 || l.Percentile(99) != 99 || l.Max() != 100 || l.Percentile(100) != 100 || l.Percentile(1) != 1 {
		t.Errorf("1..100: n=%d p50=%d p99=%d max=%d", l.N(), l.Percentile(50), l.Percentile(99), l.Max())
	}
	var empty Latency
	if empty.Percentile(50) != 0 || empty.Max() != 0 || empty.Text() != "none (n=0)" {
		t.Errorf("empty: %d %d %q", empty.Percentile(50), empty.Max(), empty.Text())
	}
	var one Latency
	one.Observe(7)
	if one.Percentile(50) != 7 || one.Percentile(99) != 7 {
		t.Errorf("one value: p50 %d p99 %d", one.Percentile(50), one.Percentile(99))
	}
}

// TestLatencyMergeIsExact: merging the histograms of any split of a sample
// gives the percentiles of the whole sample, computed by sorting it.
func TestLatencyMergeIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n := 1 + r.IntN(300)
		xs := make([]int64, n)
		for i := range xs {
			xs[i] = r.Int64N(50) * int64(1+trial%3)
		}
		var a, b, whole Latency
		cut := r.IntN(n + 1)
		for i, x := range xs {
			whole.Observe(x)
			if i < cut {
				a.Observe(x)
			} else {
				b.Observe(x)
			}
		}
		a.Merge(&b)
		s := slices.Clone(xs)
		slices.Sort(s)
		for _, p := range []int{50, 90, 99} {
			want := s[min(len(s)-1, (len(s)*p+99)/100-1)]
			if got := a.Percentile(p); got != want || whole.Percentile(p) != want {
				t.Fatalf("trial %d: p%d = %d (merged) %d (whole), want %d", trial, p, got, whole.Percentile(p), want)
			}
		}
		ja, _ := json.Marshal(a)
		jw, _ := json.Marshal(whole)
		if !bytes.Equal(ja, jw) {
			t.Fatalf("merged JSON %s != whole %s", ja, jw)
		}
		var back Latency
		if err := json.Unmarshal(ja, &back); err != nil {
			t.Fatal(err)
		}
		if jb, _ := json.Marshal(back); !bytes.Equal(jb, ja) {
			t.Fatalf("round trip %s != %s", jb, ja)
		}
	}
}

func TestLatencyRejectsInconsistentJSON(t *testing.T) {
	for _, s := range []string{
		`{"n":2,"p50":1,"p99":1,"max":1,"histogram":[[1,1]]}`,
		`{"n":1,"p50":1,"p99":1,"max":9,"histogram":[[1,1]]}`,
		`{"n":1,"p50":1,"p99":1,"max":1,"histogram":[[1,0]]}`,
	} {
		var l Latency
		if err := json.Unmarshal([]byte(s), &l); err == nil {
			t.Errorf("%s: accepted", s)
		}
	}
}

// TestShardsTile: the N shards of a range are disjoint, consecutive and
// cover it, for any sizes.
func TestShardsTile(t *testing.T) {
	for n := 0; n <= 40; n++ {
		for parts := 1; parts <= max(n, 1)+2; parts++ {
			next := uint64(10)
			for i := 1; i <= parts; i++ {
				f, k := Shard{i, parts}.Of(10, n)
				if f != next || k < 0 {
					t.Fatalf("n=%d shard %d/%d = %d+%d, want first %d", n, i, parts, f, k, next)
				}
				next += uint64(k)
			}
			if next != 10+uint64(n) {
				t.Fatalf("n=%d, %d shards cover up to %d", n, parts, next)
			}
		}
	}
	for _, bad := range []string{"0/4", "5/4", "1/0", "x", "1/", "-1/3", "2"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q) accepted", bad)
		}
	}
	if s, err := ParseShard("3/4"); err != nil || s != (Shard{3, 4}) {
		t.Errorf("ParseShard(3/4) = %v, %v", s, err)
	}
}

func sweep(t *testing.T, cfg Config) (*Summary, []byte) {
	t.Helper()
	s, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := s.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	return s, b.Bytes()
}

func mutantConfig(name string, seeds int) Config {
	tg := Mutant(mutants.ByName(name))
	return Config{Target: tg, Scenario: tg.Generator(nil), Kinds: tg.Mutant().Faults, First: 1, Seeds: seeds, Judge: JudgeOptions{Budget: -1}}
}

// TestRunIndependentOfWorkers: the summary's bytes, the failing seeds
// reported and where FailFast stops are the same on 1 and 8 workers.
func TestRunIndependentOfWorkers(t *testing.T) {
	for _, failFast := range []bool{false, true} {
		var want []byte
		var wantFailed []uint64
		for _, w := range []int{1, 8} {
			cfg := mutantConfig("write-after-failed-renew", 300)
			cfg.Workers, cfg.FailFast = w, failFast
			var failed []uint64
			cfg.OnFailure = func(f *Failure) { failed = append(failed, f.Seed) }
			s, b := sweep(t, cfg)
			if s.Failed == 0 {
				t.Fatal("the mutant never failed: the test shows nothing")
			}
			if failFast && (s.Failed != 1 || s.FailedSeeds[0] != s.FirstSeed+uint64(s.Seeds)-1) {
				t.Errorf("fail-fast: %d failures in %d seeds, failing %v: did not stop at the first", s.Failed, s.Seeds, s.FailedSeeds)
			}
			if want == nil {
				want, wantFailed = b, failed
				continue
			}
			if !bytes.Equal(b, want) || !slices.Equal(failed, wantFailed) {
				t.Errorf("fail-fast=%v: workers 1 and %d differ:\n%s\n%s\nfailures %v vs %v", failFast, w, want, b, wantFailed, failed)
			}
		}
	}
}

// TestMergeOfShardsIsTheWhole: the shards' summaries merge into the bytes
// of the unsharded summary, with failures in the parts; merging refuses
// parts that do not fit together.
func TestMergeOfShardsIsTheWhole(t *testing.T) {
	whole := mutantConfig("renew-loop-dies", 240)
	_, want := sweep(t, whole)
	var parts []*Summary
	for i := 4; i >= 1; i-- { // any order
		cfg := whole
		cfg.Shard = Shard{i, 4}
		s, _ := sweep(t, cfg)
		parts = append(parts, s)
	}
	m, err := Merge(parts...)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	m.WriteJSON(&got)
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("merge of 4 shards:\n%s\nunsharded:\n%s", got.Bytes(), want)
	}
	if m.Failed == 0 {
		t.Fatal("no failures: the merge of failed_seeds is untested")
	}
	// Round trip through the JSON, as merge reads files.
	var back []*Summary
	for _, p := range parts {
		var b bytes.Buffer
		p.WriteJSON(&b)
		s, err := ReadSummary(&b)
		if err != nil {
			t.Fatal(err)
		}
		back = append(back, s)
	}
	m2, err := Merge(back...)
	if err != nil {
		t.Fatal(err)
	}
	got.Reset()
	m2.WriteJSON(&got)
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("merge of the parts read back:\n%s\nunsharded:\n%s", got.Bytes(), want)
	}

	ref := Config{Target: Reference(), Scenario: Reference().Generator([]faults.Kind{faults.Crash}), Kinds: []faults.Kind{faults.Crash}, First: 1, Seeds: 60}
	refSum, _ := sweep(t, ref)
	bad := map[string][]*Summary{
		"overlap":        {parts[0], parts[0]},
		"gap":            {parts[3], parts[1]},
		"implementation": {parts[3], refSum},
	}
	for name, ps := range bad {
		if _, err := Merge(ps...); err == nil {
			t.Errorf("%s: merged", name)
		} else if !strings.Contains(err.Error(), "merge:") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestMergeRefusesEveryMissingShard: every proper subset of a sweep's
// shards is refused, naming each missing shard — the first and the last
// too, whose absence leaves no gap between the parts given — and so are a
// shard given twice, a shard of another sweep and an unsharded range mixed
// with shards. Only the whole set merges.
func TestMergeRefusesEveryMissingShard(t *testing.T) {
	const n = 4
	whole := mutantConfig("renew-loop-dies", 80)
	parts := make([]*Summary, n+1)
	for i := 1; i <= n; i++ {
		cfg := whole
		cfg.Shard = Shard{i, n}
		parts[i], _ = sweep(t, cfg)
		if w := parts[i].Sweep; w == nil || w.Shard != i || w.Shards != n || w.Seeds != 80 || w.FirstSeed != whole.First {
			t.Fatalf("shard %d/%d carries sweep %+v", i, n, w)
		}
	}
	for mask := 1; mask < 1<<n; mask++ {
		var given []*Summary
		var missing []int
		for i := 1; i <= n; i++ {
			if mask&(1<<(i-1)) != 0 {
				given = append(given, parts[i])
			} else {
				missing = append(missing, i)
			}
		}
		_, err := Merge(given...)
		if len(missing) == 0 {
			if err != nil {
				t.Errorf("all %d shards: %v", n, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("shards missing %v: merged", missing)
			continue
		}
		for _, i := range missing {
			if !strings.Contains(err.Error(), fmt.Sprintf("shard %d/%d", i, n)) {
				t.Errorf("shards missing %v: the error does not name shard %d/%d: %v", missing, i, n, err)
			}
		}
	}
	other := whole
	other.Seeds, other.Shard = 120, Shard{4, n}
	otherSweep, _ := sweep(t, other)
	plain := whole
	plain.First, plain.Seeds = whole.First+80, 20
	plainSum, _ := sweep(t, plain)
	early := *parts[4]
	early.Seeds--
	for name, ps := range map[string][]*Summary{
		"twice":         {parts[1], parts[2], parts[2], parts[3], parts[4]},
		"another sweep": {parts[1], parts[2], parts[3], otherSweep},
		"mixed":         {parts[1], parts[2], parts[3], parts[4], plainSum},
		"stopped early": {parts[1], parts[2], parts[3], &early},
	} {
		if _, err := Merge(ps...); err == nil {
			t.Errorf("%s: merged", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}

// TestFailedSeedsCapped: a summary keeps the smallest MaxFailedSeeds
// failing seeds whatever the order they are added in, and counts them all.
func TestFailedSeedsCapped(t *testing.T) {
	var xs []uint64
	r := rand.New(rand.NewPCG(3, 4))
	perm := r.Perm(3 * MaxFailedSeeds)
	for _, p := range perm {
		xs = insertCapped(xs, uint64(p+1))
	}
	if len(xs) != MaxFailedSeeds || xs[0] != 1 || xs[len(xs)-1] != MaxFailedSeeds || !slices.IsSorted(xs) {
		t.Errorf("kept %d seeds, %d..%d", len(xs), xs[0], xs[len(xs)-1])
	}
}

// idleTarget is a target whose every request failed: its runs record the
// ops it was given, and say what the first failure was.
type idleTarget struct {
	ops             []model.Op
	first           string
	faults, partial map[faults.Kind]int
	records         []model.FaultRecord
}

func (idleTarget) Implementation() string { return "idle" }

func (t idleTarget) Run(_ context.Context, sc *scenario.Scenario) (*Execution, error) {
	h := &model.History{Name: "idle", Header: model.DefaultHeader(), Ops: slices.Clone(t.ops), Faults: slices.Clone(t.records)}
	h.NumberLines()
	return &Execution{Scenario: sc, History: h, Faults: maps.Clone(t.faults), Partial: maps.Clone(t.partial), FirstError: t.first}, nil
}

// TestUnexercisedIsAnError: a campaign whose seeds recorded no operation,
// or no grant, exercised nothing: exit 2 with the first failed request as
// its cause, said in the text — never "OK". A normal campaign (the
// reference) is not one.
func TestUnexercisedIsAnError(t *testing.T) {
	gen := Reference().Generator(nil)
	unanswered := model.Op{Process: "h1", Kind: model.Acquire, TTL: 100, Call: 1}
	granted := model.Op{Process: "h1", Owner: "h1", Kind: model.Acquire, TTL: 100, Call: 1, Return: 2, Returned: true, OK: true, Fence: 1}
	wrote := model.Op{Process: "h1", Owner: "h1", Kind: model.Write, Call: 3, Return: 4, Returned: true, OK: true, Fence: 1}
	for _, tc := range []struct {
		name  string
		tg    idleTarget
		cause string
	}{
		{"zero operations", idleTarget{first: `POST /apis/coordination.k8s.io/v1/namespaces/default/leases (Content-Type application/vnd.kubernetes.protobuf): 415 Unsupported Media Type`},
			"application/vnd.kubernetes.protobuf"},
		{"every request unanswered", idleTarget{ops: []model.Op{unanswered}}, "line 2"},
		{"lease traffic only", idleTarget{ops: []model.Op{granted}}, "no write: every operation was lease traffic"},
		{"pauses never struck", idleTarget{ops: []model.Op{granted, wrote}, partial: map[faults.Kind]int{faults.Pause: 1},
			records: []model.FaultRecord{{Kind: "pause", Target: "h1", Partial: true, Detail: "h1 wrote nothing after it"}}},
			"the scenarios drew 3 pause faults and none was injected (the first: h1 wrote nothing after it)"},
		{"pauses struck in part", idleTarget{ops: []model.Op{granted, wrote}, faults: map[faults.Kind]int{faults.Pause: 1}, partial: map[faults.Kind]int{faults.Pause: 1}}, ""},
	} {
		sum, err := Run(context.Background(), Config{Target: tc.tg, Scenario: gen, Seeds: 3, First: 1, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		if tc.cause == "" { // exercised: some of each kind drawn struck
			if err := sum.Unexercised(); err != nil || sum.Status() != ExitOK {
				t.Errorf("%s: %v, status %d; want exercised, exit 0", tc.name, err, sum.Status())
			}
			continue
		}
		if sum.Status() != ExitUsage {
			t.Errorf("%s: status %d, want %d", tc.name, sum.Status(), ExitUsage)
		}
		err = sum.Unexercised()
		if err == nil || !strings.Contains(err.Error(), tc.cause) {
			t.Errorf("%s: Unexercised() = %v, want the cause %q", tc.name, err, tc.cause)
		}
		var b strings.Builder
		sum.WriteText(&b, 0)
		if strings.Contains(b.String(), "OK:") || !strings.Contains(b.String(), "ERROR: ") || !strings.Contains(b.String(), tc.cause) {
			t.Errorf("%s: the summary does not say it exercised nothing:\n%s", tc.name, b.String())
		}
	}
	sum, err := Run(context.Background(), Config{Target: Reference(), Scenario: gen, Seeds: 3, First: 1, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := sum.Unexercised(); err != nil || sum.Grants == 0 || sum.Status() != ExitOK {
		t.Errorf("the reference: Unexercised() = %v, %d grants, status %d; want a normal run", err, sum.Grants, sum.Status())
	}
	// A merge of the parts keeps the grants and the cause.
	a, _ := Run(context.Background(), Config{Target: idleTarget{first: "x"}, Scenario: gen, Seeds: 2, First: 1, Workers: 1})
	b, _ := Run(context.Background(), Config{Target: idleTarget{first: "y"}, Scenario: gen, Seeds: 2, First: 3, Workers: 1})
	m, err := Merge(b, a)
	if err != nil || m.FirstError != "x" || m.Status() != ExitUsage {
		t.Errorf("merge: %+v, %v; want the first part's cause and exit 2", m, err)
	}
}
