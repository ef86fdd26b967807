package campaign

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/leasecheck/leasecheck/faults"
)

// Config describes a campaign: which seeds, against what, how to judge and
// what to keep. The zero value of every optional field means its default.
type Config struct {
	// Target runs the scenarios (Reference(), Mutant(m), a real backend).
	Target Target
	// Scenario generates a seed's scenario (Simulated.Generator).
	Scenario func(seed uint64) *Scenario
	// Kinds are the fault kinds the scenarios draw from: the summary lists
	// each, at zero when none was injected.
	Kinds []faults.Kind
	// First and Seeds are the seed range; Shard picks a part of it.
	First uint64
	Seeds int
	Shard Shard
	// Workers run seeds at once (0: GOMAXPROCS). The summary does not depend
	// on it: outcomes are consumed in seed order.
	Workers int
	// Sequential runs one seed at a time and starts the next only after the
	// previous one was counted, saved and told (OnOutcome, OnFailure): for a
	// real backend, whose runs must not overlap each other or a failure's
	// shrinking. It overrides Workers.
	Sequential bool
	// Judge tunes the judging of each seed.
	Judge JudgeOptions
	// FailFast stops at the first failing seed (in seed order: the summary
	// covers the seeds up to it, whatever the workers).
	FailFast bool
	// Save keeps failing seeds on disk, shrunk (SaveOptions).
	Save SaveOptions
	// OnOutcome, when set, sees every seed's outcome in seed order, before it
	// is counted (progress, saving every history). An error stops the
	// campaign.
	OnOutcome func(seed uint64, o *Outcome) error
	// OnFailure, when set, sees every failing seed in seed order, after it
	// was saved.
	OnFailure func(f *Failure)
}

// Failure is one failing seed.
type Failure struct {
	Seed uint64
	// Outcome is the seed's run as generated.
	Outcome *Outcome
	// Saved is what was saved (shrunk), nil when nothing was (no directory,
	// or beyond SaveOptions.Max); SaveErr says why saving failed.
	Saved   *Saved
	SaveErr error
}

// window bounds the seeds in flight per worker: outcomes wait at most this
// long for an earlier seed to finish, so memory stays constant.
const window = 4

// Run runs the campaign and returns its summary. Seeds are judged on
// cfg.Workers goroutines and consumed in seed order, so the summary, the
// failures saved and the point where FailFast stops are the same for any
// number of workers. Memory is constant in the number of seeds: an
// outcome is dropped once counted (and saved, when it failed). An error (a
// seed that cannot run, a callback's error, ctx done) stops it, with the
// summary of the seeds consumed so far.
func Run(ctx context.Context, cfg Config) (*Summary, error) {
	if cfg.Target == nil || cfg.Scenario == nil {
		return nil, errors.New("campaign: no target or no scenario generator")
	}
	if err := cfg.Shard.Validate(); err != nil {
		return nil, err
	}
	if cfg.Seeds < 0 {
		return nil, fmt.Errorf("campaign: %d seeds", cfg.Seeds)
	}
	first, n := cfg.Shard.Of(cfg.First, cfg.Seeds)
	_, simulated := cfg.Target.(*Simulated)
	sum := NewSummary(cfg.Target.Implementation(), first, cfg.Kinds, JudgedBy(cfg.Target), simulated)
	if cfg.Shard != (Shard{}) {
		sum.Sweep = &SweepPart{FirstSeed: cfg.First, Seeds: cfg.Seeds, Shard: cfg.Shard.I, Shards: cfg.Shard.N}
	}
	if n == 0 {
		return sum, nil
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, n)
	ahead := window * workers // seeds in flight or waiting to be consumed
	if cfg.Sequential {
		workers, ahead = 1, 1
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		i   int
		o   *Outcome
		err error
	}
	tokens := make(chan struct{}, ahead)
	results := make(chan result, ahead)
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case tokens <- struct{}{}:
				case <-ctx.Done():
					return
				}
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				seed := first + uint64(i)
				o, err := Judge(ctx, cfg.Target, cfg.Scenario(seed), cfg.Judge)
				if err != nil {
					err = fmt.Errorf("seed %d: %w", seed, err)
				}
				select {
				case results <- result{i, o, err}:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(results) }()

	pending := map[int]result{}
	saved := 0
	// consume counts, saves and tells one seed's outcome, in seed order;
	// stop ends the campaign (an error, or FailFast's first failure).
	consume := func(r result) (stop bool, err error) {
		if r.err != nil {
			return true, r.err
		}
		seed := first + uint64(r.i)
		if cfg.OnOutcome != nil {
			if err := cfg.OnOutcome(seed, r.o); err != nil {
				return true, err
			}
		}
		sum.Add(seed, r.o)
		if !r.o.Violated() {
			return false, nil
		}
		f := &Failure{Seed: seed, Outcome: r.o}
		if cfg.Save.Dir != "" && (cfg.Save.max() < 0 || saved < cfg.Save.max()) {
			saved++
			f.Saved, f.SaveErr = SaveFailure(ctx, cfg.Target, r.o, FailureName(cfg.Target.Implementation(), seed), cfg.Save)
		}
		if cfg.OnFailure != nil {
			cfg.OnFailure(f)
		}
		return cfg.FailFast, nil
	}
	var runErr error
	for want := 0; want < n && runErr == nil; {
		r, ok := pending[want]
		if !ok {
			select {
			case r2, open := <-results:
				if !open {
					runErr = ctx.Err()
					if runErr == nil {
						runErr = errors.New("campaign: workers stopped early")
					}
					continue
				}
				pending[r2.i] = r2
			case <-ctx.Done():
				runErr = ctx.Err()
			}
			continue
		}
		delete(pending, want)
		want++
		if !cfg.Sequential {
			<-tokens
		}
		stop, err := consume(r)
		if cfg.Sequential && !stop {
			<-tokens // the next seed may start
		}
		if err != nil {
			runErr = err
		}
		if stop {
			break
		}
	}
	cancel()
	for range results { // let the workers go
	}
	return sum, runErr
}
