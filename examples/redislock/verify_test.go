package redislock_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"example.com/leasecheck-examples/redislock"
	"github.com/leasecheck/leasecheck/leasetest/servers"
	"github.com/leasecheck/leasecheck/verify"
)

// TestVerifyCaught runs verify's entry point with the adapter — the code
// path of cmd/redislock-verify, whose main is that one call — against a
// real redis-server: a holder paused past its TTL, and one frozen with its
// clock (a suspended machine: on resume it believes it still holds the
// lock), both write after the lock moved on. Caught each time (exit 1),
// with the story, the saved failure and its replay line; and nothing is
// left under the run's prefix.
func TestVerifyCaught(t *testing.T) {
	url := servers.ForTest(t, servers.StartRedis).URL
	for _, kind := range []string{"pause", "freeze"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			var so, se bytes.Buffer
			b := redislock.Verify()
			open, prefix := b.Open, ""
			b.Open = func(ctx context.Context, spec, p string) (*verify.Opened, error) {
				prefix = p // the run's: everything it stores lives under it
				return open(ctx, spec, p)
			}
			c := verify.Command{Name: "redislock-verify", Backends: []verify.Backend{b}}
			code := c.Run(context.Background(), []string{"--backend", url, "--faults", kind, "--duration", "6s", "--ttl", "1s",
				"--out", dir, "--shrink-for", "0", "--json"}, &so, &se)
			t.Logf("exit %d\n%s%s", code, so.String(), se.String())
			if code != verify.ExitViolation {
				t.Fatalf("exit %d, want %d: the unfenced write was not caught", code, verify.ExitViolation)
			}
			var s struct {
				Backend    string         `json:"backend"`
				Faults     map[string]int `json:"faults"`
				Violations map[string]int `json:"violations"`
				Histories  []string       `json:"histories"`
			}
			if err := json.Unmarshal(so.Bytes(), &s); err != nil {
				t.Fatal(err)
			}
			if s.Backend != "bsm/redislock" || s.Faults[kind] != 1 || s.Violations["linearizable"] != 1 || len(s.Histories) != 1 {
				t.Errorf("summary %+v", s)
			}
			if !strings.Contains(se.String(), "'s write was accepted, but the lease was held by") {
				t.Errorf("the story of the late write is not told")
			}
			saved, _ := filepath.Glob(filepath.Join(dir, "*-seed-1.scenario.json"))
			if len(saved) != 1 {
				t.Fatalf("saved scenarios %q, want the failing round's", saved)
			}
			if !strings.Contains(se.String(), "replay: redislock-verify --backend "+url+" --ttl 1s --scenario "+saved[0]) {
				t.Errorf("no replay line for the saved failure %s", saved[0])
			}
			leftovers(t, url, "leasecheck:"+prefix+":*")
		})
	}
}

// leftovers fails if anything verify stored under a run's prefix is still
// in Redis: verify removes it after every round.
func leftovers(t *testing.T, url, pattern string) {
	t.Helper()
	opts, err := goredis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	rdb := goredis.NewClient(opts)
	defer rdb.Close()
	keys, err := rdb.Keys(context.Background(), pattern).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) > 0 {
		t.Errorf("left in Redis after the run: %q", keys)
	}
}

// TestVerifyMain builds and runs the example's main, as a user would,
// against the real redis-server with a pause and a freeze: caught, exit 1.
// A usage error is exit 2 and names the known backends.
func TestVerifyMain(t *testing.T) {
	url := servers.ForTest(t, servers.StartRedis).URL
	bin := filepath.Join(t.TempDir(), "redislock-verify")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/redislock-verify").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--backend", url, "--faults", "pause,freeze", "--duration", "8s", "--ttl", "1s",
		"--out", t.TempDir(), "--shrink-for", "0")
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != verify.ExitViolation {
		t.Fatalf("redislock-verify: %v, want exit %d", err, verify.ExitViolation)
	}
	// The replay line names the program as it was run (its path here), so
	// that it runs as printed.
	for _, want := range []string{"freeze                   1", "pause                    1", "VIOLATION linearizable", "replay: " + bin + " --backend "} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the output lacks %q", want)
		}
	}
	out, err = exec.CommandContext(ctx, bin, "--backend", "etcd").CombinedOutput()
	if !errors.As(err, &ee) || ee.ExitCode() != verify.ExitUsage || !strings.Contains(string(out), `unknown backend "etcd"; known: redislock`) {
		t.Errorf("--backend etcd: %v\n%s", err, out)
	}
}
