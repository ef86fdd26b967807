package main

import (
	"strings"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/internal/servers"
	"github.com/leasecheck/leasecheck/internal/servers/serverstest"
)

// needInstalledEtcd: the cluster's members are the installed etcd server.
func needInstalledEtcd(t *testing.T) {
	if _, err := servers.InstalledEtcd(); err != nil {
		serverstest.SkipOrFail(t, "%v", err)
	}
}

// TestVerifyHoldingRecipes: verify starts the server of each background-
// renewing recipe itself, runs its rounds under the faults that matter
// for it, judges the library's own loss signal after them, exits as the
// recipe's classification says — 0 for the recipe with its writes fenced
// by the library's token (nothing found), 1 for the same recipe with a
// plain write (the documented hazard of an unfenced lock: a holder paused
// past its TTL writes after the lock moved on) — and leaves no process
// behind. Not parallel: no other test's servers may run beside it.
func TestVerifyHoldingRecipes(t *testing.T) {
	if testing.Short() {
		t.Skip("real rounds on four servers, half a minute each")
	}
	for _, c := range []struct {
		spec, faults string
		need         func(*testing.T)
		code         int
	}{
		// One command-line case per server and per exit code: each
		// recipe's fenced and unfenced variants are swept in their own
		// packages (internal/impl/etcd's TestElection*, internal/impl/zookeeper's
		// TestLock*), which run beside the others; this test runs alone.
		{"etcd-election-procs", "pause,partition,delay,crash", func(*testing.T) {}, exitOK},
		{"zk-lock-unfenced", "pause", needZooKeeper, exitViolation},
		{"etcd-election-cluster", "pause,partition,member-isolate,member-pause,member-crash", needInstalledEtcd, exitOK},
		// etcd's Mutex on the same session, each owner's client a child
		// process of the binary (SIGSTOP for a pause): fenced by IsOwner
		// nothing is found; with a plain Put the paused holder's write is.
		{"etcd-session-mutex-procs", "pause,partition,crash", func(*testing.T) {}, exitOK},
		{"etcd-session-mutex-unfenced-procs", "pause", func(*testing.T) {}, exitViolation},
	} {
		t.Run(c.spec, func(t *testing.T) {
			c.need(t)
			// Its own temporary directory: the packages testing beside
			// this one start etcd clusters of their own, whose data
			// directories are not this verify's to clean up.
			t.Setenv("TMPDIR", t.TempDir())
			dirs := clusterDirs(t)
			code, out, errOut, took := verify(t, "--backend", c.spec, "--faults", c.faults, "--duration", "8s", "--shrink-for", "0", "--progress=false")
			t.Logf("exit %d in %v\n%s%s", code, took.Round(time.Millisecond), out, errOut)
			if code != c.code {
				t.Fatalf("exit %d, want %d", code, c.code)
			}
			if !strings.Contains(out, "loss-signal                holds") {
				t.Errorf("no loss-signal verdict from the library's own signal, or not held")
			}
			if strings.HasSuffix(c.spec, "-procs") && c.code == exitOK {
				// Its clients are processes: the pause is SIGSTOP, the
				// kernel's record is what is excused, and the partition
				// round cuts one owner while its process runs.
				for _, w := range []string{"its client process stopped (SIGSTOP)", "the kernel reported A's process stopped", "loss-signal holds (partition)", "loss-signal over the rounds: "} {
					if !strings.Contains(out+errOut, w) {
						t.Errorf("output does not say %q", w)
					}
				}
			}
			// The paused holder's late write shows as its own accepted write
			// or as a read that returns it.
			if c.code == exitViolation && !strings.Contains(errOut, "VIOLATION linearizable") {
				t.Errorf("no linearizable violation: the former holder's write after the lock moved on was not caught")
			}
			assertNoServersLeft(t, dirs)
		})
	}
}

// TestVerifyZkLockPartitionSignal: verify's own judge of go-zookeeper's
// lock under a partition — loss-signal's scripted round cuts A's
// connection while its process runs, past its TTL, and B is granted.
// Signalled on disconnection (zk-lock-procs, Curator's policy) the loss
// comes before the server's expiry and the property holds; signalled on
// StateExpired only (zk-lock-expiry-procs, what zk-lock did before), A's
// library says nothing while it is cut off and verify exits 1.
func TestVerifyZkLockPartitionSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("real rounds on a ZooKeeper, half a minute each")
	}
	for _, c := range []struct {
		spec string
		code int
		want string
	}{
		{"zk-lock-procs", exitOK, "loss-signal holds (partition)"},
		{"zk-lock-expiry-procs", exitViolation, "A's library never said the lock was lost"},
	} {
		t.Run(c.spec, func(t *testing.T) {
			needZooKeeper(t)
			t.Setenv("TMPDIR", t.TempDir())
			dirs := clusterDirs(t)
			code, out, errOut, took := verify(t, "--backend", c.spec, "--faults", "partition", "--duration", "8s", "--shrink-for", "0", "--progress=false")
			t.Logf("exit %d in %v\n%s%s", code, took.Round(time.Millisecond), out, errOut)
			if code != c.code {
				t.Fatalf("exit %d, want %d", code, c.code)
			}
			if !strings.Contains(out+errOut, c.want) {
				t.Errorf("output does not say %q", c.want)
			}
			assertNoServersLeft(t, dirs)
		})
	}
}
