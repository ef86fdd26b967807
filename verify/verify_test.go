package verify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/impl/memstore"
	"github.com/leasecheck/leasecheck/internal/realrun"
	"github.com/leasecheck/leasecheck/internal/scenario"
	"github.com/leasecheck/leasecheck/machine"
	"github.com/leasecheck/leasecheck/model"
	"github.com/leasecheck/leasecheck/verify"
)

// These tests run the whole command against in-process coordinators
// (real time, real goroutines, no server): the reference, and one whose
// writes are not fenced. The real servers are cmd/leasecheck's tests and
// examples/redislock's.

// unfenced is a lock with a plain write: the reference's leases, but Write
// stores whatever it is given (etcd-mutex's shape, in process).
type unfenced struct {
	*memstore.Store
	mu   sync.Mutex
	data map[string]string
}

func (u *unfenced) Write(key, owner string, fence int64, value string, now int64) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.data[key] = value
	return nil
}

func (u *unfenced) Read(key string) (string, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	v, ok := u.data[key]
	return v, ok
}

// shared hands every client the same in-process coordinator; dead, when
// set, makes it stop answering once it has answered that many requests.
type shared struct {
	backend.Backend
	mu      sync.Mutex
	answers int
	dieAt   int
}

func (*shared) Close() error { return nil }

func (s *shared) Do(ctx context.Context, req backend.Request) (backend.Response, error) {
	s.mu.Lock()
	dead := s.dieAt > 0 && s.answers >= s.dieAt
	s.answers++
	s.mu.Unlock()
	if dead {
		return backend.Response{}, errors.New("connection refused")
	}
	return s.Backend.Do(ctx, req)
}

func (s *shared) ServerNow(ctx context.Context) (time.Time, error) {
	s.mu.Lock()
	dead := s.dieAt > 0 && s.answers >= s.dieAt
	s.mu.Unlock()
	if dead {
		return time.Time{}, errors.New("connection refused")
	}
	return s.Backend.(backend.Clock).ServerNow(ctx)
}

// memBackend is a registry entry for an in-process coordinator: "mem" the
// reference, "mem-unfenced" the plain write, "mem-dies" the reference
// dying after 200 answers. Any spec with its scheme works too ("mem://x").
func memBackend(name string) verify.Backend {
	return verify.Backend{Name: name, Schemes: []string{name}, Open: func(ctx context.Context, spec, prefix string) (*verify.Opened, error) {
		clk := &realrun.SteppableClock{}
		var c machine.Clocked = memstore.New()
		if name == "mem-unfenced" {
			c = &unfenced{Store: memstore.New(), data: map[string]string{}}
		}
		b := &shared{Backend: backend.InProcess(c, time.Microsecond, clk.Now)}
		if name == "mem-dies" {
			b.dieAt = 200
		}
		info := backend.InProcessInfo(name)
		if name == "mem-unfenced" {
			info.Writes, info.FencedWrite = backend.UncheckedWrites, "none: a plain write"
		}
		if name == "mem-undeclared" {
			info.Writes = backend.WritesUndeclared // an adapter that forgot it
		}
		return &verify.Opened{Target: realrun.Target{Info: info, Clock: clk,
			Open: func(context.Context, string) (backend.Backend, error) { return b, nil }}}, nil
	}}
}

func command() verify.Command {
	return verify.Command{Name: "memverify", Backends: []verify.Backend{memBackend("mem"), memBackend("mem-unfenced"), memBackend("mem-dies"), memBackend("mem-undeclared")}}
}

func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var so, se bytes.Buffer
	start := time.Now()
	code := command().Run(context.Background(), args, &so, &se)
	t.Logf("memverify %s: exit %d in %v\n%s%s", strings.Join(args, " "), code, time.Since(start).Round(time.Millisecond), so.String(), se.String())
	return code, so.String(), se.String()
}

type summary struct {
	Backend          string         `json:"backend"`
	Implementation   string         `json:"implementation"`
	Seeds            int            `json:"seeds"`
	Ops              int            `json:"ops"`
	Faults           map[string]int `json:"faults"`
	FaultsPartial    map[string]int `json:"faults_partial"`
	Violations       map[string]int `json:"violations"`
	Undecided        int            `json:"undecided"`
	Failed           int            `json:"failed"`
	FailedSeeds      []uint64       `json:"failed_seeds"`
	TimeUnit         string         `json:"time_unit"`
	ClockUncertainty int64          `json:"clock_uncertainty"`
	FenceSource      string         `json:"fence_source"`
	FencedWrite      string         `json:"fenced_write"`
	Histories        []string       `json:"histories"`
}

