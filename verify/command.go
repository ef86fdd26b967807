package verify

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/internal/impl/mutants"
	"github.com/leasecheck/leasecheck/internal/realrun"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/machine"
)

// Exit statuses (campaign's, shared by every leasecheck command).
const (
	ExitOK        = campaign.ExitOK        // every property held in every round
	ExitViolation = campaign.ExitViolation // a round violated a property
	ExitUsage     = campaign.ExitUsage     // bad usage, an unusable backend, or one that stopped answering mid-run
	ExitUnknown   = campaign.ExitUnknown   // a history undecided within the search budget
)

// defaultShrinkFor is how long verify shrinks one failing round by
// default (--shrink-for): against a real backend each candidate is a real
// run of seconds.
const defaultShrinkFor = 60 * time.Second

// Command is `verify` for a set of backends: `leasecheck verify` is one
// with the built-in table, and a user's own main is another with its own.
// Both run the same code: flags, faults, progress bar, text and JSON
// summary, saved failures (shrunk, with their timeline pages and stories),
// exit statuses.
type Command struct {
	// Name is how messages, usage and replay lines name the command:
	// "leasecheck verify", or a user's program name.
	Name string
	// Backends is the registry --backend chooses from.
	Backends []Backend
	// Default is --backend's default: a Backend's Name (empty: the first's).
	Default string

	// rerun is how replay lines start when Name is not a command the user
	// can type (Main's, for a program `go run` built); empty: Name.
	rerun string
}

// Main runs a Command named after the program on os.Args, for backends,
// and exits with its status: the whole of a user's verify program is
//
//	func main() { verify.Main(verify.Backend{Name: "mylock", Open: ...}) }
//
// An interrupt (SIGINT, SIGTERM) ends the round in progress, cleans up
// what it stored, and exits.
//
// Each owner's client runs in a child process of the program by default
// (--clients): the program re-executed, which Main serves before it
// parses a flag (ServeClients), so nothing in main before Main may need
// the command line.
func Main(backends ...Backend) {
	// Main is reached in the re-executed program, test binaries too.
	serveClients(backends, true)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	c := Command{Name: filepath.Base(os.Args[0]), Backends: backends, rerun: rerunCommand()}
	code := c.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// config is one invocation's flags, parsed and checked.
type config struct {
	spec                  string
	duration, ttl         time.Duration
	ttlSet                bool
	faultList             string
	kinds                 []faults.Kind
	seeds                 int
	first                 uint64
	scenarioFile          string
	sc                    *scenario.Scenario
	mutant                string
	newHolder             func(holder.Config) machine.Holder
	holderNote            string
	out                   string
	maxSaved              int
	shrinkFor             time.Duration
	failFast, json, quiet bool
	progress              bool
	budget                time.Duration
	clients               string // clientsProcess or clientsInProcess
}

// Run parses args (verify's flags), runs the rounds and prints the
// summary; it returns the exit status. Failures are told on stderr as they
// happen, the summary goes to stdout.
func (c Command) Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if c.Name == "" {
		c.Name = "verify"
	}
	// In a client process of this program (the program re-executed by a
	// verify run, with no arguments), this serves the client and exits:
	// before a flag is parsed, the way Go test helpers are served.
	serveClients(c.Backends, false)
	cfg, code, ok := c.parse(args, stdout, stderr)
	if !ok {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "%s: %s\n", c.Name, scrub(fmt.Sprintf(format, a...), cfg.spec))
		return ExitUsage
	}
	b, err := lookup(c.Backends, cfg.spec)
	if err != nil {
		return fail("%v", err)
	}
	prefix := newPrefix()
	opened, err := b.Open(ctx, cfg.spec, prefix)
	if err != nil {
		return fail("%v", err)
	}
	if opened.Close != nil {
		defer opened.Close()
	}
	tg := opened.Target
	shown := opened.Shown
	if shown == "" {
		shown = redact(cfg.spec)
	}
	if err := tg.Info.Check(); err != nil {
		return fail("backend %s: %v", shown, err)
	}
	if tg.Open == nil {
		return fail("backend %s: Open returned a target without a client (Target.Open)", shown)
	}
	clients := &clientLog{}
	if tg, err = chooseClients(ctx, cfg.clients, cfg.spec, prefix, b.Name, tg, clients); err != nil {
		return fail("%v", err)
	}
	if cfg.sc != nil {
		cfg.kinds = planKinds(cfg.sc.Faults)
	} else {
		if cfg.faultList == "all" || cfg.faultList == "" {
			if tg.Cluster != nil { // "all" on a cluster: the faults between its servers too
				cfg.kinds = append(cfg.kinds, faults.ClusterKinds...)
			}
			// "all" includes the faults at each client's socket; they need
			// the server's address, and are named below when it gives none.
			// Not duplicate: its copy changes the server with a request the
			// history has no operation for (a copied acquire grants the
			// lease), so the checker cannot explain what follows; it runs
			// when named.
			for _, k := range faults.NetworkKinds {
				if k != faults.Duplicate {
					cfg.kinds = append(cfg.kinds, k)
				}
			}
			// Every kind that applies; the rest are named with the reason, so
			// that a kind left out is never a silent gap in the verdict.
			for _, k := range cfg.kinds {
				if why := realrun.NotApplicable(tg, k); why != "" {
					fmt.Fprintf(stderr, "verify: fault %s not applicable to %s: %s\n", k, shown, why)
				}
			}
			cfg.kinds = realrun.ApplicableKinds(tg, cfg.kinds)
		}
		for _, k := range cfg.kinds {
			if why := realrun.NotApplicable(tg, k); why != "" {
				return fail("fault %q is not applicable to %s: %s (applicable: %s)", k, shown, why, kindList(realrun.ApplicableKinds(tg, slices.Concat(faults.AllKinds, faults.ClusterKinds, faults.NetworkKinds))))
			}
		}
	}
	v := &verifier{c: c, cfg: cfg, shown: shown, stderr: stderr, info: tg.Info, keys: &keys{used: map[string]int{}}, clients: clients}
	v.impl = "backend:" + redact(cfg.spec)
	v.label = backendLabel(b.Name, cfg.spec)
	return v.run(ctx, tg, stdout)
}

