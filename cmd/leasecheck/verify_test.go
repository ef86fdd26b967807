package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/impl/etcd"
	"github.com/leasecheck/leasecheck/internal/impl/zookeeper"
	"github.com/leasecheck/leasecheck/internal/realrun"
	"github.com/leasecheck/leasecheck/internal/servers"
	"github.com/leasecheck/leasecheck/internal/servers/serverstest"
	"github.com/leasecheck/leasecheck/model"
)

type verifyJSON struct {
	Backend          string         `json:"backend"`
	Seeds            int            `json:"seeds"`
	Ops              int            `json:"ops"`
	Faults           map[string]int `json:"faults"`
	FaultsPartial    map[string]int `json:"faults_partial"`
	Violations       map[string]int `json:"violations"`
	FailedSeeds      []uint64       `json:"failed_seeds"`
	ClockUncertainty int64          `json:"clock_uncertainty"`
}

// verify runs the command with args. Its clients run in the test's
// process (--clients in-process) unless args say otherwise: these tests'
// point is the backend, the faults and the verdicts, not where the client
// runs, and a process per client costs time (verify_clients_test.go runs
// the default, processes).
func verify(t *testing.T, args ...string) (code int, stdout, stderr string, took time.Duration) {
	t.Helper()
	var so, se bytes.Buffer
	start := time.Now()
	if !slices.Contains(args, "--clients") {
		args = append([]string{"--clients", "in-process"}, args...)
	}
	code = run(append([]string{"verify", "--out", t.TempDir()}, args...), nil, &so, &se)
	return code, so.String(), se.String(), time.Since(start)
}

// verifyAll runs verify --json with every applicable fault and wants every
// property to hold, every fault kind to have fired, within a minute.
func verifyAll(t *testing.T, spec string, want []faults.Kind, extra ...string) {
	code, out, errOut, took := verify(t, append([]string{"--backend", spec, "--duration", "8s", "--json"}, extra...)...)
	t.Logf("verify --backend %s: exit %d in %v\n%s%s", spec, code, took.Round(time.Millisecond), out, errOut)
	if code != exitOK {
		t.Fatalf("exit %d, want 0", code)
	}
	var s verifyJSON
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("--json: %v", err)
	}
	if s.Seeds != 1 || s.Ops < 50 || len(s.FailedSeeds) != 0 {
		t.Errorf("summary: seeds %d, ops %d, failed %v", s.Seeds, s.Ops, s.FailedSeeds)
	}
	for _, k := range want {
		if s.Faults[string(k)] == 0 {
			t.Errorf("fault %s was not injected: %v", k, s.Faults)
		}
	}
}

// holderAndNet is every kind that applies to any target with an address.
var holderAndNet = []faults.Kind{faults.Pause, faults.Overrun, faults.ClockOffset, faults.ClockDrift, faults.ClockStep, faults.Freeze,
	faults.DropHeartbeats, faults.RenewDeath, faults.Delay, faults.Partition, faults.Crash, faults.DoubleRelease, faults.OwnerReuse}

func TestVerifyEtcd(t *testing.T) {
	serverstest.Full(t, "real rounds on a real server")
	t.Parallel()
	verifyAll(t, "etcd", holderAndNet)
}

func TestVerifyRedis(t *testing.T) {
	serverstest.Full(t, "real rounds on a real server")
	t.Parallel()
	// Prefer a server verify starts itself, and may stop: every fault applies.
	if p, err := servers.StartRedis(context.Background()); err == nil {
		p.Close()
		verifyAll(t, "redis", append(holderAndNet, faults.CoordinatorCrash))
		return
	}
	url, _ := serverstest.Redis(t)
	verifyAll(t, url, holderAndNet)
}

func TestVerifyPostgres(t *testing.T) {
	serverstest.Full(t, "real rounds on a real server")
	t.Parallel()
	if _, err := os.Stat(servers.PostgresBinDir() + "/postgres"); err == nil {
		verifyAll(t, "postgres", append(holderAndNet, faults.CoordinatorCrash))
		return
	}
	url, _ := serverstest.Postgres(t)
	verifyAll(t, url, holderAndNet)
}

