package verify_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/impl/redis"
	"github.com/leasecheck/leasecheck/internal/servers"
	"github.com/leasecheck/leasecheck/verify"
)

// envMain makes this test binary a user's verify program: its main is
// verify.Main with myRedis, as a user's would be.
const envMain = "LEASECHECK_TEST_VERIFY_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(envMain) != "" {
		verify.Main(myRedis())
	}
	os.Exit(m.Run())
}

// myRedis is a user's backend: leasecheck's Redis lock on a redis-server
// its Open starts for the bare name — but not in a client process, where
// the parent's server is the one (verify.InClientProcess).
func myRedis() verify.Backend {
	return verify.Backend{Name: "myredis", Open: func(ctx context.Context, spec, prefix string) (*verify.Opened, error) {
		p := "lc:" + prefix + ":"
		connect := func(addr string) *verify.Opened {
			return verify.Connect(redis.Info(), addr, func(ctx context.Context, a string) (backend.Backend, error) {
				return redis.Open(ctx, "redis://"+addr, a, p)
			})
		}
		if addr, ok := verify.InClientProcess(ctx); ok {
			return connect(addr), nil
		}
		s, err := servers.StartRedis(ctx)
		if err != nil {
			return nil, err
		}
		o := connect(s.Addr)
		o.Close = func() { s.Close() }
		return o, nil
	}}
}

// TestMainServesClientProcesses: a program whose main is verify.Main runs
// each owner's client in a child process of its own (itself re-executed,
// served before its flags are parsed) by default, and a pause stops one
// (the kernel's record in the summary); --clients in-process starts none.
func TestMainServesClientProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("real time: 2 rounds on a redis-server")
	}
	for _, tc := range []struct {
		name  string
		extra []string
		procs bool
	}{{"default", nil, true}, {"in-process", []string{"--clients", "in-process"}, false}} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], append([]string{"--backend", "myredis", "--faults", "pause", "--duration", "3s", "--ttl", "1s",
				"--shrink-for", "0", "--json", "--out", t.TempDir()}, tc.extra...)...)
			cmd.Env = append(os.Environ(), envMain+"=1")
			var se strings.Builder
			cmd.Stderr = &se
			out, err := cmd.Output()
			t.Logf("%s\n%s", out, se.String())
			if err != nil {
				t.Fatalf("the program: %v", err)
			}
			var s struct {
				Faults  map[string]int        `json:"faults"`
				Clients verify.ClientsSummary `json:"clients"`
			}
			if err := json.Unmarshal(out, &s); err != nil {
				t.Fatal(err)
			}
			if s.Faults["pause"] != 1 {
				t.Fatalf("pauses injected: %d, want 1", s.Faults["pause"])
			}
			c := s.Clients
			if !tc.procs {
				if c.Mode != "in-process" || c.Processes != 0 || len(c.Pids) != 0 {
					t.Errorf("--clients in-process: %+v, want no process", c)
				}
				return
			}
			if c.Mode != "process" || c.Processes < 4 || c.KernelStops < 1 || c.KernelStopped <= 0 {
				t.Fatalf("clients %+v: want at least 4 processes, the pause's stop reported by the kernel", c)
			}
			if slices.Contains(c.Pids, cmd.Process.Pid) {
				t.Errorf("the program's own pid %d among its clients' %v", cmd.Process.Pid, c.Pids)
			}
		})
	}
}

// TestRunInTestBinaryWithoutServing: Command.Run from a test of a binary
// that did not serve the clients (no ServeClients in init or TestMain:
// the re-executed binary would run no test, and with it no Run) runs them
// in the test's process, and says so and why, rather than failing.
func TestRunInTestBinaryWithoutServing(t *testing.T) {
	if testing.Short() {
		t.Skip("real time: a round on a redis-server")
	}
	c := verify.Command{Name: "myverify", Backends: []verify.Backend{myRedis()}}
	var so, se strings.Builder
	code := c.Run(context.Background(), []string{"--backend", "myredis", "--faults", "none", "--duration", "1s", "--ttl", "1s", "--json", "--out", t.TempDir()}, &so, &se)
	t.Logf("exit %d\n%s%s", code, so.String(), se.String())
	if code != verify.ExitOK {
		t.Fatalf("exit %d", code)
	}
	var s struct {
		Clients verify.ClientsSummary `json:"clients"`
	}
	if err := json.Unmarshal([]byte(so.String()), &s); err != nil {
		t.Fatal(err)
	}
	if c := s.Clients; c.Mode != "in-process" || c.Processes != 0 || !strings.Contains(c.Note, "verify.ServeClients") ||
		!strings.Contains(se.String(), "clients: in verify's process: this test binary serves no client processes") {
		t.Errorf("clients %+v: want in-process, none started, the reason in the summary and the header", c)
	}
}