func (c Command) parse(args []string, stdout, stderr io.Writer) (*config, int, bool) {
	def := c.Default
	if def == "" && len(c.Backends) > 0 {
		def = c.Backends[0].Name
	}
	cfg := &config{}
	fs := flag.NewFlagSet(c.Name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	// The backends are listed by --list-backends, a line each: in --help
	// the table of a few dozen made one line thousands of characters long.
	fs.StringVar(&cfg.spec, "backend", def, "the backend, by `NAME` or URL (--list-backends lists them)")
	listBackends := fs.Bool("list-backends", false, "list the backends --backend takes, one a line, and exit")
	fs.DurationVar(&cfg.duration, "duration", defaultDuration, "workload time per round (a faulted one: up to 3 TTLs more)")
	fs.DurationVar(&cfg.ttl, "ttl", defaultTTL, "lease TTL, raised to the backend's minimum (etcd: 2s)")
	fs.StringVar(&cfg.faultList, "faults", "all", "comma-separated fault `KINDS`; \"all\": those that apply")
	fs.IntVar(&cfg.seeds, "seeds", 1, "rounds to run (seeds first, first+1, ...)")
	fs.Uint64Var(&cfg.first, "first", 1, "the first seed")
	fs.StringVar(&cfg.scenarioFile, "scenario", "", "replay this scenario `FILE` (a saved failure, a counterexample)")
	fs.StringVar(&cfg.mutant, "mutant", "", "run the holders with the planted bug `NAME` (leasecheck mutants)")
	fs.StringVar(&cfg.out, "out", "leasecheck-failures", "where failing rounds are saved")
	fs.IntVar(&cfg.maxSaved, "save", campaign.DefaultMaxSaved, "save (and shrink) the first `N` failing rounds (-1: all)")
	fs.DurationVar(&cfg.shrinkFor, "shrink-for", defaultShrinkFor, "time to shrink each saved failure, a real run per try; 0: save it\nas it ran (the default with --scenario)")
	fs.BoolVar(&cfg.failFast, "fail-fast", false, "stop at the first failing round")
	fs.BoolVar(&cfg.json, "json", false, "print the summary as one JSON object")
	fs.DurationVar(&cfg.budget, "timeout", defaultBudget, "linearizability search budget per history")
	fs.BoolVar(&cfg.quiet, "quiet", false, "do not log injected faults on standard error")
	fs.BoolVar(&cfg.progress, "progress", true, "show a progress bar when stderr is a terminal")
	fs.StringVar(&cfg.clients, "clients", clientsProcess, "`WHERE` clients run: process (one each) or in-process")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s [--backend SPEC] [--seeds N] [--faults KINDS]\n"+
			"         [--duration D] [--ttl D] [--scenario FILE] [--mutant NAME] [--json] ...\n"+
			"       %s --list-backends\n", c.Name, c.Name)
		fmt.Fprintln(fs.Output(), "\nRuns holders against a real lease backend under real faults (pauses, clock\n"+
			"faults, delays and cuts at a proxy, crashes, server restarts), records the\n"+
			"history and checks it; --scenario replays a saved one. Failing rounds are\n"+
			"shrunk (--shrink-for), saved with page, story and replay line. Exit status: 0\n"+
			"all hold, 1 a violation, 2 bad usage or an unusable backend, 3 undecided.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, ExitOK, false
		}
		return nil, ExitUsage, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected arguments %q\n", c.Name, fs.Args())
		return nil, ExitUsage, false
	}
	if *listBackends {
		for i := range c.Backends {
			fmt.Fprintln(stdout, c.Backends[i].usage())
		}
		return nil, ExitOK, false
	}
	failf := func(format string, a ...any) (*config, int, bool) {
		fmt.Fprintf(stderr, "%s: %s\n", c.Name, fmt.Sprintf(format, a...))
		return nil, ExitUsage, false
	}
	if len(c.Backends) == 0 {
		return failf("no backends to verify (Command.Backends is empty)")
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	cfg.ttlSet = set["ttl"]
	if cfg.seeds < 1 || cfg.duration <= 0 || cfg.ttl <= 0 {
		return failf("--seeds, --duration and --ttl must be positive")
	}
	if cfg.clients != clientsProcess && cfg.clients != clientsInProcess {
		return failf("--clients is %q or %q, not %q", clientsProcess, clientsInProcess, cfg.clients)
	}
	if cfg.shrinkFor < 0 || cfg.budget <= 0 {
		return failf("--shrink-for must be >= 0 and --timeout positive")
	}
	var err error
	if cfg.kinds, err = faults.ParseKinds(cfg.faultList); err != nil {
		return failf("%v", err)
	}
	if cfg.scenarioFile != "" {
		if set["faults"] || set["duration"] {
			return failf("--scenario brings its own fault plan and horizon: drop --faults and --duration")
		}
		if cfg.sc, err = scenario.Load(cfg.scenarioFile); err != nil {
			return failf("%v", err)
		}
		// Replaying a saved failure replays it: it was shrunk before it was
		// saved, and shrinking it again by default would spend a minute of
		// real runs to keep nothing. --shrink-for asks for it.
		if !set["shrink-for"] {
			cfg.shrinkFor = 0
		}
		// A scenario a failing verify round saved names its backend.
		if spec, ok := strings.CutPrefix(cfg.sc.Implementation, "backend:"); ok && !set["backend"] && !strings.Contains(spec, "xxxxx") {
			cfg.spec = spec
		}
	}
	if cfg.mutant, cfg.newHolder, cfg.holderNote, err = holderMachine(cfg.mutant, cfg.sc); err != nil {
		return failf("%v", err)
	}
	if cfg.maxSaved == 0 {
		cfg.out = ""
	}
	return cfg, ExitOK, true
}