// needZooKeeper skips (fails under CI) a test that needs ZooKeeper
// installed; needEtcd34 one that needs an etcd 3.4 server binary.
func needZooKeeper(t *testing.T) {
	if _, err := servers.ZooKeeperClasspath(); err != nil {
		serverstest.SkipOrFail(t, "%v", err)
	}
}

func needEtcd34(t *testing.T) {
	bin, err := servers.EtcdBin()
	if err == nil {
		var v string
		if v, err = servers.EtcdVersion(bin); err == nil && !strings.HasPrefix(v, "3.4.") {
			err = fmt.Errorf("%s is etcd %s, not 3.4", bin, v)
		}
	}
	if err != nil {
		serverstest.SkipOrFail(t, "%v", err)
	}
}

// TestVerifyZooKeeper: verify starts a ZooKeeper and injects the faults
// that matter for it: a holder paused past its TTL, a partition through
// the proxy, SIGSTOP and a restart of the server.
func TestVerifyZooKeeper(t *testing.T) {
	serverstest.Full(t, "real rounds on a real server")
	t.Parallel()
	needZooKeeper(t)
	kinds := []faults.Kind{faults.Pause, faults.Partition, faults.CoordinatorCrash}
	verifyAll(t, "zookeeper", kinds, "--faults", kindList(kinds))
}

// TestVerifyEtcd34 is TestVerifyZooKeeper for an etcd 3.4 server process.
func TestVerifyEtcd34(t *testing.T) {
	serverstest.Full(t, "real rounds on a real server")
	t.Parallel()
	needEtcd34(t)
	kinds := []faults.Kind{faults.Pause, faults.Partition, faults.CoordinatorCrash}
	verifyAll(t, "etcd34", kinds, "--faults", kindList(kinds))
}

// TestVerifyUnfencedCaught: the lock recipes without a fenced write —
// ZooKeeper's with a plain setData, etcd 3.4's concurrency.Mutex with a
// plain Put (Jepsen's 2020 finding) — are caught under a holder pause.
func TestVerifyUnfencedCaught(t *testing.T) {
	serverstest.Full(t, "real rounds on a real server")
	t.Parallel()
	for _, c := range []struct {
		spec string
		need func(*testing.T)
	}{{"zookeeper-unfenced", needZooKeeper}, {"etcd34-mutex", needEtcd34}} {
		t.Run(c.spec, func(t *testing.T) {
			t.Parallel()
			c.need(t)
			code, out, errOut, took := verify(t, "--backend", c.spec, "--faults", "pause", "--duration", "8s", "--shrink-for", "0")
			t.Logf("exit %d in %v\n%s%s", code, took.Round(time.Millisecond), out, errOut)
			if code != exitViolation {
				t.Fatalf("exit %d, want %d", code, exitViolation)
			}
			if !strings.Contains(errOut, "'s write was accepted, but the lease was held by") && !strings.Contains(errOut, "under the older fence") {
				t.Errorf("no violation tells of a former holder's write accepted after the lock moved on")
			}
		})
	}
}

