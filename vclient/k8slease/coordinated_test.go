package k8slease_test

// Coordinated leader election, as a controller author runs it: client-go's
// LeaseCandidate (leaderelection.NewCandidate) registers each candidate
// with its versions, and a coordinated LeaderElector renews the Lease the
// API server's coordinating controller hands it — unmodified, against the
// sweep's API server, which serves LeaseCandidates and runs the controller.
//
//	go test -run 'TestCoordinated' -seeds 1000 -v

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"

	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/vclient"
	"github.com/leasecheck/leasecheck/vclient/k8slease"
)

// candidateVersions are each candidate's binary and emulation versions: h3
// emulates the oldest, so OldestEmulationVersion prefers it, then h2.
var candidateVersions = map[string][2]string{
	"h1": {"1.35.0", "1.35.0"},
	"h2": {"1.35.0", "1.34.0"},
	"h3": {"1.34.0", "1.34.0"},
}

// coordinatedController is a coordinated candidate. Correct, it writes once
// a second while its elector says it leads, under the term's context;
// fenced, each write presents the resourceVersion of the Lease it last
// read or wrote while holding it (TokenHeld: a coordinated elector never
// takes the Lease itself, so there is no acquiring update of its own to
// read). Naive, once it led it keeps writing after losing the Lease (its
// one writer, started at its first term, runs under the process's
// context), though its belief ends with the term.
type coordinatedController struct {
	fenced, naive bool
	// deposed counts the terms that ended while the candidate ran on (a
	// preemption, or a renewal that failed): the path under test.
	deposed atomic.Int64
}

// client-go's informers and transport log through the global klog: quiet.
func init() { klog.SetLogger(logr.Discard()) }

func (m *coordinatedController) Use(r *rand.Rand) (undo func()) { return k8slease.UseJitter(r) }

func (m *coordinatedController) Start(ctx context.Context, c *vclient.Candidate) {
	ctx = klog.NewContext(ctx, logr.Discard())
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: "http://kube-apiserver.invalid", Transport: c.Transport(), Timeout: 10 * time.Second})
	if err != nil {
		c.Trace("refused", err.Error())
		return
	}
	v := candidateVersions[c.Node]
	lc, informers, err := leaderelection.NewCandidate(cs, "default", c.Identity, "coordinated", v[0], v[1], coordinationv1.OldestEmulationVersion)
	if err != nil {
		c.Trace("refused", err.Error())
		return
	}
	var work sync.WaitGroup
	defer work.Wait()
	var writing atomic.Bool // the naive candidate's one writer is running
	work.Go(func() {
		lc.Run(ctx)
		// Start returns once every goroutine it started has: the
		// candidate's informers too, which Run leaves running.
		if f, ok := informers.(interface{ Shutdown() }); ok {
			f.Shutdown()
		}
	})
	for ctx.Err() == nil {
		tok := k8slease.NewTokens(c.Identity)
		var leases coordinationv1client.LeasesGetter = cs.CoordinationV1()
		if m.fenced {
			leases = tok.Leases(leases)
		}
		var le *leaderelection.LeaderElector
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock: &resourcelock.LeaseLock{LeaseMeta: metav1.ObjectMeta{Namespace: "default", Name: "coordinated"}, Client: leases,
				LockConfig: resourcelock.ResourceLockConfig{Identity: c.Identity}},
			LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
			Coordinated: true,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(term context.Context) {
					c.Leading("OnStartedLeading")
					defer c.Stopped("the end of OnStartedLeading's context")
					if m.naive {
						// One writer, from its first term on, under the
						// process's context: it outlives the term.
						if !writing.Swap(true) {
							work.Go(func() { m.write(ctx, c, nil, nil) })
						}
						<-term.Done()
						return
					}
					work.Add(1)
					defer work.Done()
					m.write(term, c, le.IsLeader, tok)
				},
				OnStoppedLeading: func() {
					if ctx.Err() == nil {
						m.deposed.Add(1)
					}
				},
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

// write writes once a second until ctx ends: while leading says so (nil:
// always), fenced by tok's TokenHeld when fenced.
func (m *coordinatedController) write(ctx context.Context, c *vclient.Candidate, leading func() bool, tok *k8slease.Tokens) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		if leading != nil && !leading() {
			continue
		}
		var fence int64
		if m.fenced {
			if fence = tok.Token(k8slease.TokenHeld); fence == 0 {
				continue
			}
		}
		c.Write(ctx, "", fence)
	}
}

func coordinatedConfig(name string, m *coordinatedController, p k8slease.Profile) k8slease.SweepConfig {
	cfg := k8slease.SweepConfig{Name: "vclient:" + name, Client: m, Timing: &myTiming, Seeds: 50, Profile: p,
		MinReplicas: 3, MaxReplicas: 3}
	if m.fenced {
		cfg.Fenced, cfg.Tokens = true, model.OrderedTokens
	}
	return cfg
}

