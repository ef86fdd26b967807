package realrun_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/impl/memstore"
	"github.com/leasecheck/leasecheck/internal/realrun"
	"github.com/leasecheck/leasecheck/model"
)

// fakeCluster is a realrun.Cluster that logs what the harness asked of it
// and elects the next member when its leader is cut off or stopped: an
// independent account of what the cluster faults did.
type fakeCluster struct {
	mu     sync.Mutex
	leader int
	calls  []string
}

func (c *fakeCluster) Members() []string { return []string{"m1", "m2", "m3"} }

func (c *fakeCluster) Leader(context.Context) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.Members()[c.leader]
}

func (c *fakeCluster) do(call, member string, on bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, fmt.Sprintf("%s(%s,%v)", call, member, on))
	if on && member == c.Members()[c.leader] && call != "bridge" {
		c.leader = (c.leader + 1) % 3 // the others elect one of themselves
	}
	return nil
}

func (c *fakeCluster) Isolate(m string, on bool) error { return c.do("isolate", m, on) }
func (c *fakeCluster) Bridge(m string, on bool) error  { return c.do("bridge", m, on) }
func (c *fakeCluster) DelayPeers(m string, d time.Duration) error {
	return c.do("delay", m, d > 0)
}
func (c *fakeCluster) Stop(m string) error { return c.do("stop", m, true) }
func (c *fakeCluster) Cont(m string) error { return c.do("cont", m, false) }
func (c *fakeCluster) Restart(_ context.Context, m string, down time.Duration) error {
	time.Sleep(down)
	return c.do("restart", m, true)
}
func (c *fakeCluster) Settle(context.Context) error { return c.do("settle", "", false) }

// AwaitRejoined (realrun.Rejoiner) records when the runner waited for the
// cluster to be whole again.
func (c *fakeCluster) AwaitRejoined(context.Context) error { return c.do("rejoined", "", false) }