// TestVerifyEtcdExternal: etcd://HOST:PORT verifies an etcd verify did not
// start (here an embedded one standing in for a real cluster).
func TestVerifyEtcdExternal(t *testing.T) {
	serverstest.Full(t, "real rounds on a real server")
	t.Parallel()
	s, err := etcd.StartEmbedded(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	code, out, errOut, _ := verify(t, "--backend", "etcd://"+s.Addr, "--duration", "5s", "--faults", "pause,partition", "--json")
	if code != exitOK || !strings.Contains(out, `"pause":1`) {
		t.Fatalf("exit %d, want 0 with a pause injected\n%s%s", code, out, errOut)
	}
}

// TestVerifyEtcdMutexCaught: concurrency.Mutex with a plain write is caught
// under a holder pause; the report names the property and both writers;
// the failure is shrunk within its time budget, saved, and the printed
// replay line reproduces it against the same kind of server.
func TestVerifyEtcdMutexCaught(t *testing.T) {
	serverstest.Full(t, "real rounds on a real server")
	t.Parallel()
	dir := t.TempDir()
	var so, se bytes.Buffer
	start := time.Now()
	code := run([]string{"verify", "--clients", "in-process", "--backend", "etcd-mutex", "--faults", "pause", "--duration", "8s", "--out", dir, "--shrink-for", "30s"}, nil, &so, &se)
	out, errOut, took := so.String(), se.String(), time.Since(start)
	t.Logf("exit %d in %v\n%s%s", code, took.Round(time.Millisecond), out, errOut)
	if code != exitViolation {
		t.Fatalf("exit %d, want %d", code, exitViolation)
	}
	// Failures are told on stderr as they happen; the summary is on stdout.
	if !strings.Contains(errOut, "VIOLATION linearizable") && !strings.Contains(errOut, "VIOLATION fence-monotonic") && !strings.Contains(errOut, "VIOLATION single-writer-per-fence") {
		t.Errorf("no violation named in the report")
	}
	// Both writers: the paused holder and the one that took over.
	var writers int
	for _, h := range []string{"h1", "h2", "h3"} {
		if strings.Contains(errOut, h+"'s write") || strings.Contains(errOut, h+" write") {
			writers++
		}
	}
	if writers < 2 {
		t.Errorf("the report names %d writers, want 2", writers)
	}
	// That the shrink keeps to its time budget is campaign's
	// TestShrinkForAndKeepOutcomes (no wall-clock bound here: these
	// machines are noisy).
	if !strings.Contains(errOut, "shrunk from ") && !strings.Contains(errOut, "no smaller scenario failed the same way") {
		t.Errorf("stderr does not say what the shrinking achieved")
	}
	var replay string
	for _, l := range strings.Split(errOut, "\n") {
		if r, ok := strings.CutPrefix(strings.TrimSpace(l), "replay: "); ok {
			replay = r
		}
	}
	args, ok := strings.CutPrefix(replay, "leasecheck verify --backend etcd-mutex --ttl 2s --scenario ")
	if !ok {
		t.Fatalf("replay line %q", replay)
	}
	// A real run does not repeat its interleaving exactly: three rounds,
	// one failing is reproduction.
	code, out, errOut, _ = verify(t, "--backend", "etcd-mutex", "--ttl", "2s", "--scenario", args, "--seeds", "3", "--shrink-for", "0", "--json", "--quiet")
	var s verifyJSON
	if err := json.Unmarshal([]byte(out), &s); err != nil || code != exitViolation || len(s.FailedSeeds) == 0 {
		t.Errorf("the replay line did not reproduce the failure: exit %d (%v)\n%s%s", code, err, out, errOut)
	}
}

// TestVerifyNoFalseAlarm: 20 short runs per backend, 10 at a time on one
// server (own key prefixes), every applicable fault in each: no violation.
// LEASECHECK_REPEAT changes the count (e.g. 100 for a soak).
func TestVerifyNoFalseAlarm(t *testing.T) {
	serverstest.Full(t, "real rounds on a real server")
	n := 20
	if s := os.Getenv("LEASECHECK_REPEAT"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	if testing.Short() {
		n = 3
	}
	type bk struct {
		name string
		ttl  time.Duration
		// open starts or finds the server once and returns how to make a
		// target on it under a prefix.
		open func(t *testing.T) func(prefix string) realrun.Target
	}
	fromURL := func(t *testing.T, url string, srv realrun.Server) func(string) realrun.Target {
		return func(p string) realrun.Target {
			tg, err := openSpec(url, p)
			if err != nil {
				t.Error(err)
				return realrun.Target{}
			}
			if srv != nil {
				// Runs share the server: they may stop it, not restart it
				// under each other's feet (restarts are tested on servers
				// of their own, in internal/impl/redis and internal/impl/postgres).
				tg.Server = stopOnly{srv}
			}
			return tg
		}
	}
	backends := []bk{
		{"etcd", 2 * time.Second, func(t *testing.T) func(string) realrun.Target {
			es, err := etcd.StartEmbedded(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { es.Close() })
			return func(p string) realrun.Target { return etcdTarget(false, es.Addr, p) }
		}},
		{"redis", time.Second, func(t *testing.T) func(string) realrun.Target {
			url, srv := serverstest.Redis(t)
			return fromURL(t, url, srv)
		}},
		{"postgres", time.Second, func(t *testing.T) func(string) realrun.Target {
			url, srv := serverstest.Postgres(t)
			return fromURL(t, url, srv)
		}},
		{"zookeeper", time.Second, func(t *testing.T) func(string) realrun.Target {
			addr, srv := serverstest.ZooKeeper(t)
			return func(p string) realrun.Target {
				tg := zkTarget(true, zookeeper.Info(), addr, p)
				if srv != nil {
					tg.Server = stopOnly{srv}
				}
				return tg
			}
		}},
		{"etcd34", 2 * time.Second, func(t *testing.T) func(string) realrun.Target {
			addr, srv := serverstest.Etcd34(t)
			return func(p string) realrun.Target {
				tg := etcdTarget(false, addr, p)
				if srv != nil {
					tg.Server = stopOnly{srv}
				}
				return tg
			}
		}},
	}
	// The servers added since the first three get a few runs, not a
	// soak, unless LEASECHECK_REPEAT asks (CI time).
	few := map[string]bool{"zookeeper": true, "etcd34": true}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			mk := b.open(t)
			kinds := realrun.ApplicableKinds(mk("probe"), faults.AllKinds)
			n := n
			if few[b.name] && os.Getenv("LEASECHECK_REPEAT") == "" {
				n = min(n, 5)
			}
			sem := make(chan struct{}, 10)
			var wg sync.WaitGroup
			var mu sync.Mutex
			var ops, maxU int64
			injected, partial := map[faults.Kind]int{}, map[faults.Kind]int{}
			for i := 0; i < n; i++ {
				wg.Add(1)
				sem <- struct{}{}
				go func() {
					defer wg.Done()
					defer func() { <-sem }()
					tg := mk(fmt.Sprintf("lc%012x", rand.Uint64()>>16))
					if tg.Open == nil {
						return
					}
					cfg := realrun.Config{Seed: uint64(100 + i), Duration: 5 * time.Second, TTL: b.ttl, Faults: kinds}
					res, cr, err := serverstest.RunAndCheck(context.Background(), tg, cfg, time.Minute)
					if err != nil {
						t.Errorf("run %d: %v", i, err)
						return
					}
					mu.Lock()
					ops += int64(res.Ops)
					maxU = max(maxU, res.History.Header.ClockUncertainty)
					for k, n := range res.Faults {
						injected[k] += n
					}
					for k, n := range res.Partial {
						partial[k] += n
					}
					mu.Unlock()
					if !cr.OK() {
						var b strings.Builder
						for _, v := range cr.Violations {
							fmt.Fprintf(&b, "\n  %s (lines %v): %s", v.Property, v.Lines, v.Explanation)
						}
						path := saveForTest(t, res)
						t.Errorf("run %d (seed %d): false alarm or undecided:%s\n  history: %s", i, cfg.Seed, b.String(), path)
					}
				}()
			}
			wg.Wait()
			t.Logf("%s: %d runs, %d ops, injected %v, applied in part %v, max clock_uncertainty %dus", b.name, n, ops, injected, partial, maxU)
			for _, k := range kinds {
				// Runs share the server, so a coordinator-crash can only
				// stop it (recorded as applied in part), never restart it.
				if injected[k]+partial[k] == 0 || k != faults.CoordinatorCrash && injected[k] == 0 {
					t.Errorf("%s: fault %s never injected over %d runs", b.name, k, n)
				}
			}
		})
	}
}

