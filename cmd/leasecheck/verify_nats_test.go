package main

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/servers/serverstest"
)

// TestVerifyNATS: verify starts its nats-server(s) itself, judges the
// fenced JetStream KV lock correct under every fault that applies (exit
// 0: one server and a 3-server cluster), catches the plain Put under a
// holder pause (exit 1), and leaves no server goroutine and no store
// directory behind.
func TestVerifyNATS(t *testing.T) {
	serverstest.Full(t, "real rounds on a real server")
	t.Parallel()
	before := natsDirs(t)
	verifyAll(t, "nats-kv", holderAndNet)
	code, out, errOut, took := verify(t, "--backend", "nats-kv-unfenced", "--faults", "pause", "--duration", "8s", "--shrink-for", "0")
	t.Logf("nats-kv-unfenced: exit %d in %v\n%s%s", code, took.Round(time.Millisecond), out, errOut)
	if code != exitViolation {
		t.Errorf("nats-kv-unfenced: exit %d, want %d", code, exitViolation)
	}
	if !strings.Contains(errOut, "'s write was accepted, but the lease was held by") {
		t.Errorf("nats-kv-unfenced: no violation tells of a former holder's write accepted after the lock moved on")
	}
	verifyAll(t, "nats-kv-cluster", []faults.Kind{faults.Pause, faults.Partition, faults.Crash})
	if left := slices.DeleteFunc(natsDirs(t), func(d string) bool { return slices.Contains(before, d) }); len(left) > 0 {
		t.Errorf("store directories left behind: %v", left)
	}
	// Servers are in this process: their goroutines must be gone.
	deadline := time.Now().Add(5 * time.Second)
	for {
		buf := make([]byte, 1<<22)
		stacks := string(buf[:runtime.Stack(buf, true)])
		if !strings.Contains(stacks, "nats-io/nats-server") {
			break
		}
		if time.Now().After(deadline) {
			i := strings.Index(stacks, "nats-io/nats-server")
			t.Fatalf("a nats-server goroutine is still running after verify returned:\n%s", stacks[max(0, i-2000):min(len(stacks), i+500)])
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func natsDirs(t *testing.T) []string {
	ds, err := filepath.Glob(filepath.Join(os.TempDir(), "leasecheck-nats-*"))
	if err != nil {
		t.Fatal(err)
	}
	return ds
}