func decode(t *testing.T, out string) summary {
	t.Helper()
	var s summary
	d := json.NewDecoder(strings.NewReader(out))
	if err := d.Decode(&s); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	return s
}

// TestCleanWithEveryFault: the reference coordinator with every fault kind
// that applies in process: exit 0, every kind injected, the summary run's
// fields and verify's own, nothing saved.
func TestCleanWithEveryFault(t *testing.T) {
	t.Parallel()
	code, out, _ := run(t, "--backend", "mem", "--seeds", "2", "--duration", "3s", "--ttl", "300ms", "--out", t.TempDir(), "--json", "--quiet")
	if code != verify.ExitOK {
		t.Fatalf("exit %d, want 0", code)
	}
	s := decode(t, out)
	if s.Backend != "mem" || s.Implementation != "backend:mem" || s.Seeds != 2 || s.Failed != 0 || len(s.FailedSeeds) != 0 ||
		s.TimeUnit != "us" || s.ClockUncertainty <= 0 || s.FenceSource == "" || len(s.Histories) != 0 || s.Ops < 50 {
		t.Errorf("summary %+v", s)
	}
	for _, p := range []string{"linearizable", "single-writer-per-fence", "fence-monotonic", "stop-on-renew-failure"} {
		if n, ok := s.Violations[p]; !ok || n != 0 {
			t.Errorf("violations[%s] = %d, %v: want every history property judged, at 0", p, n, ok)
		}
	}
	tg := realrun.Target{Clock: &realrun.SteppableClock{}}
	for _, k := range realrun.ApplicableKinds(tg, faults.AllKinds) {
		if s.Faults[string(k)] == 0 {
			t.Errorf("fault %s never injected: %v (partial %v)", k, s.Faults, s.FaultsPartial)
		}
	}
}

// TestUnfencedCaughtSavedReplayed: the plain write is caught under a
// holder pause; the failure is shrunk within its time budget and saved —
// the scenario naming the backend (no other flag needed to replay it but
// the TTL), the history with its fault records, the timeline page, the
// story — and the printed replay line reproduces it.
func TestUnfencedCaughtSavedReplayed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, out, errOut := run(t, "--backend", "mem-unfenced", "--faults", "pause", "--duration", "3s", "--ttl", "300ms", "--out", dir, "--shrink-for", "20s", "--json")
	if code != verify.ExitViolation {
		t.Fatalf("exit %d, want %d", code, verify.ExitViolation)
	}
	s := decode(t, out)
	if s.Failed != 1 || s.Violations["linearizable"] != 1 || len(s.Histories) != 1 || s.Faults["pause"] != 1 {
		t.Errorf("summary %+v", s)
	}
	if !strings.Contains(errOut, "VIOLATION linearizable") || !strings.Contains(errOut, "'s write was accepted, but the lease was held by") {
		t.Errorf("stderr does not tell the violation's story")
	}
	if !strings.Contains(errOut, "shrunk from ") && !strings.Contains(errOut, "saved as run: no smaller scenario") {
		t.Errorf("stderr does not say what the shrinking achieved")
	}
	base := strings.TrimSuffix(s.Histories[0], ".history.jsonl")
	replay := "memverify --backend mem-unfenced --ttl 300ms --scenario " + base + ".scenario.json"
	if !strings.Contains(errOut, "replay: "+replay) {
		t.Errorf("stderr lacks the replay line %q", replay)
	}
	sc, err := scenario.Load(base + ".scenario.json")
	if err != nil {
		t.Fatal(err)
	}
	if sc.Implementation != "backend:mem-unfenced" || len(sc.Expect) == 0 || len(sc.FaultKinds) != 1 || sc.FaultKinds[0] != faults.Pause {
		t.Errorf("saved scenario: implementation %q, expect %v, fault kinds %v", sc.Implementation, sc.Expect, sc.FaultKinds)
	}
	f, err := os.Open(s.Histories[0])
	if err != nil {
		t.Fatal(err)
	}
	h, err := model.ReadHistory(f, s.Histories[0])
	f.Close()
	if err != nil {
		t.Fatalf("the saved history does not read: %v", err)
	}
	if len(h.Faults) == 0 || h.Faults[0].Kind != string(faults.Pause) {
		t.Errorf("the saved history has fault records %+v, want the pause", h.Faults)
	}
	page, _ := os.ReadFile(base + ".html")
	story, _ := os.ReadFile(base + ".md")
	if !bytes.Contains(page, []byte("<html")) || !bytes.Contains(page, []byte(replay)) {
		t.Errorf("the timeline page is missing or does not give the replay line")
	}
	if !bytes.Contains(story, []byte("## Replay")) || !bytes.Contains(story, []byte(replay)) || !bytes.Contains(story, []byte("linearizable")) {
		t.Errorf("the story is missing its replay or its violation:\n%s", story)
	}
	// The story of a real run prints no internal values: no simulated
	// network, no raw work items; "At a glance" says why, not the raw
	// violation again.
	for _, bad := range []string{"network delay", "work [{", "fence 0"} {
		if bytes.Contains(story, []byte(bad)) {
			t.Errorf("the story says %q:\n%s", bad, story)
		}
	}
	// Keeping it is a command the user can run, not a call into
	// leasecheck's internal packages.
	if !bytes.Contains(story, []byte(replay+" --seeds 20")) || bytes.Contains(story, []byte("scenario.Load")) || bytes.Contains(story, []byte("realrun.")) {
		t.Errorf("the story does not keep it with the replay command:\n%s", story)
	}
	if glance, _, _ := strings.Cut(strings.SplitN(string(story), "## At a glance", 2)[1], "## The scenario"); strings.Contains(glance, "no order of the operations explains") {
		t.Errorf("At a glance repeats the raw violation:\n%s", glance)
	}
	// Every line the stories cite — on stderr and in the .md — is the op
	// of the saved history they describe, not a line of the round before
	// shrinking.
	if err := campaign.CheckCitedLines(s.Histories[0], errOut); err != nil {
		t.Errorf("stderr: %v", err)
	}
	if err := campaign.CheckCitedLines(s.Histories[0], string(story)); err != nil {
		t.Errorf("%s.md: %v", base, err)
	}

	// The replay line, as printed (--backend may even be left out: the
	// scenario names it). A real run does not repeat its interleaving
	// exactly, so it gets three rounds; one failing is reproduction.
	// It replays: no --shrink-for, and the saved failure is not shrunk again.
	code, out, errOut = run(t, "--ttl", "300ms", "--scenario", base+".scenario.json", "--seeds", "3", "--out", t.TempDir(), "--json", "--quiet")
	if code != verify.ExitViolation || decode(t, out).Failed == 0 {
		t.Errorf("the replay did not reproduce the failure: exit %d", code)
	}
	if strings.Contains(errOut, "shrinking seed") || strings.Contains(errOut, "shrunk from") {
		t.Errorf("the replay of a saved failure shrank it again:\n%s", errOut)
	}
}

