package leasetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasecheck/leasecheck/impl/backend"
)

// Factory returns a fresh backend and a function that stops it (and
// removes what it stored). Each property calls it once, and calls stop
// after every client of the property has returned. A request whose client
// gave up (a timeout) may still be on its way to the service then, so stop
// must close the backend's connections and wait until the service has
// applied what they carried before it deletes, or a late write lands after
// the delete (examples/redislock's Cleanup does this for Redis, and its
// TestCleanupAfterLateWrites holds writes to show it).
type Factory func() (b backend.Backend, stop func(), err error)

// outEnv is the environment variable that, when Options.Out is empty,
// names the directory where every property's history and report are saved.
const outEnv = "LEASETEST_OUT"

// Options configure the suite. The zero value means the defaults.
type Options struct {
	// Info describes the backend: its fences (none, sequential or
	// increasing), whether its writes are fenced, whether it reports its
	// clock (ServerTime: the backend must implement backend.Clock), how late
	// its leases may expire (Uncertainty) and its TTL granularity. The
	// suite runs what Info says applies and skips the rest with the reason.
	Info backend.Info
	// TTL of every lease; default 1s (rounded up to Info.TTLGranularity).
	// It should exceed twice Info.Uncertainty by a good margin, or the
	// checks that a lease is still live cannot be judged (they are then
	// noted, not failed).
	TTL time.Duration
	// OpTimeout bounds each request; default TTL/3, at least 100ms.
	OpTimeout time.Duration
	// Key prefixes the keys used; each property uses Key + "/" + its name.
	// Default "leasetest".
	Key string
	// CheckTimeout is the checker's search budget per property; default 30s.
	CheckTimeout time.Duration
	// Skip lists properties not to run (e.g. "Linearizable" when too slow).
	Skip []string
	// Expect lists properties the caller knows fail — a known finding, such
	// as Zombie for a lock whose writes are not fenced. Each is still run
	// and its report logged; Run fails if one of them passes (the
	// expectation is stale) instead of when it fails.
	Expect []string
	// Out is a directory where every property's history (format v1,
	// <Property>.history.jsonl, for `leasecheck check`) and report
	// (<Property>.txt) are saved, under a folder named after the test (Run)
	// or Info.Name (Check, Evaluate). Empty: $LEASETEST_OUT, if set.
	Out string
	// Log receives, when Run ends, the line naming the properties it did
	// not check and why (nil: standard error, so that it shows without -v).
	Log io.Writer
}

func (o *Options) defaults() {
	if o.TTL <= 0 {
		o.TTL = time.Second
	}
	if g := o.Info.TTLGranularity; g > 0 {
		o.TTL = (o.TTL + g - 1) / g * g
	}
	if o.OpTimeout <= 0 {
		o.OpTimeout = max(o.TTL/3, 100*time.Millisecond)
	}
	if o.Key == "" {
		o.Key = "leasetest"
	}
	if o.CheckTimeout <= 0 {
		o.CheckTimeout = 30 * time.Second
	}
	if o.Info.Name == "" {
		o.Info.Name = "backend"
	}
	if o.Out == "" {
		o.Out = os.Getenv(outEnv)
	}
}

// Properties lists the property names, in the order they are reported (a
// copy: the list is the suite's, not the caller's to change).
func Properties() []string { return slices.Clone(propertyNames) }

var propertyNames = []string{
	"Acquire", "MutualExclusion", "NoEarlyExpiry", "Expiry", "Renew", "RenewAfterExpiry",
	"Release", "NotHolder", "FenceIncreases", "StaleFence", "WriteAfterExpiry", "Zombie", "Linearizable", "LossSignal",
}

// property is one entry of the suite: its script, and what it presupposes.
type property struct {
	run func(*env)
	// needsFences: the whole property is about fencing tokens.
	needsFences bool
	// needsFencedWrites: the whole property is about the service refusing
	// writes; for a backend whose writes are not fenced, Zombie reports the
	// consequence once instead.
	needsFencedWrites bool
}

var properties = map[string]property{
	"Acquire":          {run: testAcquire},
	"MutualExclusion":  {run: testMutualExclusion},
	"NoEarlyExpiry":    {run: testNoEarlyExpiry},
	"Expiry":           {run: testExpiry},
	"Renew":            {run: testRenew},
	"RenewAfterExpiry": {run: testRenewAfterExpiry},
	"Release":          {run: testRelease},
	"NotHolder":        {run: testNotHolder},
	"FenceIncreases":   {run: testFenceIncreases, needsFences: true},
	"StaleFence":       {run: testStaleFence, needsFences: true},
	"WriteAfterExpiry": {run: testWriteAfterExpiry, needsFencedWrites: true},
	"Zombie":           {run: testZombie},
	"LossSignal":       {run: testLossSignal},
	"Linearizable":     {run: testLinearizable},
}

// Why a property does not apply, in the words the skip prints.
const (
	whyNoFences       = "Info.Fences is NoFences: grants carry no fencing token, so there is no fence to check"
	whyUnfencedWrites = "Info.Writes is UncheckedWrites: the service does not check writes; the missing protection is reported once, by Zombie"
)

// applies returns "" when the property applies to a backend described by
// info, else why not.
func applies(name string, info backend.Info) string {
	p := properties[name]
	switch {
	case p.needsFences && info.Fences == backend.NoFences:
		return whyNoFences
	case p.needsFencedWrites && info.Writes != backend.CheckedWrites:
		return whyUnfencedWrites
	}
	return ""
}

