package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/impl/etcd"
	"github.com/leasecheck/leasecheck/impl/holder"
	"github.com/leasecheck/leasecheck/impl/mutants"
	"github.com/leasecheck/leasecheck/impl/postgres"
	"github.com/leasecheck/leasecheck/impl/redis"
	"github.com/leasecheck/leasecheck/impl/zookeeper"
	"github.com/leasecheck/leasecheck/internal/servers"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/realrun"
	"github.com/leasecheck/leasecheck/report"
	"github.com/leasecheck/leasecheck/scenario"
)

func init() {
	register("verify", command{
		summary: "run the workload with real faults against a real lease backend (etcd, Redis, PostgreSQL) and check it",
		run:     runVerify,
	})
}

// verifySummary is `verify --json`: run's summary fields, plus what was
// verified. Counts are of seeds (rounds), as in run.
type verifySummary struct {
	Backend string `json:"backend"`
	seedSummary
	TimeUnit         string   `json:"time_unit"`
	ClockUncertainty int64    `json:"clock_uncertainty"`
	FenceSource      string   `json:"fence_source"`
	FencedWrite      string   `json:"fenced_write"`
	Histories        []string `json:"histories,omitempty"`
	// FaultsPartial counts faults applied in part or not at all (a server
	// that could only be stopped, not restarted), by kind: not in Faults.
	FaultsPartial map[string]int `json:"faults_partial,omitempty"`
}