type stopOnly struct{ realrun.Server }

// openSpec is the target the registry opens for a URL spec (a server the
// test started), under prefix.
func openSpec(spec, prefix string) (realrun.Target, error) {
	for _, b := range builtinBackends() {
		for _, s := range b.Schemes {
			if strings.HasPrefix(spec, s+"://") {
				o, err := b.Open(context.Background(), spec, prefix)
				if err != nil {
					return realrun.Target{}, err
				}
				return o.Target, nil
			}
		}
	}
	return realrun.Target{}, fmt.Errorf("no backend for %q", spec)
}

func saveForTest(t *testing.T, res *realrun.Result) string {
	f, err := os.CreateTemp("", "leasecheck-falsealarm-*.history.jsonl")
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	model.WriteHistory(f, res.History)
	return f.Name()
}

// TestVerifyUnusableBackends: a backend that is down, hangs or answers
// garbage gets a clear error (exit 2), its dial and first request bounded
// by verify's own timeouts (a hang here would end in the test's timeout).
func TestVerifyUnusableBackends(t *testing.T) {
	serverstest.Full(t, "real rounds on a real server")
	t.Parallel()
	down := closedPort(t)
	hang := listen(t, func(c net.Conn) { time.Sleep(time.Minute); c.Close() })
	garbage := listen(t, func(c net.Conn) {
		c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\ngarbage\x00\xff\xfe"))
		time.Sleep(time.Second)
		c.Close()
	})
	cases := []struct{ name, spec, want string }{
		{"redis-down", "redis://" + down, "not usable"},
		{"redis-hang", "redis://" + hang, "redis"},
		{"redis-garbage", "redis://" + garbage, "redis"},
		{"postgres-down", "postgres://u:s3cret@" + down + "/db?sslmode=disable", "not usable"},
		{"postgres-hang", "postgres://u:s3cret@" + hang + "/db?sslmode=disable", "postgres"},
		{"postgres-garbage", "postgres://u:s3cret@" + garbage + "/db?sslmode=disable", "postgres"},
		{"etcd-down", "etcd://" + down, "etcd"},
		{"etcd-hang", "etcd://" + hang, "etcd"},
		{"etcd-garbage", "etcd://" + garbage, "etcd"},
		{"zk-down", "zk://" + down, "zookeeper"},
		{"zk-hang", "zk://" + hang, "zookeeper"},
		{"zk-garbage", "zk://" + garbage, "zookeeper"},
		{"zk-credentials", "zk://u:s3cret@" + down, "bad ZooKeeper address"},
		{"unknown", "zookeeper://" + down, "unknown backend"},
		{"etcd37-cluster-bad-member", "etcd37-cluster://bogus", "bad cluster spec \"etcd37-cluster://bogus\": want etcd37-cluster, etcd37-cluster://leader or etcd37-cluster://mN"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut, took := verify(t, "--backend", c.spec, "--duration", "2s")
			t.Logf("exit %d in %v: %s%s", code, took.Round(time.Millisecond), out, errOut)
			if code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if !strings.Contains(errOut, c.want) {
				t.Errorf("stderr %q does not say %q", errOut, c.want)
			}
			if strings.Contains(out+errOut, "s3cret") {
				t.Errorf("the password was printed")
			}
		})
	}
}