// TestCoordinatedClean: three coordinated candidates, no faults: clean, and
// the preemption path ran — a candidate that registers after another was
// elected, and is better, takes the Lease over once the holder's term ends.
func TestCoordinatedClean(t *testing.T) {
	m := &coordinatedController{}
	r := k8slease.Sweep(t, coordinatedConfig("coordinated", m, "none"))
	if r.Summary.Seeds > 0 && m.deposed.Load() == 0 {
		t.Errorf("over %d seeds no holder was deposed: the preemption path never ran", r.Summary.Seeds)
	}
}

// TestCoordinatedFencedClean: fenced, under pauses anywhere (a holder
// paused while the controller preempts it included): clean.
func TestCoordinatedFencedClean(t *testing.T) {
	m := &coordinatedController{fenced: true}
	k8slease.Sweep(t, coordinatedConfig("coordinated-fenced", m, "pause-any"))
}

// TestCoordinatedNaiveCaught: a holder that keeps writing after it was
// preempted is caught with no fault at all.
func TestCoordinatedNaiveCaught(t *testing.T) {
	cfg := coordinatedConfig("coordinated-naive", &coordinatedController{naive: true}, "none")
	cfg.Want, cfg.MaxSaved = k8slease.WantViolation, 1
	k8slease.Sweep(t, cfg)
}

// TestCoordinatedUnfencedPausesCaught: guarded by IsLeader only, a holder
// paused across its preemption writes after the Lease moved on: caught.
func TestCoordinatedUnfencedPausesCaught(t *testing.T) {
	cfg := coordinatedConfig("coordinated-unfenced", &coordinatedController{}, "pause")
	cfg.Want, cfg.MaxSaved = k8slease.WantViolation, 1
	r := k8slease.Sweep(t, cfg)
	for _, f := range r.Failures {
		if strings.Contains(f.Outcome.Trace(), "coordinated election") {
			return
		}
		t.Errorf("seed %d: no step of the coordinating controller in its trace", f.Seed)
	}
}

// TestCoordinatedRegressions replays the kept failure of the naive
// coordinated candidate (preempted, it wrote on): the same violations, the
// same history byte for byte — the coordinating controller's steps are the
// harness's, deterministic per seed.
func TestCoordinatedRegressions(t *testing.T) {
	cfg := coordinatedConfig("coordinated-naive", &coordinatedController{naive: true}, "none")
	cfg.Regressions = "testdata/coordinated-regressions"
	k8slease.Regressions(t, cfg)
}

// preemptedWhilePaused is a scenario of the preemption path under a
// fault: h2 is elected, h3 — a better candidate — registers at t=8s and the
// controller marks h2's term ended, while h2 is paused (from its first
// write after t=7s, for 30s): it sees neither the mark nor its Lease run
// out and go to h3, and its held write goes out when it resumes.
const preemptedWhilePaused = `{
  "version": 1, "seed": 1, "semantics": %q, "key": "lease", "ttl": 15000, "rho_ppm": 0, "horizon": 60000,
  "network": {"min_delay": 0, "max_delay": 2},
  "holders": [
    {"name": "h2", "work": [{"work": 500, "writes": 1}], "timeout": 10000, "retry_max": 8824, "renew_every": 2000},
    {"name": "h3", "start": 8000, "work": [{"work": 500, "writes": 1}], "timeout": 10000, "retry_max": 8824, "renew_every": 2000}
  ],
  "faults": [{"kind": "pause", "target": "h2", "at": 7000, "duration": 30000}],
  "implementation": %q, "fault_kinds": ["pause"], "expect": %s
}`

// TestCoordinatedPreemptedWhilePaused: the holder paused across its own
// preemption. Guarded by IsLeader only, its held write lands after the
// controller handed the Lease to h3 (a coordinated candidate never takes
// the Lease itself): caught. Fenced (TokenHeld), the store refuses it:
// clean. The controller's steps themselves are internal/k8ssweep's
// TestCoordinatingController.
func TestCoordinatedPreemptedWhilePaused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		m      *coordinatedController
		sem    string
		expect string
	}{
		{"coordinated-unfenced", &coordinatedController{}, "seed", `["linearizable", "single-writer-per-fence"]`},
		{"coordinated-fenced", &coordinatedController{fenced: true}, "fenced-storage", `[]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := coordinatedConfig(tc.name, tc.m, "pause")
			file := filepath.Join(t.TempDir(), "preempted.scenario.json")
			if err := os.WriteFile(file, fmt.Appendf(nil, preemptedWhilePaused, tc.sem, cfg.Name, tc.expect), 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := k8slease.ReplayScenario(t, cfg, file)
			if err != nil {
				t.Fatal(err)
			}
			if r.Unexpected != nil {
				t.Errorf("%v\n%s", r.Unexpected, r.Report)
			}
			if tc.m.fenced {
				return
			}
			for _, want := range []string{"held by h3", "during pause(h2)"} {
				if !strings.Contains(r.Report, want) {
					t.Errorf("the run's report lacks %q:\n%s", want, r.Report)
				}
			}
		})
	}
}