func runVerify(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	spec := fs.String("backend", "etcd", "etcd | etcd-mutex (embedded etcd 3.7) | redis | postgres | zookeeper | zookeeper-unfenced | etcd34 | etcd34-mutex (a local server started here) | etcd://HOST:PORT | etcd-mutex://HOST:PORT | zk://HOST:PORT | zk-unfenced://HOST:PORT | redis://[user:pass@]HOST:PORT[/db] | postgres://USER[:PASS]@HOST:PORT/DB")
	duration := fs.Duration("duration", 10*time.Second, "workload time per seed (faulted runs end up to 3 TTLs later)")
	ttl := fs.Duration("ttl", 2*time.Second, "lease TTL (raised to the backend's minimum: etcd whole seconds, at least 2s); with --scenario, the real TTL the scenario's TTL maps onto (default: chosen for the backend)")
	faultList := fs.String("faults", "all", "comma-separated fault kinds, \"all\" (every kind applicable to the backend) or \"none\"")
	seeds := fs.Int("seeds", 1, "rounds to run (seeds first, first+1, ...); each draws its own workload and fault times (with --scenario: replays of it)")
	first := fs.Uint64("first", 1, "the first seed")
	scenarioFile := fs.String("scenario", "", "replay this simulator scenario (a saved failure, a shrunk mutant counterexample) against the backend instead of the generated workload")
	mutantName := fs.String("mutant", "", "run the holders with a planted holder bug `NAME` (leasecheck mutants; holder mutants only: the backend is the coordinator)")
	out := fs.String("out", "leasecheck-failures", "where failing rounds' histories, scenarios (and HTML reports) are saved")
	asJSON := fs.Bool("json", false, "print the summary as one JSON object")
	budget := fs.Duration("timeout", 60*time.Second, "linearizability search budget per history")
	quiet := fs.Bool("quiet", false, "do not log injected faults on standard error")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: leasecheck verify [--backend etcd|etcd-mutex|redis|postgres|zookeeper|etcd34|URL] [--duration D] [--faults LIST] [--scenario FILE] [--mutant NAME] [--out DIR] [--json]")
		fmt.Fprintln(stderr, "\nRuns holders and a reader — the protocol machines the simulator runs — against a\nreal lease backend, injects real faults (holder pauses and freezes, clock drift\nand steps, dropped renewals, a TCP proxy that delays or blackholes, holder\ncrashes, a stopped or restarted server where verify started it), records the\nhistory and checks it. --scenario replays a simulator scenario instead, its\ntimes scaled onto the backend's TTL. Keys live under a unique prefix, removed\nat the end. Exit status: 0 all hold, 1 a violation, 2 bad usage or an unusable\nbackend, 3 undecided within the budget.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlagsOnly(fs, args, stderr); !ok {
		return code
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *seeds < 1 || *duration <= 0 || *ttl <= 0 {
		fmt.Fprintln(stderr, "leasecheck verify: --seeds, --duration and --ttl must be positive")
		return exitUsage
	}
	kinds, err := faults.ParseKinds(*faultList)
	if err != nil {
		fmt.Fprintf(stderr, "leasecheck verify: %v\n", err)
		return exitUsage
	}
	var sc *scenario.Scenario
	if *scenarioFile != "" {
		if set["faults"] || set["duration"] {
			fmt.Fprintln(stderr, "leasecheck verify: --scenario brings its own fault plan and horizon: drop --faults and --duration")
			return exitUsage
		}
		if sc, err = scenario.Load(*scenarioFile); err != nil {
			fmt.Fprintf(stderr, "leasecheck verify: %v\n", err)
			return exitUsage
		}
	}
	newHolder, holderNote, err := verifyHolder(*mutantName, sc)
	if err != nil {
		fmt.Fprintf(stderr, "leasecheck verify: %v\n", err)
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(*seeds)*(*duration+3*time.Minute))
	defer cancel()
	tg, shown, stop, err := openTarget(ctx, *spec, newPrefix())
	defer stop()
	if err != nil {
		fmt.Fprintf(stderr, "leasecheck verify: %s\n", scrub(err.Error(), *spec))
		return exitUsage
	}
	if sc != nil {
		kinds = planKinds(sc.Faults)
	} else {
		if *faultList == "all" || *faultList == "" {
			kinds = realrun.ApplicableKinds(tg, kinds)
		}
		for _, k := range kinds {
			if !realrun.Applicable(tg, k) {
				fmt.Fprintf(stderr, "leasecheck verify: fault %q is not applicable to %s (applicable: %s)\n", k, shown, kindList(realrun.ApplicableKinds(tg, faults.AllKinds)))
				return exitUsage
			}
		}
	}
	if sc != nil {
		realTTL := realrun.AutoTTL(tg.Info, sc.TTL)
		if set["ttl"] {
			realTTL = *ttl
		}
		fmt.Fprintf(stderr, "leasecheck verify: %s, scenario %s (%d holders, TTL %dms, %d faults: %s) replayed %d time(s) at TTL %v%s\n",
			shown, *scenarioFile, len(sc.Holders), sc.TTL, len(sc.Faults), kindList(kinds), *seeds, realTTL, holderNote)
	} else {
		fmt.Fprintf(stderr, "leasecheck verify: %s, seeds %d..%d, %v each, TTL %v, faults %s%s\n", shown, *first, *first+uint64(*seeds)-1, *duration, *ttl, kindList(kinds), holderNote)
	}

	sum := &verifySummary{Backend: tg.Info.Name, seedSummary: newSeedSummary(*first, kinds),
		TimeUnit: "us", FenceSource: tg.Info.FenceSource, FencedWrite: tg.Info.FencedWrite, FaultsPartial: map[string]int{}}
	var failures []string
	for i := 0; i < *seeds; i++ {
		seed := *first + uint64(i)
		// A key of its own per round: nothing a round left (a late answer, a
		// grant) can leak into the next one's history.
		key := fmt.Sprintf("k%d", seed)
		var logf func(string, ...any)
		if !*quiet {
			logf = func(format string, args ...any) {
				// realrun serializes its calls; stderr is only written here
				// while a round runs.
				fmt.Fprintf(stderr, "  seed %d %s\n", seed, fmt.Sprintf(format, args...))
			}
		}
		var res *realrun.Result
		if sc != nil {
			round := *sc
			round.Key = key
			opt := realrun.Options{NewHolder: newHolder, Log: logf}
			if set["ttl"] {
				opt.TTL = *ttl
			}
			res, err = realrun.RunScenario(ctx, tg, &round, opt)
		} else {
			cfg := realrun.Config{Seed: seed, Duration: *duration, TTL: *ttl, Faults: kinds, Key: key, NewHolder: newHolder, Log: logf}
			res, err = realrun.Run(ctx, tg, cfg)
		}
		if err != nil {
			fmt.Fprintf(stderr, "leasecheck verify: seed %d: %s\n", seed, scrub(err.Error(), *spec))
			if res != nil && res.History != nil {
				if path, err := savePartial(*out, tg.Info.Name, seed, res.History); err == nil {
					fmt.Fprintf(stderr, "leasecheck verify: the partial history: %s\n", path)
				}
			}
			return exitUsage
		}
		// A recorded history the checker refuses is a bug of the runner or
		// the adapter: reported as such (exit 2), never judged.
		cr, err := checker.Check(ctx, res.History, checker.Options{Timeout: *budget})
		if err != nil {
			fmt.Fprintf(stderr, "leasecheck verify: seed %d: %s\n", seed, scrub(err.Error(), *spec))
			return exitUsage
		}
		sum.Seeds++
		sum.Ops += int64(res.Ops)
		sum.ClockUncertainty = max(sum.ClockUncertainty, res.History.Header.ClockUncertainty)
		for k, n := range res.Faults {
			sum.Faults[string(k)] += n
		}
		for k, n := range res.Partial {
			sum.FaultsPartial[string(k)] += n
		}
		seen := map[string]bool{}
		for _, v := range cr.Violations {
			if !seen[v.Property] {
				seen[v.Property] = true
				sum.Violations[v.Property]++
			}
		}
		if cr.Undecided() {
			sum.Undecided++
		}
		if !cr.OK() {
			sum.FailedSeeds = append(sum.FailedSeeds, seed)
			path, scPath, err := saveVerifyFailure(*out, tg.Info.Name, seed, res, cr)
			if err != nil {
				fmt.Fprintf(stderr, "leasecheck verify: %v\n", err)
			} else {
				sum.Histories = append(sum.Histories, path)
			}
			var b strings.Builder
			fmt.Fprintf(&b, "seed %d:\n", seed)
			for _, v := range cr.Violations {
				fmt.Fprintf(&b, "VIOLATION %s (key %q, lines %s)\n  %s\n", v.Property, v.Key, joinInts(v.Lines), v.Explanation)
			}
			if cr.Undecided() {
				b.WriteString("UNDECIDED: the linearizability search ran out of its budget (raise --timeout)\n")
			}
			if path != "" {
				fmt.Fprintf(&b, "history: %s (re-check: leasecheck check %s)\n", path, path)
				fmt.Fprintf(&b, "replay: leasecheck verify --backend %s --scenario %s\n", redact(*spec), scPath)
			}
			failures = append(failures, b.String())
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(sum); err != nil {
			fmt.Fprintf(stderr, "leasecheck verify: %v\n", err)
			return exitUsage
		}
		for _, f := range failures {
			fmt.Fprint(stderr, "\n"+f)
		}
	} else {
		printVerify(stdout, sum, shown, kinds, tg.Info)
		for _, f := range failures {
			fmt.Fprint(stdout, "\n"+f)
		}
	}
	switch {
	case len(sum.FailedSeeds) > sum.Undecided:
		return exitViolation
	case sum.Undecided > 0:
		return exitUnknown
	}
	return exitOK
}

// verifyHolder is the holder machine verify runs: the reference, or the
// holder mutant named by --mutant (or by the scenario's implementation). A
// coordinator or resource mutant has no place against a real backend: the
// backend is the coordinator and the store.
func verifyHolder(name string, sc *scenario.Scenario) (func(holder.Config) machine.Holder, string, error) {
	from := "--mutant"
	if name == "" && sc != nil {
		if n, ok := strings.CutPrefix(sc.Implementation, "mutant:"); ok {
			if m := mutants.ByName(n); m != nil && m.Component == mutants.Holder {
				name, from = n, "the scenario's implementation"
			}
		}
	}
	if name == "" {
		return nil, "", nil
	}
	m := mutants.ByName(name)
	if m == nil {
		return nil, "", fmt.Errorf("unknown mutant %q (see leasecheck mutants)", name)
	}
	if m.Component != mutants.Holder {
		return nil, "", fmt.Errorf("mutant %q is a %s bug; against a real backend the backend is the %s (holder mutants only)", name, m.Component, m.Component)
	}
	return m.Options().NewHolder, fmt.Sprintf(", holders with planted bug %s (from %s)", name, from), nil
}

// planKinds lists the kinds a plan holds, in AllKinds' order.
func planKinds(p faults.Plan) []faults.Kind {
	c := p.Counts()
	var out []faults.Kind
	for _, k := range faults.AllKinds {
		if c[k] > 0 {
			out = append(out, k)
		}
	}
	return out
}

func printVerify(w io.Writer, s *verifySummary, shown string, kinds []faults.Kind, info backend.Info) {
	fmt.Fprintf(w, "%-26s %s\n", "backend", shown)
	fmt.Fprintf(w, "%-26s %s\n", "fence source", info.FenceSource)
	fmt.Fprintf(w, "%-26s %s\n", "fenced write", info.FencedWrite)
	mode := "interval (the server reports no clock)"
	if info.ServerTime {
		mode = "exact (server clock mapped onto the client's)"
	}
	fmt.Fprintf(w, "%-26s %s, clock uncertainty <= %.1f ms\n", "time", mode, float64(s.ClockUncertainty)/1000)
	fmt.Fprintf(w, "%-26s %d (first %d)\n", "seeds", s.Seeds, s.FirstSeed)
	fmt.Fprintf(w, "%-26s %d\n", "operations", s.Ops)
	fmt.Fprintln(w, "\nfaults injected")
	for _, k := range kinds {
		fmt.Fprintf(w, "  %-24s %d", k, s.Faults[string(k)])
		if n := s.FaultsPartial[string(k)]; n > 0 {
			fmt.Fprintf(w, " (+%d applied in part or not at all: see the fault log)", n)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "\nseeds violating")
	for _, p := range checker.Properties() {
		fmt.Fprintf(w, "  %-24s %d\n", p, s.Violations[p])
	}
	fmt.Fprintf(w, "  %-24s %d\n", "(undecided)", s.Undecided)
	if len(s.FailedSeeds) == 0 {
		fmt.Fprintf(w, "\nOK: every property held on every seed\n")
	} else {
		fmt.Fprintf(w, "\nFAIL: %d seed(s): %v\n", len(s.FailedSeeds), s.FailedSeeds)
	}
}

// saveVerifyFailure saves a failing round: its history, the scenario as run
// (replayable with verify --scenario) and the HTML report. It returns the
// history's and the scenario's paths.
func saveVerifyFailure(dir, name string, seed uint64, res *realrun.Result, cr *checker.Result) (string, string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	base := filepath.Join(dir, fmt.Sprintf("verify-%s-seed-%d", name, seed))
	f, err := os.Create(base + ".history.jsonl")
	if err != nil {
		return "", "", err
	}
	if err := model.WriteHistory(f, res.History); err != nil {
		f.Close()
		return "", "", err
	}
	if err := f.Close(); err != nil {
		return "", "", err
	}
	if err := res.Scenario.Save(base + ".scenario.json"); err != nil {
		return "", "", err
	}
	page := report.Input{History: res.History, Check: cr}
	if err := writeFileWith(base+".html", func(w io.Writer) error { return report.WriteTimeline(w, page, report.Options{}) }); err != nil {
		return "", "", err
	}
	return base + ".history.jsonl", base + ".scenario.json", nil
}

// savePartial saves the history of a run that could not finish.
func savePartial(dir, name string, seed uint64, h *model.History) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, fmt.Sprintf("verify-%s-seed-%d.partial.history.jsonl", name, seed))
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if err := model.WriteHistory(f, h); err != nil {
		f.Close()
		return "", err
	}
	return path, f.Close()
}

// newPrefix is the run's unique key prefix.
func newPrefix() string {
	b := make([]byte, 6)
	rand.Read(b)
	return "lc" + hex.EncodeToString(b)
}

// openTarget makes the backend named by spec: it starts an embedded etcd
// for "etcd" and "etcd-mutex", and a local redis-server, PostgreSQL,
// ZooKeeper or etcd server process for "redis", "postgres", "zookeeper"
// ("zookeeper-unfenced") and "etcd34" ("etcd34-mutex"), which verify may
// then stop and restart (the coordinator-crash fault). shown is spec
// without credentials.
func openTarget(ctx context.Context, spec, prefix string) (tg realrun.Target, shown string, stop func(), err error) {
	stop = func() {}
	switch {
	case spec == "etcd" || spec == "etcd-mutex":
		s, err := etcd.StartEmbedded(ctx)
		if err != nil {
			return tg, spec, stop, err
		}
		tg = etcdTarget(spec == "etcd-mutex", s.Addr, prefix)
		return tg, spec + " (embedded, " + s.Addr + ")", func() { s.Close() }, nil
	case spec == "redis":
		p, err := servers.StartRedis(ctx)
		if err != nil {
			return tg, spec, stop, err
		}
		tg, shown, _, err = openTarget(ctx, "redis://"+p.Addr, prefix)
		tg.Server = p
		return tg, "redis (started here, " + p.Addr + ")", func() { p.Close() }, err
	case spec == "postgres":
		p, url, err := servers.StartPostgres(ctx)
		if err != nil {
			return tg, spec, stop, err
		}
		tg, shown, _, err = openTarget(ctx, url, prefix)
		tg.Server = p
		return tg, "postgres (started here, " + p.Addr + ")", func() { p.Close() }, err
	case spec == "zookeeper" || spec == "zookeeper-unfenced":
		p, err := servers.StartZooKeeper(ctx)
		if err != nil {
			return tg, spec, stop, err
		}
		info := zookeeper.Info()
		if spec != "zookeeper" {
			info = zookeeper.UnfencedInfo()
		}
		tg = zkTarget(spec == "zookeeper", info, p.Addr, prefix)
		tg.Server = p
		return tg, spec + " (ZooKeeper started here, " + p.Addr + ")", func() { p.Close() }, checkReachable(ctx, tg)
	case spec == "etcd34" || spec == "etcd34-mutex":
		p, version, err := servers.StartEtcd(ctx)
		if err != nil {
			return tg, spec, stop, err
		}
		if !strings.HasPrefix(version, "3.4.") {
			p.Close()
			return tg, spec, stop, fmt.Errorf("%s: the etcd server installed is %s, not 3.4 (apt-get install -y etcd-server on Debian 12, or set LEASECHECK_ETCD_BIN)", spec, version)
		}
		tg = etcdTarget(spec == "etcd34-mutex", p.Addr, prefix)
		tg.Server = p
		return tg, spec + " (etcd " + version + " started here, " + p.Addr + ")", func() { p.Close() }, checkReachable(ctx, tg)
	case strings.HasPrefix(spec, "zk://") || strings.HasPrefix(spec, "zk-unfenced://"):
		u, err := url.Parse(spec)
		if err != nil || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") {
			return tg, redact(spec), stop, errors.New("bad ZooKeeper address: want zk://HOST:PORT")
		}
		info, err := zookeeper.ServerInfo(ctx, u.Host, u.Scheme == "zk")
		if err != nil {
			return tg, redact(spec), stop, fmt.Errorf("zookeeper at %s is not usable: %w", u.Host, err)
		}
		tg = zkTarget(u.Scheme == "zk", info, u.Host, prefix)
		return tg, redact(spec), stop, checkReachable(ctx, tg)
	case strings.HasPrefix(spec, "etcd://") || strings.HasPrefix(spec, "etcd-mutex://"):
		u, err := url.Parse(spec)
		if err != nil || u.Host == "" {
			return tg, redact(spec), stop, errors.New("bad etcd address: want etcd://HOST:PORT")
		}
		tg = etcdTarget(u.Scheme == "etcd-mutex", u.Host, prefix)
		return tg, redact(spec), stop, checkReachable(ctx, tg)
	case strings.HasPrefix(spec, "redis://") || strings.HasPrefix(spec, "rediss://"):
		addr, err := redis.Addr(spec)
		if err != nil {
			return tg, redact(spec), stop, errors.New("bad Redis URL: want redis://[user:password@]HOST:PORT[/db]")
		}
		p := "leasecheck:" + prefix + ":"
		tg = realrun.Target{Info: redis.Info(), Addr: addr, Open: func(ctx context.Context, addr string) (backend.Backend, error) {
			return redis.Open(ctx, spec, addr, p)
		}}
		return tg, redact(spec), stop, checkReachable(ctx, tg)
	case strings.HasPrefix(spec, "postgres://") || strings.HasPrefix(spec, "postgresql://"):
		addr, err := postgres.Addr(spec)
		if err != nil {
			return tg, redact(spec), stop, errors.New("bad PostgreSQL URL: want postgres://USER[:PASSWORD]@HOST:PORT/DB")
		}
		tg = realrun.Target{Info: postgres.Info(), Addr: addr, Open: func(ctx context.Context, addr string) (backend.Backend, error) {
			return postgres.Open(ctx, spec, addr, prefix)
		}}
		return tg, redact(spec), stop, checkReachable(ctx, tg)
	}
	return tg, redact(spec), stop, fmt.Errorf("unknown backend %q: want etcd, etcd-mutex, redis, postgres, zookeeper, zookeeper-unfenced, etcd34, etcd34-mutex, etcd://HOST:PORT, etcd-mutex://HOST:PORT, zk://HOST:PORT, zk-unfenced://HOST:PORT, redis://HOST:PORT or postgres://USER@HOST:PORT/DB", redact(spec))
}