// Run runs every property as a parallel subtest of t, the way
// testing/fstest.TestFS checks a file system: a property that does not
// apply to the backend (Info) is skipped with the reason; each subtest's
// report is one t.Error (failed) or t.Log (passed, with notes) block, so
// parallel subtests do not interleave. The subtests finish before t does;
// stop shared servers with t.Cleanup, not with defer.
//
// An Info that leaves Fences or Writes undeclared is refused (t.Fatal,
// with what to declare): each decides which properties are checked. The
// properties skipped, and why, are also written to Options.Log (default
// standard error) when the suite ends, so that they show without -v (go test prints a test's
// output only with -v, or when the package fails, or when run in the
// package's directory).
func Run(t *testing.T, f Factory, opts Options) {
	t.Helper()
	opts.defaults()
	if err := opts.Info.Check(); err != nil {
		t.Fatalf("leasetest: %v", err)
	}
	var skipped []string
	for _, name := range propertyNames {
		if slices.Contains(opts.Skip, name) {
			skipped = append(skipped, fmt.Sprintf("%s (Options.Skip)", name))
		} else if why := applies(name, opts.Info); why != "" {
			skipped = append(skipped, fmt.Sprintf("%s (%s)", name, why))
		}
	}
	if len(skipped) > 0 {
		log := opts.Log
		if log == nil {
			log = os.Stderr
		}
		summary := skippedSummary(t.Name(), skipped)
		t.Cleanup(func() { // after the subtests
			t.Log(summary)
			fmt.Fprintln(log, summary)
		})
	}
	for _, name := range propertyNames {
		if slices.Contains(opts.Skip, name) {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if why := applies(name, opts.Info); why != "" {
				if slices.Contains(opts.Expect, name) {
					t.Fatalf("Options.Expect lists %s, but it does not apply: %s", name, why)
				}
				t.Skip(why)
			}
			res := runProperty(context.Background(), f, opts, name, outDir(opts.Out, t.Name()))
			if res.Skipped != "" { // it found out, running, that it does not apply
				t.Skip(res.Skipped)
			}
			report := res.Report()
			switch expected := slices.Contains(opts.Expect, name); {
			case expected && res.Failed():
				t.Log("expected (Options.Expect):\n" + report)
			case expected:
				t.Error("passed, but Options.Expect lists it as failing: remove it from Expect\n" + report)
			case res.Failed():
				t.Error("\n" + report)
			case len(res.Notes) > 0 || len(res.Saved) > 0:
				t.Log("\n" + report)
			}
		})
	}
}

// skippedSummary is the line Run ends with when some properties were not
// checked.
func skippedSummary(test string, skipped []string) string {
	return fmt.Sprintf("leasetest %s: %d of %d properties not checked: %s", test, len(skipped), len(propertyNames), strings.Join(skipped, "; "))
}

// Check runs every property (concurrently) and returns nil, or an error
// listing every failure: each failed property's report, which starts with
// its name. Properties in opts.Expect that fail are not errors; those that
// pass are.
func Check(ctx context.Context, f Factory, opts Options) error {
	if err := opts.Info.Check(); err != nil {
		return err
	}
	var errs []error
	for _, r := range Evaluate(ctx, f, opts) {
		expected := slices.Contains(opts.Expect, r.Property)
		switch {
		case r.Skipped != "":
			if expected {
				errs = append(errs, fmt.Errorf("%s: expected to fail (Options.Expect) but does not apply: %s", r.Property, r.Skipped))
			}
		case r.Failed() && !expected:
			errs = append(errs, errors.New(r.Report()))
		case !r.Failed() && expected:
			errs = append(errs, fmt.Errorf("%s: passed, but Options.Expect lists it as failing", r.Property))
		}
	}
	return errors.Join(errs...)
}

// Evaluate runs every property not in opts.Skip (concurrently) and returns
// their results in the order of Properties; those that do not apply carry
// the reason in Skipped. An Info that leaves Fences or Writes undeclared
// (backend.Info.Check) fails every property with the reason, unrun.
func Evaluate(ctx context.Context, f Factory, opts Options) []*Result {
	opts.defaults()
	if err := opts.Info.Check(); err != nil {
		var out []*Result
		for _, name := range propertyNames {
			if !slices.Contains(opts.Skip, name) {
				out = append(out, &Result{Property: name, Failures: []string{err.Error()}})
			}
		}
		return out
	}
	var names []string
	for _, name := range propertyNames {
		if !slices.Contains(opts.Skip, name) {
			names = append(names, name)
		}
	}
	out := make([]*Result, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		if why := applies(name, opts.Info); why != "" {
			out[i] = &Result{Property: name, Skipped: why}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = runProperty(ctx, f, opts, name, outDir(opts.Out, opts.Info.Name+"/"+name))
		}()
	}
	wg.Wait()
	return out
}

// outDir is where a property's files go: dir/<test or backend>/ (the last
// element of name is the property, which names the files).
func outDir(dir, name string) string {
	if dir == "" {
		return ""
	}
	parent := name
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		parent = name[:i]
	}
	return dir + string(os.PathSeparator) + sanitize(parent)
}

// sanitize makes a test name a file name.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}