func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func listen(t *testing.T, serve func(net.Conn)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	return ln.Addr().String()
}

// scenarioPath is a scenario file of the repository's testdata.
func scenarioPath(dir, name string) string {
	return "../../" + dir + "/" + name + ".scenario.json"
}

// verifyScenario replays a scenario file against a backend spec and
// returns verify's exit status and its text report.
func verifyScenario(t *testing.T, spec, file string, extra ...string) (int, string) {
	t.Helper()
	code, out, errOut, took := verify(t, append([]string{"--backend", spec, "--scenario", file, "--quiet", "--shrink-for", "0"}, extra...)...)
	t.Logf("verify --backend %s --scenario %s %v: exit %d in %v\n%s%s", spec, file, extra, code, took.Round(time.Millisecond), out, errOut)
	return code, out + errOut // the summary, and the failures told as they happened
}

// TestVerifyScenarioCounterexample: a shrunk mutant counterexample from the
// simulator replayed against real backends (testdata/scenarios/real: once
// write-without-fence-check's, kept apart so that regenerating the mutants'
// files does not change what this test replays): a holder frozen (clock and
// all) while its acquire is in flight wakes past its TTL believing it holds
// the lease and writes after the lease moved on.
// The fenced backends refuse that write; an unfenced one (etcd-mutex: a
// concurrency.Mutex and a plain Put) accepts it, and verify says so.
func TestVerifyScenarioCounterexample(t *testing.T) {
	serverstest.Full(t, "real rounds on a real server")
	file := scenarioPath("testdata/scenarios/real", "frozen-zombie")
	redisSpec := "redis" // a redis-server verify starts itself, when there is one
	if p, err := servers.StartRedis(context.Background()); err == nil {
		p.Close()
	} else {
		redisSpec, _ = serverstest.Redis(t)
	}
	for _, c := range []struct {
		spec   string
		caught bool
	}{{"etcd", false}, {redisSpec, false}, {"etcd-mutex", true}} {
		t.Run(strings.SplitN(c.spec, ":", 2)[0], func(t *testing.T) {
			t.Parallel()
			code, out := verifyScenario(t, c.spec, file)
			if !strings.Contains(out, "freeze                   1") {
				t.Errorf("the scenario's freeze was not injected")
			}
			if !c.caught {
				if code != exitOK {
					t.Errorf("exit %d, want 0: the fenced backend refuses the zombie write", code)
				}
				return
			}
			if code != exitViolation {
				t.Fatalf("exit %d, want %d: the unfenced backend accepts the zombie write", code, exitViolation)
			}
			if !strings.Contains(out, "h1's write was accepted, but the lease was held by h2") || !strings.Contains(out, "replay: leasecheck verify --backend etcd-mutex --scenario ") {
				t.Errorf("the report does not tell the story or the replay command")
			}
		})
	}
}

