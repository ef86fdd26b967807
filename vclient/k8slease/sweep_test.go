package k8slease

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/leasecheck/leasecheck/campaign"
	"github.com/leasecheck/leasecheck/scenario"
)

var (
	seedsFlag    = flag.Int("seeds", 0, "seeds per sweep (0: each test's short default; 10000 for the issue's claims)")
	scenarioFlag = flag.String("scenario", "", "TestReplay: the saved scenario file to replay")
	saveFlag     = flag.String("save", "", "where sweeps save their failures (default: the test's temporary directory)")
)

// replayCommand is the command that replays a saved scenario file.
func replayCommand(file string) string {
	return "go test ./vclient/k8slease -run 'TestReplay$' -count=1 -scenario " + file
}

func seeds(short int) int {
	if *seedsFlag > 0 {
		return *seedsFlag
	}
	return short
}

func saveDir(t *testing.T) string {
	if *saveFlag != "" {
		return *saveFlag
	}
	return t.TempDir()
}

// sweep runs a campaign of n seeds against impl under profile p.
type sweepResult struct {
	sum      *campaign.Summary
	failures []*campaign.Failure
}

func sweep(t *testing.T, impl string, p Profile, timings []Timing, n int, cfg func(*campaign.Config)) sweepResult {
	t.Helper()
	tg, err := Target(t, impl)
	if err != nil {
		t.Fatal(err)
	}
	var out sweepResult
	c := campaign.Config{Target: tg, Scenario: Generator(impl, p, timings), Kinds: p.Kinds(), Seeds: n, First: 1, Workers: 2,
		Save: campaign.SaveOptions{Replay: replayCommand, Shrink: campaign.ShrinkOptions{Budget: 300}},
		OnFailure: func(f *campaign.Failure) {
			if f.Saved != nil {
				if err := AppendStory(f.Saved); err != nil {
					t.Errorf("story: %v", err)
				}
			}
			out.failures = append(out.failures, f)
		}}
	if cfg != nil {
		cfg(&c)
	}
	out.sum, err = campaign.Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// clean asserts that a sweep found nothing: no violation, nothing undecided.
func (r sweepResult) clean(t *testing.T, what string) {
	t.Helper()
	var b strings.Builder
	r.sum.WriteText(&b, 0)
	t.Logf("%s:\n%s", what, b.String())
	for i, f := range r.failures {
		if i == 3 {
			break
		}
		var w strings.Builder
		campaign.WriteOutcome(&w, f.Outcome)
		t.Errorf("%s: seed %d: %s\n%s", what, f.Seed, strings.Join(f.Outcome.Failed(), ", "), w.String())
	}
	if r.sum.Undecided > 0 {
		t.Errorf("%s: %d seeds undecided", what, r.sum.Undecided)
	}
}

func safeTimings() []Timing {
	var out []Timing
	for _, tm := range Timings {
		if tm.Safe() {
			out = append(out, tm)
		}
	}
	return out
}

// TestNoFaultsClean: client-go's elector with no fault keeps one leader
// at a time, on every timing (the issue: zero violations over 10^4 seeds,
// go test ./vclient/k8slease -run TestNoFaultsClean -seeds 10000).
func TestNoFaultsClean(t *testing.T) {
	sweep(t, Unfenced, NoFaults, nil, seeds(100), nil).clean(t, "no faults")
}

// TestLatencyClean: API latency within RenewDeadline, on every timing
// whose RetryPeriod + RenewDeadline fits in LeaseDuration, causes no
// violation (-seeds 10000 for the claim).
func TestLatencyClean(t *testing.T) {
	sweep(t, Unfenced, Latency, safeTimings(), seeds(100), nil).clean(t, "latency within RenewDeadline")
}

// TestLatencyUnsafeTiming: the same latency on a timing client-go accepts
// but whose RetryPeriod + RenewDeadline exceeds LeaseDuration (2 s /
// 1.5 s / 1 s) lets the leader write after its lease ran out: the sweep
// that is clean on safe timings is not blind.
func TestLatencyUnsafeTiming(t *testing.T) {
	edge := []Timing{Timings[5]}
	if edge[0].Safe() {
		t.Fatalf("%+v is safe", edge[0])
	}
	r := sweep(t, Unfenced, Latency, edge, seeds(200), func(c *campaign.Config) { c.FailFast = true })
	if len(r.failures) == 0 {
		t.Fatalf("no violation in %d seeds of latency within RenewDeadline at %+v", r.sum.Seeds, edge[0])
	}
	t.Logf("seed %d: %v", r.failures[0].Seed, r.failures[0].Outcome.Failed())
}

// TestFencedClean: the fenced variant under every fault — pauses, latency
// beyond RenewDeadline, partitions, the API server down, crashes and
// restarts — violates nothing (-seeds 10000 for the claim).
func TestFencedClean(t *testing.T) {
	sweep(t, Fenced, All, safeTimings(), seeds(100), nil).clean(t, "fenced, every fault")
}

// TestReplay replays a saved scenario file (-scenario FILE): the command
// every saved failure's story and page print.
func TestReplay(t *testing.T) {
	if *scenarioFlag == "" {
		t.Skip("no -scenario FILE to replay")
	}
	o, err := Replay(t, *scenarioFlag)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	campaign.WriteOutcome(&b, o)
	t.Log(b.String())
	if err := campaign.CheckExpect(o); err != nil {
		t.Fatalf("%s: %v", *scenarioFlag, err)
	}
}

// Replay runs a saved scenario against the implementation it records and
// judges it.
func Replay(t *testing.T, file string) (*campaign.Outcome, error) {
	sc, err := scenario.Load(file)
	if err != nil {
		return nil, err
	}
	tg, err := Target(t, sc.Implementation)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return campaign.Judge(context.Background(), tg, sc, campaign.JudgeOptions{Budget: -1})
}