// TestBackendDiesMidRun: a backend that stops answering ends the run
// within seconds (not its 60s workload) with exit 2, a message that says
// so, and the partial history saved and named.
func TestBackendDiesMidRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	start := time.Now()
	code, _, errOut := run(t, "--backend", "mem-dies", "--faults", "none", "--duration", "60s", "--ttl", "300ms", "--out", dir, "--quiet")
	took := time.Since(start)
	if code != verify.ExitUsage || !strings.Contains(errOut, "stopped answering") {
		t.Fatalf("exit %d, want %d saying the backend stopped answering", code, verify.ExitUsage)
	}
	if took >= 60*time.Second {
		t.Errorf("took %v: the run was not ended before its 60s workload (the bound is the workload, not a speed)", took)
	}
	partial, _ := filepath.Glob(filepath.Join(dir, "*.partial.history.jsonl"))
	if len(partial) != 1 || !strings.Contains(errOut, partial[0]) {
		t.Fatalf("partial history: files %v, not named on stderr", partial)
	}
	f, err := os.Open(partial[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if h, err := model.ReadHistory(f, partial[0]); err != nil || len(h.Ops) < 100 {
		t.Errorf("the partial history: %v", err)
	}
	for _, ext := range []string{".html", ".scenario.json"} {
		if _, err := os.Stat(strings.TrimSuffix(partial[0], ".history.jsonl") + ext); err != nil {
			t.Errorf("beside the partial history: %v", err)
		}
	}
}

// TestUsage: what the command refuses, with exit 2 and a message that
// says why; --help on the writer it is given, exit 0.
func TestUsage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--backend", "nope"}, `unknown backend "nope"; known: mem, mem-unfenced, mem-dies, mem-undeclared (--list-backends says what each takes)`},
		{[]string{"--backend", "nope://u:s3cret@h:1"}, "unknown backend"},
		{[]string{"--seeds", "0"}, "must be positive"},
		{[]string{"--faults", "bogus"}, "bogus"},
		{[]string{"--scenario", "/nonexistent.scenario.json"}, "nonexistent"},
		{[]string{"--mutant", "no-expiry"}, "holder mutants only"},
		{[]string{"extra"}, "unexpected arguments"},
		// A declaration left at its zero value is refused, naming what to set.
		{[]string{"--backend", "mem-undeclared"}, "Writes is not declared: set backend.CheckedWrites"},
		// A fault that cannot apply to the user's own server says why.
		{[]string{"--backend", "mem", "--faults", "coordinator-crash"}, "needs a server the harness starts, kills and restarts itself"},
	}
	for _, c := range cases {
		code, so, se := run(t, c.args...)
		if code != verify.ExitUsage || !strings.Contains(se, c.want) || so != "" {
			t.Errorf("%v: exit %d, stderr %q: want %d naming %q", c.args, code, se, verify.ExitUsage, c.want)
		}
		if strings.Contains(se, "s3cret") {
			t.Errorf("%v: the password was printed", c.args)
		}
	}
	var so bytes.Buffer
	if code := command().Run(context.Background(), []string{"--help"}, &so, &so); code != verify.ExitOK || !strings.Contains(so.String(), "usage: memverify") || !strings.Contains(so.String(), "--shrink-for") {
		t.Errorf("--help: exit %d\n%s", code, so.String())
	}
}

