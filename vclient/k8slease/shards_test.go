package k8slease_test

// Several Leases in one process: a controller author's sharded controller,
// written against the public doors only. Each candidate runs two of
// client-go's LeaderElectors, one per shard ("default/shard-a" and
// "default/shard-b"), each writing from its OnStartedLeading through
// Candidate.Lease(shard): the sweep judges each shard on its own key.
//
//	go test -run 'TestShards' -seeds 1000 -v

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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

	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/vclient"
	"github.com/leasecheck/leasecheck/vclient/k8slease"
)

var shards = []string{"default/shard-a", "default/shard-b"}

// shardedController holds one Lease per shard. Correct, each shard writes
// once a second while its elector says it leads (IsLeader), under the
// context OnStartedLeading gave it; fenced, each write presents the
// resourceVersion of the update that made it that shard's holder. Naive,
// a shard that once led keeps writing after it lost the Lease (its work
// runs under the process's context, not the term's), though its belief
// ends with the term.
type shardedController struct {
	fenced, naive bool
	// writers is which shards write (nil: all).
	writers []string
}

func (m *shardedController) Use(r *rand.Rand) (undo func()) { return k8slease.UseJitter(r) }

func (m *shardedController) Start(ctx context.Context, c *vclient.Candidate) {
	ctx = klog.NewContext(ctx, logr.Discard())
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: "http://kube-apiserver.invalid", Transport: c.Transport(), Timeout: 10 * time.Second})
	if err != nil {
		c.Trace("refused", err.Error())
		return
	}
	var shardsRun sync.WaitGroup
	for _, shard := range shards {
		shardsRun.Go(func() { m.shard(ctx, c, cs, shard) })
	}
	shardsRun.Wait()
}

// shard runs one shard's elections until ctx ends.
func (m *shardedController) shard(ctx context.Context, c *vclient.Candidate, cs kubernetes.Interface, shard string) {
	lease := c.Lease(shard)
	ns, name, _ := strings.Cut(shard, "/")
	writes := m.writers == nil || slices.Contains(m.writers, shard)
	var writing atomic.Bool // the naive shard's one writer is running
	var work sync.WaitGroup
	defer work.Wait()
	for ctx.Err() == nil {
		tok := k8slease.NewTokens(c.Identity)
		var leases coordinationv1client.LeasesGetter = cs.CoordinationV1()
		if m.fenced {
			leases = tok.Leases(leases)
		}
		var le *leaderelection.LeaderElector
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Name: shard,
			Lock: &resourcelock.LeaseLock{LeaseMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Client: leases,
				LockConfig: resourcelock.ResourceLockConfig{Identity: c.Identity}},
			LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(term context.Context) {
					lease.Leading("OnStartedLeading")
					defer lease.Stopped("the end of OnStartedLeading's context")
					switch {
					case !writes:
						<-term.Done()
					case m.naive:
						// One writer a shard, from its first term on, under
						// the process's context: it outlives the term.
						if !writing.Swap(true) {
							work.Go(func() { m.write(ctx, lease, nil, nil) })
						}
						<-term.Done()
					default:
						work.Add(1)
						defer work.Done()
						m.write(term, lease, le.IsLeader, tok)
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

// write writes under lease once a second until ctx ends: while leading
// says so (nil: always), fenced by tok's TokenAcquired when fenced.
func (m *shardedController) write(ctx context.Context, lease *vclient.Lease, leading func() bool, tok *k8slease.Tokens) {
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
			if fence = tok.Token(k8slease.TokenAcquired); fence == 0 {
				continue
			}
		}
		lease.Write(ctx, "", fence)
	}
}

func shardConfig(name string, m *shardedController, p k8slease.Profile) k8slease.SweepConfig {
	cfg := k8slease.SweepConfig{Name: "vclient:" + name, Client: m, Timing: &myTiming, Seeds: 50, Profile: p, Leases: shards}
	if m.fenced {
		cfg.Fenced, cfg.Tokens = true, model.GrantTokens
	}
	return cfg
}

// TestShardsClean: two shards, both writing, no faults: clean, both judged
// (both shards' Leases granted in every seed); and with one writing shard,
// what used to fail when the history held only the first Lease created.
func TestShardsClean(t *testing.T) {
	for _, tc := range []struct {
		name    string
		writers []string
	}{{"both", nil}, {"one", shards[1:]}} {
		t.Run(tc.name, func(t *testing.T) {
			r := k8slease.Sweep(t, shardConfig("shards-"+tc.name, &shardedController{writers: tc.writers}, "none"))
			if r.Summary.Seeds > 0 && r.Grants < 2*r.Summary.Seeds {
				t.Errorf("%d grants over %d seeds: each seed should grant both shards' Leases", r.Grants, r.Summary.Seeds)
			}
		})
	}
}

// TestShardsFencedClean: fenced per shard, under pauses: clean — each
// shard's resource keeps its own highest token.
func TestShardsFencedClean(t *testing.T) {
	k8slease.Sweep(t, shardConfig("shards-fenced", &shardedController{fenced: true}, "pause"))
}

// TestShardsNaiveCaught: a shard that keeps writing after it lost its
// Lease is caught under pauses, on that shard's key, in that (candidate,
// Lease) pair's words.
func TestShardsNaiveCaught(t *testing.T) {
	cfg := shardConfig("shards-naive", &shardedController{naive: true}, "pause")
	cfg.Want, cfg.MaxSaved = k8slease.WantViolation, 1
	r := k8slease.Sweep(t, cfg)
	if len(r.Failures) == 0 {
		return // Sweep has failed the test already
	}
	o := r.Failures[0].Outcome
	keys := map[string]bool{}
	for _, op := range o.History.Ops {
		keys[op.Key] = true
		if !strings.Contains(op.Process, "@default/shard-") {
			t.Errorf("history line %d: process %q is not a (candidate, Lease) pair's", op.Line, op.Process)
			break
		}
	}
	if !keys[shards[0]] || !keys[shards[1]] || len(keys) != 2 {
		t.Errorf("the history's keys are %v, want the two shards'", keys)
	}
}

// TestShardsRegressions replays the kept failure of the naive sharded
// controller: the same violations on the same shard, the same history
// byte for byte.
func TestShardsRegressions(t *testing.T) {
	cfg := shardConfig("shards-naive", &shardedController{naive: true}, "pause")
	cfg.Regressions = "testdata/shard-regressions"
	k8slease.Regressions(t, cfg)
}

// TestShardsDeterministic: the same seeds swept twice give the same sweep —
// operations, grants, failing seeds — though each candidate's two shards
// write at the same instants from two goroutines.
func TestShardsDeterministic(t *testing.T) {
	sweep := func() (int64, int, []uint64) {
		cfg := shardConfig("shards-naive", &shardedController{naive: true}, "pause")
		cfg.Want, cfg.Seeds, cfg.MaxSaved = k8slease.WantResult, 20, 1
		r := k8slease.Sweep(t, cfg)
		return r.Summary.Ops, r.Grants, r.Summary.FailedSeeds
	}
	ops1, g1, f1 := sweep()
	ops2, g2, f2 := sweep()
	if ops1 != ops2 || g1 != g2 || !slices.Equal(f1, f2) || ops1 == 0 {
		t.Errorf("two sweeps of the same seeds: %d ops, %d grants, failing %v; then %d, %d, %v", ops1, g1, f1, ops2, g2, f2)
	}
}
