package campaign_test

import (
	"context"
	"fmt"
	"os"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/impl/mutants"
	"github.com/leasecheck/leasecheck/internal/scenario"
)

// A campaign against a planted bug: 100 seeds on any number of workers,
// stopping at the first failure; its summary says which seed broke which
// property.
func ExampleRun() {
	target := campaign.Mutant(mutants.ByName("renew-loop-dies"))
	kinds := []faults.Kind{faults.DropHeartbeats}
	sum, err := campaign.Run(context.Background(), campaign.Config{
		Target:   target,
		Scenario: target.Generator(kinds),
		Kinds:    kinds,
		First:    1,
		Seeds:    100,
		Judge:    campaign.JudgeOptions{Budget: -1}, // no time budget: the same verdicts on any machine
		FailFast: true,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sum.Seeds, "seeds,", sum.Failed, "failed:", sum.FailedSeeds, "exit status", sum.Status())
	fmt.Println("stop-on-renew-failure violated on", sum.Violations["stop-on-renew-failure"], "seed")
	// Output:
	// 12 seeds, 1 failed: [12] exit status 1
	// stop-on-renew-failure violated on 1 seed
}

// Shards of one sweep merge into the summary of the whole, byte for byte.
func ExampleMerge() {
	target := campaign.Reference()
	cfg := campaign.Config{Target: target, Scenario: target.Generator(faults.AllKinds), Kinds: faults.AllKinds,
		First: 1, Seeds: 90, Judge: campaign.JudgeOptions{Budget: -1}}
	var parts []*campaign.Summary
	for i := 1; i <= 3; i++ {
		cfg.Shard = campaign.Shard{I: i, N: 3}
		s, err := campaign.Run(context.Background(), cfg)
		if err != nil {
			fmt.Println(err)
			return
		}
		parts = append(parts, s)
	}
	whole, err := campaign.Merge(parts...)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(whole.Seeds, "seeds from", whole.FirstSeed, "exit status", whole.Status())
	// Output:
	// 90 seeds from 1 exit status 0
}

// A saved scenario as a regression test: replay it against the
// implementation it records and compare with the properties it expects to
// violate.
func ExampleReplay() {
	sc, err := scenario.Load("../../testdata/regressions/renew-loop-dies-seed-2.scenario.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	o, err := campaign.Replay(context.Background(), sc, campaign.JudgeOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(o.Scenario.Implementation, "violates", o.Failed(), "as expected:", campaign.CheckExpect(o) == nil)
	v := o.Violations()[0]
	campaign.WriteViolation(os.Stdout, v, o.TraceLines())
	// Output:
	// mutant:renew-loop-dies violates [stop-on-renew-failure] as expected: true
	// VIOLATION stop-on-renew-failure (key "k", lines 7, 8)
	//   h1's renew of fence 1 never answered (line 7), yet h1 wrote "h1:w2" under fence 1 afterwards (line 8) without acquiring again. The write was accepted: a failed renewal must stop all writing. This happened during drop-heartbeats(h1) [71,72].
}