// holderMachine is the holder machine verify runs: the reference, or the
// holder mutant named by --mutant (or by the scenario's implementation). A
// coordinator or resource mutant has no place against a real backend: the
// backend is the coordinator and the store.
func holderMachine(name string, sc *scenario.Scenario) (string, func(holder.Config) machine.Holder, string, error) {
	from := "--mutant"
	if name == "" && sc != nil {
		if n, ok := strings.CutPrefix(sc.Implementation, "mutant:"); ok {
			if m := mutants.ByName(n); m != nil && m.Component == mutants.Holder {
				name, from = n, "the scenario's implementation"
			}
		}
	}
	if name == "" {
		return "", nil, "", nil
	}
	m := mutants.ByName(name)
	if m == nil {
		return "", nil, "", fmt.Errorf("unknown mutant %q (see leasecheck mutants)", name)
	}
	if m.Component != mutants.Holder {
		return "", nil, "", fmt.Errorf("mutant %q is a %s bug; against a real backend the backend is the %s (holder mutants only)", name, m.Component, m.Component)
	}
	return name, m.Machines().NewHolder, fmt.Sprintf(", holders with planted bug %s (from %s)", name, from), nil
}

// planKinds lists the kinds a plan holds, in AllKinds' order, then
// ClusterKinds', then NetworkKinds'.
func planKinds(p faults.Plan) []faults.Kind {
	c := p.Counts()
	var out []faults.Kind
	for _, k := range slices.Concat(faults.AllKinds, faults.ClusterKinds, faults.NetworkKinds) {
		if c[k] > 0 {
			out = append(out, k)
		}
	}
	return out
}