// TestVerifyClockFaultsBite: internal/realrun/testdata's clock scenarios against
// real servers, both ways. A frozen monotonic clock makes even the
// reference holder write after its lease lapsed: caught against etcd-mutex,
// refused by etcd and Redis. A wall-clock step back is harmless to the
// reference holder everywhere; the holder that trusts the wall clock
// (--mutant trust-local-clock) writes for three TTLs after its lease
// lapsed: caught against etcd-mutex, refused by etcd and Redis.
func TestVerifyClockFaultsBite(t *testing.T) {
	serverstest.Full(t, "real rounds on a real server")
	redisSpec := "redis" // a redis-server verify starts itself, when there is one
	if p, err := servers.StartRedis(context.Background()); err == nil {
		p.Close()
	} else {
		redisSpec, _ = serverstest.Redis(t)
	}
	frozen := scenarioPath("internal/realrun/testdata", "frozen-clock")
	step := scenarioPath("internal/realrun/testdata", "wall-clock-step-back")
	trust := []string{"--mutant", "trust-local-clock"}
	cases := []struct {
		name, spec, file string
		extra            []string
		caught           bool
	}{
		{"frozen/etcd-mutex", "etcd-mutex", frozen, nil, true},
		{"frozen/etcd", "etcd", frozen, nil, false},
		{"frozen/redis", redisSpec, frozen, nil, false},
		{"step/reference/etcd-mutex", "etcd-mutex", step, nil, false},
		{"step/trust/etcd-mutex", "etcd-mutex", step, trust, true},
		{"step/trust/etcd", "etcd", step, trust, false},
		{"step/trust/redis", redisSpec, step, trust, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			code, out := verifyScenario(t, c.spec, c.file, append([]string{"--ttl", "2s"}, c.extra...)...)
			want := exitOK
			if c.caught {
				want = exitViolation
			}
			if code != want {
				t.Fatalf("exit %d, want %d", code, want)
			}
			if c.caught && !strings.Contains(out, "h1's write was accepted") {
				t.Errorf("the report does not name h1's late write")
			}
		})
	}
}

