package verify

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/leasecheck/leasecheck/checker"
	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/campaign"
	"github.com/leasecheck/leasecheck/internal/realrun"
	"github.com/leasecheck/leasecheck/model"
)

// The defaults of a round, verify's flags' and RoundOptions' zero values.
const (
	defaultDuration = 10 * time.Second
	defaultTTL      = 2 * time.Second
	defaultBudget   = 60 * time.Second
)

// RoundOptions configure RunRound; each is the verify flag of the same
// name, and the zero value means its default.
type RoundOptions struct {
	// Seed picks the round's generated workload and fault times (--first;
	// 0: 1).
	Seed uint64
	// Duration is the workload's time (--duration; 0: 10s): faulted
	// holders end up to 3 TTLs later.
	Duration time.Duration
	// TTL of the leases (--ttl; 0: 2s), raised to the backend's minimum.
	TTL time.Duration
	// Faults are the kinds injected (--faults): nil means every kind that
	// applies to the backend, verify's default; an empty, non-nil slice
	// means none. A kind that does not apply is an error.
	Faults []faults.Kind
	// Budget bounds the linearizability search of the history (--timeout;
	// 0: 60s). Past it the verdict is undecided.
	Budget time.Duration
	// Log, when set, receives a line per injected fault.
	Log func(format string, args ...any)
}

// Round is one round run against a backend and judged, as verify judges
// its rounds.
type Round struct {
	// History is everything the round's clients sent and got, with a
	// record of every fault injected: a v1 history, as `leasecheck check`
	// reads it (model.WriteHistory writes it).
	History *model.History
	// Check is the verdict on the history: each property's verdict
	// (Check.Properties, Check.Verdict(name)) and the violations with the
	// history lines they involve.
	Check *checker.Result
}

// RunRound runs one round of verify against o — the holders and reader of
// seed opts.Seed's workload, with its faults struck for real — and returns
// the recorded history with each property's verdict: verify from a test of
// your own, without the command around it. o is what a Backend's Open
// returns, e.g. Connect(info, addr, open) for a server you started; what
// o started is yours to close. Its clients run in the caller's process
// (there is no backend by name for a child to open): a client process is
// o's own to give (leasetest.OpenClient in its Target.Open).
//
// A round that could not finish (the backend stopped answering) returns
// an error, with the partial history in the Round when one was recorded
// (Check is then nil).
func RunRound(ctx context.Context, o *Opened, opts RoundOptions) (*Round, error) {
	tg := o.Target
	if err := tg.Info.Check(); err != nil {
		return nil, fmt.Errorf("backend %s: %w", tg.Info.Name, err)
	}
	if tg.Open == nil {
		return nil, fmt.Errorf("backend %s: the target has no client (Target.Open)", tg.Info.Name)
	}
	if _, err := checkReachable(ctx, tg); err != nil {
		return nil, err
	}
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	if opts.Duration <= 0 {
		opts.Duration = defaultDuration
	}
	if opts.TTL <= 0 {
		opts.TTL = defaultTTL
	}
	if opts.Budget <= 0 {
		opts.Budget = defaultBudget
	}
	kinds := opts.Faults
	if kinds == nil {
		kinds = append([]faults.Kind(nil), faults.AllKinds...)
		if tg.Cluster != nil {
			kinds = append(kinds, faults.ClusterKinds...)
		}
		kinds = realrun.ApplicableKinds(tg, kinds)
	}
	for _, k := range kinds {
		if why := realrun.NotApplicable(tg, k); why != "" {
			return nil, fmt.Errorf("fault %q is not applicable to %s: %s", k, tg.Info.Name, why)
		}
	}
	impl := "backend:" + tg.Info.Name
	sc := realrun.Workload(tg, realrun.Config{Seed: opts.Seed, Duration: opts.Duration, TTL: opts.TTL, Faults: kinds, Key: fmt.Sprintf("k%d", opts.Seed)})
	sc.Implementation = impl
	t := &target{tg: tg, impl: impl, keys: &keys{used: map[string]int{}},
		opt: realrun.Options{TTL: opts.TTL, Retarget: true, Log: opts.Log}}
	out, err := campaign.Judge(ctx, t, sc, campaign.JudgeOptions{Budget: opts.Budget})
	if err != nil {
		var re *roundError
		if errors.As(err, &re) && re.Result != nil {
			return &Round{History: re.Result.History}, err
		}
		return nil, err
	}
	return &Round{History: out.History, Check: out.Check}, nil
}