// TestListBackendsAndHelp: --list-backends prints each backend's line,
// one a line, on stdout; --help fits a screen (80 columns, 46 lines and a
// caller's examples)
// however many backends the table has and however long their lines are.
func TestListBackendsAndHelp(t *testing.T) {
	t.Parallel()
	c := command()
	c.Name = "leasecheck verify" // the longest name a usage line starts with
	for i := range 40 {
		c.Backends = append(c.Backends, verify.Backend{Name: fmt.Sprintf("long%d", i), Schemes: []string{fmt.Sprintf("long%d", i)},
			Usage: fmt.Sprintf("long%d (a backend whose line is long: %s) | long%d://HOST:PORT", i, strings.Repeat("words ", 12), i)})
	}
	var so, se bytes.Buffer
	if code := c.Run(context.Background(), []string{"--list-backends"}, &so, &se); code != verify.ExitOK || se.Len() != 0 {
		t.Fatalf("--list-backends: exit %d, stderr %q", code, se.String())
	}
	lines := strings.Split(strings.TrimSuffix(so.String(), "\n"), "\n")
	if len(lines) != len(c.Backends) {
		t.Fatalf("--list-backends printed %d lines for %d backends:\n%s", len(lines), len(c.Backends), so.String())
	}
	for i, l := range lines {
		if want := c.Backends[i].Usage; want == "" && !strings.HasPrefix(l, c.Backends[i].Name+" | ") || want != "" && l != want {
			t.Errorf("line %d %q: want backend %s's line", i+1, l, c.Backends[i].Name)
		}
	}
	so.Reset()
	if code := c.Run(context.Background(), []string{"--help"}, &so, &so); code != verify.ExitOK {
		t.Fatalf("--help: exit %d", code)
	}
	help := strings.Split(strings.TrimSuffix(so.String(), "\n"), "\n")
	if len(help) > 46 { // a screen's 50, with room for a caller's examples
		t.Errorf("--help is %d lines, more than 46", len(help))
	}
	for _, l := range help {
		w := 0
		for _, r := range l {
			if w++; r == '\t' {
				w = (w + 7) / 8 * 8 // to the next tab stop
			}
		}
		if w > 80 {
			t.Errorf("--help line of %d columns, over 80: %q", w, l)
		}
	}
	if !strings.Contains(so.String(), "--list-backends") || strings.Contains(so.String(), "long7") {
		t.Errorf("--help should point to --list-backends and list no backend:\n%s", so.String())
	}
}