// TestVerifyScenarioUsage: what --scenario and --mutant refuse, with exit 2.
func TestVerifyScenarioUsage(t *testing.T) {
	t.Parallel()
	bad := filepath.Join(t.TempDir(), "bad.scenario.json")
	os.WriteFile(bad, []byte(`{"version":1,"ttl":0}`), 0o644)
	file := scenarioPath("internal/realrun/testdata", "frozen-clock")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"missing", []string{"--scenario", "/nonexistent.scenario.json"}, "nonexistent"},
		{"invalid", []string{"--scenario", bad}, "bad.scenario.json"},
		{"with-faults", []string{"--scenario", file, "--faults", "pause"}, "own fault plan"},
		{"coordinator-mutant", []string{"--mutant", "no-expiry"}, "holder mutants only"},
		{"unknown-mutant", []string{"--mutant", "nope"}, "unknown mutant"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, errOut, _ := verify(t, append([]string{"--backend", "etcd"}, c.args...)...)
			if code != exitUsage || !strings.Contains(errOut, c.want) {
				t.Errorf("exit %d, stderr %q: want %d naming %q", code, errOut, exitUsage, c.want)
			}
		})
	}
}

// TestVerifyBackendStopsMidRun: a backend verify did not start that dies
// (SIGKILL) or hangs (SIGSTOP) a few seconds into a 30-second run ends the
// run within seconds, with a clear message, exit 2 and the partial
// history saved.
func TestVerifyBackendStopsMidRun(t *testing.T) {
	serverstest.Full(t, "real rounds on a real server")
	t.Parallel()
	type server struct {
		p    *servers.Process
		spec string
	}
	zookeeper := func(t *testing.T) server {
		p, err := servers.StartZooKeeper(context.Background())
		if err != nil {
			serverstest.SkipOrFail(t, "%v", err)
		}
		return server{p, "zk://" + p.Addr}
	}
	etcd34 := func(t *testing.T) server {
		p, _, err := servers.StartEtcd(context.Background())
		if err != nil {
			serverstest.SkipOrFail(t, "%v", err)
		}
		return server{p, "etcd://" + p.Addr}
	}
	cases := []struct {
		name  string
		start func(*testing.T) server
		hang  bool
	}{
		{"zookeeper-dies", zookeeper, false},
		{"zookeeper-hangs", zookeeper, true},
		{"etcd34-dies", etcd34, false},
		{"etcd34-hangs", etcd34, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := c.start(t)
			defer s.p.Close()
			stopped := make(chan time.Time, 1)
			se := &signalWriter{on: ", seeds ", seen: make(chan struct{})}
			go func() {
				<-se.seen // the run has started
				time.Sleep(2 * time.Second)
				if c.hang {
					s.p.Stop()
				} else {
					s.p.Kill()
				}
				stopped <- time.Now()
			}()
			out := t.TempDir()
			var so bytes.Buffer
			began := time.Now()
			code := run([]string{"verify", "--clients", "in-process", "--out", out, "--backend", s.spec, "--duration", "2m", "--faults", "none", "--quiet"}, nil, &so, se)
			ran := time.Since(began)
			var took time.Duration
			select {
			case at := <-stopped:
				took = time.Since(at)
			default:
				close(se.seen) // let the stopper go (it stops the server now)
				t.Fatalf("exit %d before the run started or the server was stopped: %s%s", code, so.String(), se.String())
			}
			t.Logf("exit %d, %v after the server stopped: %s%s", code, took.Round(time.Millisecond), so.String(), se.String())
			if code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if !strings.Contains(se.String(), "stopped answering") {
				t.Errorf("stderr does not say the backend stopped answering")
			}
			// Declared dead after 5s of silence, it ends the run: it does
			// not wait out the 2-minute workload (the bound is that
			// workload, not a speed: these machines are noisy).
			if ran >= 2*time.Minute {
				t.Errorf("verify ran %v, its whole workload: the stopped server did not end the run", ran)
			}
			partial, _ := filepath.Glob(filepath.Join(out, "*.partial.history.jsonl"))
			if len(partial) != 1 || !strings.Contains(se.String(), partial[0]) {
				t.Errorf("partial history: files %v, not named on stderr", partial)
			}
		})
	}
}

// signalWriter is a buffer that closes seen once something written to it
// contains on.
type signalWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	on   string
	seen chan struct{}
	once sync.Once
}

func (w *signalWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(b)
	if strings.Contains(w.buf.String(), w.on) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(b), nil
}

func (w *signalWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
