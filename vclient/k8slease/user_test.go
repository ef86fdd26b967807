package k8slease_test

// A controller author's own tests, written against the public doors only
// (vclient, k8slease, model and client-go): the controller below is not
// the project's elector. Run as a user's module runs them:
//
//	go test -run TestMyController -seeds 10000 -profile pause-any
//	go test -run TestMyControllerUnfenced -save DIR
//	go test -run TestMyControllerUnfenced -scenario DIR/seed-N.scenario.json
//	go test -run TestMyControllerRegressions

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/vclient"
	"github.com/leasecheck/leasecheck/vclient/k8slease"
)

// myTiming is the controller's own: it reads none of the scenario's.
var myTiming = k8slease.Timing{Name: "mine", LeaseDuration: 15000, RenewDeadline: 10000, RetryPeriod: 2000}

// myController is client-go's LeaderElector with a LeaseLock on a default
// clientset (protobuf), 15 s / 10 s / 2 s, writing once a second from
// OnStartedLeading under the context it was given — what most controllers
// do. Fenced, each write presents the resourceVersion of the Lease update
// that made it the holder (k8slease.Tokens).
type myController struct {
	fenced bool
	// tokensOf, when set, is the identity the fenced tokens are learned
	// for (a misconfigured controller: another's, so it never has a token
	// and never writes); writes, when set, is how many writes a term makes
	// (then it only waits).
	tokensOf string
	writes   int
}

// Use makes client-go's jitter draw from the run's seed (vclient.RandUser).
func (m *myController) Use(r *rand.Rand) (undo func()) { return k8slease.UseJitter(r) }

func (m *myController) Start(ctx context.Context, c *vclient.Candidate) {
	ctx = klog.NewContext(ctx, logr.Discard())
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: "http://kube-apiserver.invalid", Transport: c.Transport(), Timeout: 10 * time.Second})
	if err != nil {
		c.Trace("refused", err.Error())
		return
	}
	var work sync.WaitGroup
	defer work.Wait() // Start returns once every goroutine it started has
	for ctx.Err() == nil {
		id := c.Identity
		if m.tokensOf != "" {
			id = m.tokensOf
		}
		tok := k8slease.NewTokens(id)
		var leases coordinationv1client.LeasesGetter = cs.CoordinationV1()
		if m.fenced {
			leases = tok.Leases(leases)
		}
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock: &resourcelock.LeaseLock{LeaseMeta: metav1.ObjectMeta{Namespace: "default", Name: "my-controller"}, Client: leases,
				LockConfig: resourcelock.ResourceLockConfig{Identity: c.Identity}},
			LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(lctx context.Context) {
					work.Add(1)
					defer work.Done()
					c.Leading("OnStartedLeading")
					defer c.Stopped("the end of OnStartedLeading's context")
					for n := 0; ; n++ {
						select {
						case <-lctx.Done():
							return
						case <-time.After(time.Second):
						}
						if m.writes > 0 && n >= m.writes {
							continue
						}
						var fence int64
						if m.fenced {
							if fence = tok.Token(k8slease.TokenAcquired); fence == 0 {
								continue // no token yet: a fenced store takes no write without one
							}
						}
						c.Write(lctx, "", fence)
					}
				},
				OnStoppedLeading: func() {},
			},
		})
		if err != nil {
			c.Trace("refused", err.Error())
			return
		}
		if err := k8slease.UseClock(le, c); err != nil {
			c.Trace("refused", err.Error())
			return
		}
		le.Run(ctx)
	}
}

func myConfig(fenced bool) k8slease.SweepConfig {
	cfg := k8slease.SweepConfig{Name: "vclient:my-controller", Client: &myController{}, Timing: &myTiming, Seeds: 50,
		Regressions: "testdata/user-regressions"}
	if fenced {
		cfg.Name, cfg.Client, cfg.Fenced, cfg.Tokens = "vclient:my-controller-fenced", &myController{fenced: true}, true, model.GrantTokens
	}
	return cfg
}

// TestMyControllerFenced: fenced, the controller is clean under the
// profile -profile names (pauses by default).
func TestMyControllerFenced(t *testing.T) {
	k8slease.Sweep(t, myConfig(true))
}