func kindList(ks []faults.Kind) string {
	if len(ks) == 0 {
		return "none"
	}
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ",")
}

// verifier is one invocation's run.
type verifier struct {
	c      Command
	cfg    *config
	shown  string // the backend as output names it
	impl   string // "backend:SPEC" without its password
	label  string // the backend in saved files' names (backendLabel)
	info   backend.Info
	stderr io.Writer
	keys   *keys
	bar    *progressbar.ProgressBar
	shrink *target // replays candidates as they are (no retargeting)
	judge  campaign.JudgeOptions
	seed   uint64 // the round in progress (rounds run one at a time: campaign.Config.Sequential)

	logMu sync.Mutex // stderr: the fault log, the failures
	sum   *Summary
	// clients is where the clients ran: the mode, every client process.
	clients *clientLog
	saved   int // failures saved
	told    int // failures described on stderr
}

func (v *verifier) run(ctx context.Context, tg RunTarget, stdout io.Writer) int {
	cfg := v.cfg
	opt := realrun.Options{NewHolder: cfg.newHolder}
	if cfg.sc == nil || cfg.ttlSet {
		opt.TTL = cfg.ttl
	}
	rounds := &target{tg: tg, impl: v.impl, opt: opt, keys: v.keys}
	rounds.opt.Retarget = cfg.sc == nil // the generated workload's faults strike whoever holds the lease
	// Shrink candidates are derived from the scenario as run (each fault
	// aimed at the holder it struck): replayed as they are.
	v.shrink = &target{tg: tg, impl: v.impl, opt: opt, keys: v.keys}

	var gen func(seed uint64) *scenario.Scenario
	if cfg.sc != nil {
		realTTL := realrun.AutoTTL(tg.Info, cfg.sc.TTL)
		if cfg.ttlSet {
			realTTL = cfg.ttl
		}
		fmt.Fprintf(v.stderr, "%s: %s, scenario %s (%d holders, TTL %dms, %d faults: %s) replayed %d time(s), seeds %d..%d, at TTL %v%s\n",
			v.c.Name, v.shown, cfg.scenarioFile, len(cfg.sc.Holders), cfg.sc.TTL, len(cfg.sc.Faults), kindList(cfg.kinds), cfg.seeds,
			cfg.first, cfg.first+uint64(cfg.seeds)-1, realTTL, cfg.holderNote)
		fmt.Fprintf(v.stderr, "  clients: %s\n", v.clients.note)
		gen = func(seed uint64) *scenario.Scenario {
			sc := cfg.sc.Clone()
			sc.Key = fmt.Sprintf("k%d", seed)
			sc.Implementation = v.impl
			if sc.FaultKinds == nil {
				sc.FaultKinds = cfg.kinds
			}
			return sc
		}
	} else {
		fmt.Fprintf(v.stderr, "%s: %s, seeds %d..%d, %v each, TTL %v, faults %s%s\n",
			v.c.Name, v.shown, cfg.first, cfg.first+uint64(cfg.seeds)-1, cfg.duration, cfg.ttl, kindList(cfg.kinds), cfg.holderNote)
		fmt.Fprintf(v.stderr, "  clients: %s\n", v.clients.note)
		gen = func(seed uint64) *scenario.Scenario {
			sc := realrun.Workload(tg, realrun.Config{Seed: seed, Duration: cfg.duration, TTL: cfg.ttl, Faults: cfg.kinds, Key: fmt.Sprintf("k%d", seed)})
			sc.Implementation = v.impl
			return sc
		}
	}
	if !cfg.quiet {
		log := func(seed *uint64) func(string, ...any) {
			return func(format string, args ...any) {
				v.logMu.Lock()
				defer v.logMu.Unlock()
				if v.bar != nil {
					v.bar.Clear()
				}
				fmt.Fprintf(v.stderr, "  seed %d %s\n", *seed, fmt.Sprintf(format, args...))
			}
		}
		rounds.opt.Log = log(&v.seed) // the shrink candidates' faults are not logged: they are many
	}
	if f, ok := v.stderr.(*os.File); ok && cfg.progress && term.IsTerminal(int(f.Fd())) {
		v.bar = progressbar.NewOptions(cfg.seeds, progressbar.OptionSetWriter(v.stderr), progressbar.OptionSetDescription("rounds"),
			progressbar.OptionShowCount(), progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
	}
	judge := campaign.JudgeOptions{Budget: cfg.budget}
	v.judge = judge
	v.sum = newSummary(tg.Info, campaign.NewSummary(v.impl, cfg.first, cfg.kinds, rounds.Properties(), false), cfg.kinds)
	// What a library that renews by itself sent in each round (renew-rate).
	rate := &roundRates{interval: tg.Info.RenewInterval}
	// Its loss signal on every hold of every round, whatever the faults.
	losses := &roundLosses{}
	rounds.losses = func(res *realrun.Result) { losses.add(v.seed, res) }
	ccfg := campaign.Config{
		Target: rounds,
		Scenario: func(seed uint64) *scenario.Scenario {
			v.seed = seed // rounds run one at a time: the fault log's seed
			return gen(seed)
		},
		Kinds: cfg.kinds,
		First: cfg.first,
		Seeds: cfg.seeds,
		// Real time: one round at a time, and the next only after the last
		// one's failure was shrunk and saved, so no run slows another.
		Sequential: true,
		Judge:      judge,
		FailFast:   cfg.failFast,
		OnOutcome: func(seed uint64, o *campaign.Outcome) error {
			v.sum.add(o)
			rate.add(seed, o.History)
			if v.bar != nil {
				v.bar.Add(1)
			}
			return nil
		},
		OnFailure: func(f *campaign.Failure) { v.failure(ctx, f) },
	}
	wall := time.Now()
	sum, err := campaign.Run(ctx, ccfg)
	if v.bar != nil {
		v.bar.Finish()
	}
	if err != nil {
		return v.runError(err)
	}
	v.sum.Summary = sum
	// A library that holds while it says so: its own signal, judged on
	// the real server after the rounds (LossSignal).
	if bv := judgeBeliefs(ctx, tg, cfg.ttl, cfg.budget, cfg.out); bv != nil {
		rate.judge(bv)
		v.sum.Beliefs = bv
	}
	v.sum.Beliefs = losses.judge(v.sum.Beliefs)
	v.sum.Clients = v.clients.summary()
	if v.told > maxTold {
		more := v.told - maxTold
		fmt.Fprintf(v.stderr, "\n... and %d more failing %s, not described (see failed_seeds)\n", more, plural(more, "round", "rounds"))
	}
	if cfg.json {
		if err := v.sum.writeJSON(stdout); err != nil {
			fmt.Fprintf(v.stderr, "%s: %v\n", v.c.Name, err)
			return ExitUsage
		}
	} else {
		fmt.Fprintln(stdout)
		v.sum.writeText(stdout, v.shown, v.info, time.Since(wall))
		if v.sum.Beliefs != nil {
			v.sum.Beliefs.writeText(stdout)
		}
	}
	if st := v.sum.Status(); st != ExitOK || v.sum.Beliefs == nil || v.sum.Beliefs.OK {
		return st
	}
	return ExitViolation
}
