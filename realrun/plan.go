package realrun

import (
	"math/rand/v2"
	"sort"
	"sync"
	"time"

	"github.com/leasecheck/leasecheck/faults"
)

// fault is one planned injection. Holder faults are armed at At and taken
// by the first holder that holds the lease when it is about to write: the
// faults that matter hit the holder, and every planned fault fires.
type fault struct {
	Kind     faults.Kind
	At       time.Duration // since the run started
	Duration time.Duration
	Amount   time.Duration // delay: per chunk; clock-offset: the offset
	Rate     float64       // clock-drift: how fast the holder's clock runs (1 = true)
	Restart  bool          // coordinator-crash: kill and restart instead of SIGSTOP
	taken    bool
}

type plan struct {
	mu     sync.Mutex
	holder []*fault // by At
	server []*fault
	offset map[int]time.Duration // clock-offset, by holder index, from the start
}

// newPlan draws one injection per kind, at a time in [15%, 55%] of the run,
// so that even the longest (a pause of 2.5 TTL) ends before the workload
// does. Durations are in TTLs, because what matters is how they compare
// to the lease: a pause past the TTL, a partition as long as it.
func newPlan(rng *rand.Rand, cfg Config) *plan {
	p := &plan{offset: map[int]time.Duration{}}
	ttl := cfg.TTL
	at := func() time.Duration {
		return cfg.Duration*15/100 + time.Duration(rng.Int64N(int64(cfg.Duration*40/100)+1))
	}
	for _, k := range cfg.Faults {
		f := &fault{Kind: k, At: at()}
		switch k {
		case faults.Pause:
			f.Duration = ttl*5/2 + time.Duration(rng.Int64N(int64(ttl/2)))
		case faults.Crash:
			f.Duration = ttl * 3 / 2
		case faults.DropHeartbeats:
			f.Duration = ttl
		case faults.ClockDrift:
			f.Duration, f.Rate = ttl*2, 0.4
		case faults.Delay:
			f.Duration, f.Amount = ttl, ttl/10
		case faults.Partition:
			f.Duration = ttl
		case faults.CoordinatorCrash:
			// A stop (SIGSTOP, SIGCONT) early and, where the server can, a
			// crash and restart soon after it.
			f.At = cfg.Duration*10/100 + time.Duration(rng.Int64N(int64(cfg.Duration*20/100)+1))
			f.Duration = ttl * 3 / 4
			r := &fault{Kind: k, At: f.At + f.Duration + ttl/2 + time.Duration(rng.Int64N(int64(ttl/2))), Duration: ttl / 2, Restart: true}
			p.server = append(p.server, f, r)
			continue
		case faults.ClockOffset:
			f.At, f.Amount = 0, ttl+time.Duration(rng.Int64N(int64(ttl)))
			if rng.IntN(2) == 0 {
				f.Amount = -f.Amount
			}
			p.offset[rng.IntN(cfg.Holders)] = f.Amount
			f.taken = true
		}
		p.holder = append(p.holder, f)
	}
	sort.SliceStable(p.holder, func(i, j int) bool { return p.holder[i].At < p.holder[j].At })
	return p
}

// claim returns a due holder fault nobody took yet, or nil. A pause waits
// for a holder that holds the lease and is about to write (between its
// check and its write: the GC pause); a crash for a holder that holds the
// lease (the crash that matters); the others are taken by whichever holder
// comes first. A crash used to wait for a write too, and a run whose pause
// took the only write before the end never crashed anyone.
func (p *plan) claim(now time.Duration, holding, writing bool) *fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, f := range p.holder {
		if f.Kind == faults.Pause && !writing || f.Kind == faults.Crash && !holding {
			continue
		}
		if !f.taken && f.At <= now {
			f.taken = true
			return f
		}
	}
	return nil
}