// TestMyControllerUnfenced: unfenced, under pauses, the sweep finds the
// zombie write (its term-context write the store applied after the Lease
// moved on), shrinks it without touching the controller's own timing,
// and saves it with a story told of this controller.
func TestMyControllerUnfenced(t *testing.T) {
	cfg := myConfig(false)
	cfg.Profile, cfg.Want, cfg.Seeds = "pause", k8slease.WantViolation, 100
	cfg.FailFast, cfg.MaxSaved = true, 1
	r := k8slease.Sweep(t, cfg)
	if r.Replayed != nil || len(r.Failures) == 0 {
		return
	}
	s := r.Failures[0].Saved
	if s == nil {
		t.Fatalf("not saved: %v", r.Failures[0].SaveErr)
	}
	saved, err := k8slease.ReplayScenario(t, cfg, s.Scenario) // the shrunk scenario, as saved
	if err != nil {
		t.Fatal(err)
	}
	sc := saved.Scenario
	if sc.TTL != myTiming.LeaseDuration || sc.Holders[0].Timeout != myTiming.RenewDeadline || sc.Holders[0].RenewEvery != myTiming.RetryPeriod {
		t.Errorf("the saved scenario's timing is %d/%d/%d ms, not the controller's own", sc.TTL, sc.Holders[0].Timeout, sc.Holders[0].RenewEvery)
	}
	if !slices.Contains(saved.Violated, checker.SingleWriterPerFence) && !slices.Contains(saved.Violated, checker.StaleWrite) {
		t.Errorf("the saved failure violates %v", saved.Violated)
	}
	story, err := os.ReadFile(s.Story)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## In Kubernetes terms", "with its own timing", "— a zombie write.", "`k8slease.Regressions`", "-k8slease.scenario FILE",
		"- timing: `LeaseDuration=15s`, `RenewDeadline=10s`, `RetryPeriod=2s` — the client's own (`SweepConfig.Timing` \"mine\")", "- writes: no token"} {
		if !strings.Contains(string(story), want) {
			t.Errorf("the saved story lacks %q:\n%s", want, story)
		}
	}
	// The reference holder's settings, which this controller never had.
	for _, not := range []string{"acquire backoff", "margin", "It exits 1"} {
		if strings.Contains(string(story), not) {
			t.Errorf("the saved story tells %q:\n%s", not, story)
		}
	}
}

// TestMyControllerRegressions replays the failures kept in
// testdata/user-regressions.
func TestMyControllerRegressions(t *testing.T) {
	k8slease.Regressions(t, myConfig(false))
}