func clusterRun(t *testing.T, cl realrun.Cluster, restart bool, fs ...faults.Fault) *realrun.Result {
	t.Helper()
	tg := inProcess(memstore.New(), nil)
	tg.Info.LeasesRestart, tg.Info.RestartGrace = restart, 100*time.Millisecond
	tg.Cluster = cl
	sc := realrun.Workload(tg, realrun.Config{Seed: 3, Duration: 3 * time.Second, TTL: time.Second})
	sc.Faults = append(sc.Faults, fs...)
	res, err := realrun.RunScenario(context.Background(), tg, sc, realrun.Options{TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func records(res *realrun.Result, kind string) []model.FaultRecord {
	var out []model.FaultRecord
	for _, f := range res.History.Faults {
		if f.Kind == kind {
			out = append(out, f)
		}
	}
	return out
}

// TestClusterFaults: a cluster fault strikes the member its target names
// when it falls due (the leader, a follower), is undone when it ends, and
// its record names the member and who led before and after; the next one
// waits until the cluster is whole again (Rejoiner); the leader
// records follow the leader; a leader change widens the expiry lateness —
// by at least a TTL and the grace, never the clock uncertainty — only for a
// backend that refreshes leases on one; the run starts from a
// settled cluster; and a target that is no cluster records the fault as
// not applied.
func TestClusterFaults(t *testing.T) {
	cl := &fakeCluster{}
	res := clusterRun(t, cl, true,
		faults.Fault{Kind: faults.MemberIsolate, Target: faults.Leader, At: 500, Duration: 500},
		faults.Fault{Kind: faults.MemberPause, Target: faults.Follower, At: 1500, Duration: 300})
	// Each fault's undo, then the wait for the cluster to be whole, before
	// the next one strikes.
	want := []string{"settle(,false)", "isolate(m1,true)", "isolate(m1,false)", "rejoined(,false)", "stop(m1,true)", "cont(m1,false)", "rejoined(,false)"}
	if got := strings.Join(cl.calls, " "); got != strings.Join(want, " ") {
		t.Errorf("calls %s; want %s", got, strings.Join(want, " "))
	}
	iso := records(res, string(faults.MemberIsolate))
	if len(iso) != 1 || iso[0].Target != "m1" || !iso[0].HasEnd || !strings.Contains(iso[0].Detail, "m1 (the leader)") || !strings.Contains(iso[0].Detail, "m1 led before, m2 after") {
		t.Errorf("member-isolate records %+v", iso)
	}
	if p := records(res, string(faults.MemberPause)); len(p) != 1 || p[0].Target != "m1" || !strings.Contains(p[0].Detail, "m1 (a follower)") {
		t.Errorf("member-pause records %+v (m2 led, so the first follower is m1)", p)
	}
	ls := records(res, realrun.LeaderRecord)
	if len(ls) < 2 || ls[0].Target != "m1" || ls[1].Target != "m2" || ls[0].End > ls[1].Start {
		t.Errorf("leader records %+v; want m1, then m2", ls)
	}
	if res.Faults[faults.MemberIsolate] != 1 || res.Faults[faults.MemberPause] != 1 {
		t.Errorf("counted %v", res.Faults)
	}
	with := res.History.Header

	res = clusterRun(t, &fakeCluster{}, false,
		faults.Fault{Kind: faults.MemberIsolate, Target: faults.Leader, At: 500, Duration: 500})
	without := res.History.Header
	// µs: the TTL (1 s) and the grace (100 ms) at least, on top of the
	// backend's own lateness.
	if with.ExpiryLateness < without.ExpiryLateness+1_100_000 {
		t.Errorf("expiry lateness %dµs without lease refresh, %dµs with: a leader change must widen it by at least a TTL and the grace, for a backend that refreshes leases only", without.ExpiryLateness, with.ExpiryLateness)
	}
	if with.ClockUncertainty > without.ClockUncertainty+1000 { // 1 ms of calibration noise, far below the slack

		t.Errorf("clock uncertainty %dµs without lease refresh, %dµs with: a leader change is late freeing only, never clock uncertainty (it would excuse an early grant)", without.ClockUncertainty, with.ClockUncertainty)
	}

	tg := inProcess(memstore.New(), nil)
	sc := realrun.Workload(tg, realrun.Config{Seed: 3, Duration: 2 * time.Second, TTL: time.Second})
	sc.Faults = append(sc.Faults, faults.Fault{Kind: faults.MemberCrash, Target: faults.Leader, At: 300, Duration: 300})
	res, err := realrun.RunScenario(context.Background(), tg, sc, realrun.Options{TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if r := records(res, string(faults.MemberCrash)); len(r) != 1 || !r[0].Partial || !strings.Contains(r[0].Detail, "not a cluster") || res.Partial[faults.MemberCrash] != 1 {
		t.Errorf("a cluster fault on one server: records %+v, partial %v", r, res.Partial)
	}
}

// TestWorkloadClusterPartitions: on a cluster the workload's partition
// cuts the holder from every member, from the leader only or from a
// follower only, each drawn for some seed; on one server it always cuts
// it from the coordinator, and drawing the peer there takes no value from
// the seeded stream (the single server's workloads keep their bytes: the
// same as a cluster's but for the partition's peer).
func TestWorkloadClusterPartitions(t *testing.T) {
	single := inProcess(memstore.New(), nil)
	cl := inProcess(memstore.New(), nil)
	cl.Cluster = &fakeCluster{}
	seen := map[string]int{}
	for seed := uint64(1); seed <= 40; seed++ {
		cfg := realrun.Config{Seed: seed, Faults: []faults.Kind{faults.Pause, faults.Partition, faults.MemberPause}}
		a, b := realrun.Workload(single, cfg), realrun.Workload(cl, cfg)
		var pa, pb *faults.Fault
		for i := range a.Faults {
			if a.Faults[i].Kind == faults.Partition {
				pa = &a.Faults[i]
			}
		}
		for i := range b.Faults {
			if b.Faults[i].Kind == faults.Partition {
				pb = &b.Faults[i]
			}
		}
		if pa == nil || pb == nil {
			t.Fatalf("seed %d: no partition drawn", seed)
		}
		if pa.Peer != faults.Coordinator {
			t.Errorf("seed %d: a single server's partition cuts the holder from %q; want the coordinator", seed, pa.Peer)
		}
		seen[pb.Peer]++
		if pb.Target != pa.Target || pb.At != pa.At || pb.Duration != pa.Duration {
			t.Errorf("seed %d: the cluster's partition %v and the server's %v differ beyond the peer", seed, pb, pa)
		}
	}
	for _, p := range []string{faults.Coordinator, faults.Leader, faults.Follower} {
		if seen[p] == 0 {
			t.Errorf("no cluster partition from %q in 40 seeds (drawn: %v)", p, seen)
		}
	}
}