// TestCredentialsNeverPrinted: a spec's password appears nowhere — not in
// the output, the error of a backend that quotes its URL, the saved
// scenario's implementation, the replay line, the page or the story.
func TestCredentialsNeverPrinted(t *testing.T) {
	t.Parallel()
	const spec = "mem-unfenced://admin:s3cret@127.0.0.1:1/db"
	code, so, se := run(t, "--backend", spec, "--faults", "pause", "--duration", "2s", "--ttl", "300ms", "--out", t.TempDir(), "--shrink-for", "0")
	if code != verify.ExitViolation {
		t.Fatalf("exit %d, want 1", code)
	}
	if strings.Contains(so+se, "s3cret") {
		t.Errorf("the password was printed")
	}
	if !strings.Contains(se, "--backend mem-unfenced://admin:xxxxx@127.0.0.1:1/db") {
		t.Errorf("the replay line does not name the backend without its password")
	}
	var dir string
	for _, l := range strings.Split(se, "\n") {
		if i := strings.Index(l, "--scenario "); i >= 0 {
			dir = filepath.Dir(strings.TrimSpace(l[i+len("--scenario "):]))
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(files) < 4 {
		t.Fatalf("saved files %v", files)
	}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if bytes.Contains(b, []byte("s3cret")) {
			t.Errorf("%s holds the password", f)
		}
	}
	failing := verify.Command{Name: "v", Backends: []verify.Backend{{Name: "x", Schemes: []string{"x"},
		Open: func(ctx context.Context, spec, prefix string) (*verify.Opened, error) {
			return nil, errors.New("cannot connect to " + spec) // a client library quoting its URL
		}}}}
	var out bytes.Buffer
	if code := failing.Run(context.Background(), []string{"--backend", "x://u:s3cret@h:1"}, &out, &out); code != verify.ExitUsage || strings.Contains(out.String(), "s3cret") {
		t.Errorf("exit %d, %q: want 2 and no password", code, out.String())
	}
}

// TestSavedNamesPerBackend: two registered backends whose clients report
// the same Info.Name (as etcd34-mutex and etcd-mutex do) save their
// failures at the same seed under different names into one --out, each
// printed in its replay line; a rerun whose failure differs is saved
// beside the first one (NAME-2), whose files stay as they were.
func TestSavedNamesPerBackend(t *testing.T) {
	t.Parallel()
	twin := memBackend("mem-unfenced") // the same client, Info.Name "mem-unfenced"
	twin.Name, twin.Schemes = "mem-unfenced-twin", nil
	c := command()
	c.Backends = append(c.Backends, twin)
	dir := t.TempDir()
	verifyInto := func(name string) (string, string) {
		var so, se bytes.Buffer
		code := c.Run(context.Background(), []string{"--backend", name, "--faults", "pause", "--duration", "3s", "--ttl", "300ms",
			"--out", dir, "--shrink-for", "0", "--json", "--quiet"}, &so, &se)
		if code != verify.ExitViolation {
			t.Fatalf("%s: exit %d, want %d\n%s%s", name, code, verify.ExitViolation, so.String(), se.String())
		}
		return so.String(), se.String()
	}
	histories := map[string]string{}
	for _, name := range []string{"mem-unfenced", "mem-unfenced-twin"} {
		out, errOut := verifyInto(name)
		s := decode(t, out)
		if len(s.Histories) != 1 || s.Backend != "mem-unfenced" {
			t.Fatalf("%s: summary %+v", name, s)
		}
		h := s.Histories[0]
		if !strings.Contains(filepath.Base(h), name+"-seed-") {
			t.Errorf("%s saved as %s: the name does not say which backend", name, h)
		}
		base := strings.TrimSuffix(h, ".history.jsonl")
		if !strings.Contains(errOut, "--scenario "+base+".scenario.json") {
			t.Errorf("%s: the replay line does not name %s.scenario.json:\n%s", name, base, errOut)
		}
		histories[name] = h
	}
	if histories["mem-unfenced"] == histories["mem-unfenced-twin"] {
		t.Fatalf("both saved as %s", histories["mem-unfenced"])
	}
	first := strings.TrimSuffix(histories["mem-unfenced"], ".history.jsonl") + ".scenario.json"
	before, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	// A real rerun never repeats exactly: its failure is another one,
	// saved beside the first (NAME-2), never over it nor refused.
	out, errOut := verifyInto("mem-unfenced")
	if strings.Contains(errOut, "not saved") {
		t.Errorf("the rerun's failure was not saved:\n%s", errOut)
	}
	second := strings.TrimSuffix(histories["mem-unfenced"], ".history.jsonl") + "-2.history.jsonl"
	if s := decode(t, out); len(s.Histories) != 1 || s.Histories[0] != second {
		t.Errorf("the rerun lists saved histories %v, want [%s]", s.Histories, second)
	}
	if !strings.Contains(errOut, "--scenario "+strings.TrimSuffix(second, ".history.jsonl")+".scenario.json") {
		t.Errorf("the rerun's replay line does not name its own file:\n%s", errOut)
	}
	if now, _ := os.ReadFile(first); !bytes.Equal(now, before) {
		t.Errorf("%s was overwritten by the rerun", first)
	}
}