// TestMyControllerTimingKept: a scenario whose LeaseDuration is not the
// controller's own is refused rather than judged as if the controller had
// run with it — the refusal that keeps the shrinker's edits off the timing;
// the same file with the controller's timing replays (the regression).
func TestMyControllerTimingKept(t *testing.T) {
	const file = "testdata/user-regressions/zombie-write.scenario.json"
	cfg := myConfig(false)
	r, err := k8slease.ReplayScenario(t, cfg, file)
	if err != nil {
		t.Fatalf("the controller's own timing: %v", err)
	}
	if r.Unexpected != nil || len(r.Violated) == 0 {
		t.Errorf("the kept failure replays violating %v: %v", r.Violated, r.Unexpected)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var sc map[string]any // a scenario file is JSON: its "ttl" is LeaseDuration
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&sc); err != nil {
		t.Fatal(err)
	}
	ttl, err := sc["ttl"].(json.Number).Int64()
	if err != nil {
		t.Fatal(err)
	}
	sc["ttl"] = ttl / 2
	if b, err = json.Marshal(sc); err != nil {
		t.Fatal(err)
	}
	halved := filepath.Join(t.TempDir(), "halved.scenario.json")
	if err := os.WriteFile(halved, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = k8slease.ReplayScenario(t, cfg, halved)
	if err == nil || !strings.Contains(err.Error(), "reads no other") {
		t.Errorf("a halved LeaseDuration: got %v, want a refusal", err)
	}
}

// TestMyControllerNothingWrittenIsAnError: a fenced controller that never
// has a token (its tokens learned for another identity) elects and never
// writes: the sweep is an error naming why, not a pass — the summary
// counts its grants and its writes, none.
func TestMyControllerNothingWrittenIsAnError(t *testing.T) {
	cfg := myConfig(true)
	cfg.Client = &myController{fenced: true, tokensOf: "someone-else"}
	cfg.Want, cfg.Seeds = k8slease.WantResult, 10
	r := k8slease.Sweep(t, cfg)
	err := r.Summary.Unexercised()
	if err == nil || r.Summary.Writes != 0 || r.Summary.Grants == 0 || !strings.Contains(err.Error(), "no write") {
		t.Fatalf("%d grants, %d writes: %v; want an error naming no write", r.Summary.Grants, r.Summary.Writes, err)
	}
	if !strings.Contains(r.Summary.String(), "ERROR: ") {
		t.Errorf("the summary does not end in an error:\n%s", r.Summary)
	}
	t.Log(err)
}

// TestMyControllerFaultsNeverInjected: a controller that writes once a
// term under the pause profile: the pauses are armed for a write that
// never comes (no takeover follows), so none strikes — an error naming
// the kind, though the sweep elected and wrote.
func TestMyControllerFaultsNeverInjected(t *testing.T) {
	cfg := myConfig(true)
	cfg.Client = &myController{fenced: true, writes: 1}
	cfg.Profile, cfg.Want, cfg.Seeds = "pause", k8slease.WantResult, 10
	r := k8slease.Sweep(t, cfg)
	err := r.Summary.Unexercised()
	if err == nil || r.Summary.Writes == 0 || r.Summary.Faults["pause"] != 0 || r.Summary.NotInjected["pause"] == 0 ||
		!strings.Contains(err.Error(), "pause") {
		t.Fatalf("%d writes, pauses injected %d, drawn and never struck %d: %v; want an error naming the pauses",
			r.Summary.Writes, r.Summary.Faults["pause"], r.Summary.NotInjected["pause"], err)
	}
	t.Log(err)
}

// TestMyControllerAudit is a controller author's audit of the verdicts,
// seed by seed, in public names only: every seed's judged run (OnSeed) is
// held against the store's record — a write the store accepted from an
// owner after the Lease was granted to another — and a seed whose record
// shows one while its verdict passed is a miss. Then the first such seed's
// trace, on demand: a sweep of that one seed (FirstSeed).
func TestMyControllerAudit(t *testing.T) {
	cfg := myConfig(false)
	cfg.Profile, cfg.Want, cfg.Seeds, cfg.MaxSaved = "pause", k8slease.WantResult, 100, 1
	var seeds, stale, misses int
	var first uint64
	cfg.OnSeed = func(o *k8slease.Outcome) error {
		seeds++
		w := storeStaleWrite(o.Store)
		if w == nil {
			return nil
		}
		stale++
		if first == 0 {
			first = o.Seed
		}
		if len(o.Violated) == 0 {
			misses++
			t.Errorf("seed %d: the store accepted %s's write at t=%d after the Lease moved on, and the seed passed", o.Seed, w.Owner, w.Call)
		}
		return nil
	}
	k8slease.Sweep(t, cfg)
	t.Logf("%d seeds: %d with a stale write in the store's record, %d missed", seeds, stale, misses)
	if stale == 0 {
		t.Fatalf("no stale write in %d seeds of pauses: the audit exercised nothing", seeds)
	}

	one := myConfig(false)
	one.Profile, one.Want, one.FirstSeed, one.Seeds, one.MaxSaved = "pause", k8slease.WantResult, first, 1, 1
	var trace string
	one.OnSeed = func(o *k8slease.Outcome) error {
		if o.Seed != first {
			t.Errorf("seed %d ran, want %d", o.Seed, first)
		}
		trace = o.Trace()
		return nil
	}
	k8slease.Sweep(t, one)
	if !strings.Contains(trace, "paused") || !strings.Contains(trace, "write") {
		t.Errorf("seed %d's trace tells no pause and no write:\n%s", first, trace)
	}
}

// storeStaleWrite is the first write a store's record shows accepted from
// an owner after the Lease was granted to another (and not released
// since), or nil.
func storeStaleWrite(store *model.History) *model.Op {
	if store == nil {
		return nil
	}
	holder := ""
	for i := range store.Ops {
		op := &store.Ops[i]
		switch {
		case !op.OK:
		case op.Kind == model.Acquire:
			holder = op.Owner
		case op.Kind == model.Release:
			holder = ""
		case op.Kind == model.Write && holder != "" && op.Owner != holder:
			return op
		}
	}
	return nil
}