// zkTarget is the ZooKeeper backend at addr, its znodes under
// /leasecheck/PREFIX.
func zkTarget(fenced bool, info backend.Info, addr, prefix string) realrun.Target {
	root := "/leasecheck/" + prefix
	tg := realrun.Target{Info: info, Addr: addr, Open: func(ctx context.Context, a string) (backend.Backend, error) {
		return zookeeper.Open(ctx, a, root)
	}}
	if !fenced {
		tg.Open = func(ctx context.Context, a string) (backend.Backend, error) {
			return zookeeper.OpenUnfenced(ctx, a, root)
		}
	}
	return tg
}

func etcdTarget(mutex bool, addr, prefix string) realrun.Target {
	p := "/leasecheck/" + prefix
	if mutex {
		return realrun.Target{Info: etcd.MutexInfo(), Addr: addr, Open: func(ctx context.Context, a string) (backend.Backend, error) {
			return etcd.OpenMutex(ctx, a, p)
		}}
	}
	return realrun.Target{Info: etcd.Info(), Addr: addr, Open: func(ctx context.Context, a string) (backend.Backend, error) {
		return etcd.Open(ctx, a, p)
	}}
}

// checkReachable opens one client directly (no proxy) within 15s, so a
// backend that is down, hangs or answers garbage is reported before the run.
func checkReachable(ctx context.Context, tg realrun.Target) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	type result struct {
		b   backend.Backend
		err error
	}
	ch := make(chan result, 1)
	go func() {
		b, err := tg.Open(ctx, tg.Addr)
		ch <- result{b, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return fmt.Errorf("%s at %s is not usable: %w", tg.Info.Name, tg.Addr, r.err)
		}
		if c, ok := r.b.(backend.Cleaner); ok {
			c.Cleanup(ctx)
		}
		return r.b.Close()
	case <-ctx.Done():
		return fmt.Errorf("%s at %s did not answer within 15s", tg.Info.Name, tg.Addr)
	}
}

// redact drops the password from a URL for display.
func redact(spec string) string {
	u, err := url.Parse(spec)
	if err != nil || u.Host == "" {
		if i := strings.LastIndex(spec, "@"); i >= 0 {
			return "…@" + spec[i+1:]
		}
		return spec
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// scrub removes the spec's password from an error message.
func scrub(msg, spec string) string {
	if u, err := url.Parse(spec); err == nil {
		if pw, has := u.User.Password(); has && pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
		}
	}
	return msg
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

func writeHistoryTo(w io.Writer, res *realrun.Result) error {
	return model.WriteHistory(w, res.History)
}
