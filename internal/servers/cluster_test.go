package servers_test

import (
	"context"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/leasecheck/leasecheck/internal/etcdmember"
	"github.com/leasecheck/leasecheck/internal/servers"
	"github.com/leasecheck/leasecheck/internal/servers/serverstest"
)

// TestEtcdCluster runs testEtcdCluster on the installed etcd (3.4).
func TestEtcdCluster(t *testing.T) {
	serverstest.Full(t, "real servers")
	prog, err := servers.InstalledEtcd()
	if err != nil {
		serverstest.SkipOrFail(t, "%v", err)
	}
	testEtcdCluster(t, prog, "3.4.")
}

// TestEtcd37Cluster runs testEtcdCluster on the embedded etcd 3.7 server,
// each member this test binary run as etcd-server (TestMain dispatches
// it): nothing to install, so never skipped.
func TestEtcd37Cluster(t *testing.T) {
	serverstest.Full(t, "real servers")
	prog, err := etcdmember.Program()
	if err != nil {
		t.Fatal(err)
	}
	testEtcdCluster(t, prog, "3.7.")
}

// testEtcdCluster starts a 3-member cluster of prog, checks that it is the
// version wanted, and checks each fault between servers against etcd's own
// view of it: an isolated leader is replaced by the majority and cannot
// commit; a renewal through an isolated follower fails; a bridge (one link
// cut) keeps the cluster whole; a follower restarted after writes it missed
// catches up; and Close leaves no process, port or directory behind.
func testEtcdCluster(t *testing.T, prog servers.EtcdProgram, version string) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	begin := time.Now()
	c, err := servers.StartEtcdClusterOf(ctx, prog, 3)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			c.Close()
		}
	}()
	t.Logf("3-member etcd %s cluster started in %v", c.Version, time.Since(begin).Round(time.Millisecond))
	if !strings.HasPrefix(c.Version, version) {
		t.Errorf("%s says it is etcd %s, want %s*", prog, c.Version, version)
	}
	leader, err := c.AwaitLeader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cli := func(i int) *clientv3.Client {
		k, err := clientv3.New(clientv3.Config{Endpoints: []string{c.Servers[i].Addr}, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { k.Close() })
		return k
	}
	put := func(i int, v string, within time.Duration) error {
		pctx, cancel := context.WithTimeout(ctx, within)
		defer cancel()
		_, err := cli(i).Put(pctx, "k", v)
		return err
	}
	get := func(i int, opts ...clientv3.OpOption) (string, error) {
		gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		r, err := cli(i).Get(gctx, "k", opts...)
		if err != nil || len(r.Kvs) == 0 {
			return "", err
		}
		return string(r.Kvs[0].Value), nil
	}
	if err := put(0, "v1", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if v, err := get(2); v != "v1" || err != nil {
		t.Fatalf("m3 reads %q, %v after m1 wrote v1", v, err)
	}

	// The leader isolated: the majority elects another; the old leader's
	// own writes cannot commit; its serializable reads answer stale.
	li := c.Index(leader)
	c.Isolate(leader, true)
	var next string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		for _, s := range c.Status(ctx, time.Second) {
			if s.Member != leader && s.Answered && s.Leader != "" && s.Leader != leader {
				next = s.Leader
			}
		}
		if next != "" {
			break
		}
	}
	if next == "" {
		t.Fatalf("the majority elected no new leader within 30s of isolating %s", leader)
	}
	ni := c.Index(next)
	if err := put(ni, "v2", 10*time.Second); err != nil {
		t.Fatalf("the majority's leader %s could not write: %v", next, err)
	}
	if err := put(li, "v3", 3*time.Second); err == nil {
		t.Errorf("the isolated old leader %s committed a write", leader)
	}
	if v, err := get(li, clientv3.WithSerializable()); err != nil || v != "v1" {
		t.Errorf("the isolated member's serializable read = %q, %v; want the stale v1", v, err)
	}
	c.Isolate(leader, false)
	if _, err := c.AwaitLeader(ctx); err != nil {
		t.Fatal(err)
	}
	if v, err := get(li); v != "v2" || err != nil {
		t.Errorf("healed %s reads %q, %v; want v2", leader, v, err)
	}

	// A follower isolated: the lease renewals it forwards to the leader
	// (plain HTTP, no raft header) are cut too.
	leader, err = c.AwaitLeader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	li = c.Index(leader)
	fo := (li + 1) % 3
	gctx, gcancel := context.WithTimeout(ctx, 5*time.Second)
	lease, err := cli(li).Grant(gctx, 30)
	gcancel()
	if err != nil {
		t.Fatal(err)
	}
	kctx, kcancel := context.WithTimeout(ctx, 5*time.Second)
	_, err = cli(fo).KeepAliveOnce(kctx, lease.ID)
	kcancel()
	if err != nil {
		t.Fatalf("renewal through follower %s before the cut: %v", c.Servers[fo].Member, err)
	}
	c.Isolate(c.Servers[fo].Member, true)
	kctx, kcancel = context.WithTimeout(ctx, 3*time.Second)
	_, err = cli(fo).KeepAliveOnce(kctx, lease.ID)
	kcancel()
	if err == nil {
		t.Errorf("a renewal through isolated follower %s reached the leader", c.Servers[fo].Member)
	}
	c.Isolate(c.Servers[fo].Member, false)

	// A bridge: the two followers cut from each other, the leader sees
	// both; the cluster stays whole (the followers' votes are refused while
	// they hear from the leader: CheckQuorum's leader lease).
	leader, err = c.AwaitLeader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	li = c.Index(leader)
	f1, f2 := (li+1)%3, (li+2)%3
	if err := c.Bridge(leader, true); err != nil {
		t.Fatal(err)
	}
	if err := put(f1, "v4", 15*time.Second); err != nil {
		t.Errorf("write through follower %s with only %s–%s cut: %v", c.Servers[f1].Member, c.Servers[f1].Member, c.Servers[f2].Member, err)
	}
	if v, err := get(f2); v != "v4" || err != nil {
		t.Errorf("%s across the bridge reads %q, %v; want v4", c.Servers[f2].Member, v, err)
	}
	c.Heal()

	// A follower restarted on its data after writes it missed.
	leader, err = c.AwaitLeader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fi := (c.Index(leader) + 1) % 3
	if err := c.Servers[fi].Kill(); err != nil {
		t.Fatal(err)
	}
	if err := put(c.Index(leader), "v5", 10*time.Second); err != nil {
		t.Fatalf("write with one follower down: %v", err)
	}
	if err := c.Servers[fi].Restart(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if v, err := get(fi); v != "v5" || err != nil {
		t.Errorf("restarted %s reads %q, %v; want v5", c.Servers[fi].Member, v, err)
	}

	var pids []int
	var addrs []string
	for _, m := range c.Servers {
		pids = append(pids, m.Pid())
		addrs = append(addrs, m.Addr, m.Peer.Addr())
	}
	dir := c.Dir()
	closed = true
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	assertGone(t, pids, addrs, dir)
}

// assertGone checks that every process in pids has exited, every address
// in addrs is free to listen on again, and dir is removed.
func assertGone(t *testing.T, pids []int, addrs []string, dir string) {
	t.Helper()
	for _, pid := range pids {
		if pid != 0 && syscall.Kill(pid, 0) == nil {
			t.Errorf("pid %d still runs after Close", pid)
			syscall.Kill(-pid, syscall.SIGKILL)
		}
	}
	for _, a := range addrs {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			t.Errorf("%s still taken after Close: %v", a, err)
			continue
		}
		ln.Close()
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s still exists after Close (%v)", dir, err)
	}
}
