package realrun

import (
	"strconv"

	"github.com/leasecheck/leasecheck/faults"
	"github.com/leasecheck/leasecheck/internal/impl/holder"
	"github.com/leasecheck/leasecheck/internal/scenario"
)

// WorkloadRhoPPM is the clock-drift bound the generated workload declares:
// 0.1%, ten times what a quartz oscillator is specified for (±100 ppm), so
// an NTP-less but healthy client clock is inside it.
const WorkloadRhoPPM = 1000

// Workload is the scenario Run runs for cfg (with cfg's defaults applied):
// cfg.Holders holders, started an eighth of a TTL apart, each with a
// program of short work items and writes (half of them with one item that
// outlasts the TTL: renewals go on while it works), sized so the holders
// take the lease in turn for about cfg.Duration; one reader; one fault per
// kind of cfg.Faults, each due in a slot of its own in [10%, 60%] of the run
// (Run retargets holder faults at whoever holds the lease then; a cluster
// fault strikes the leader or a follower, whoever that is then; on a
// cluster a partition cuts the holder from every member, from the leader
// only or from one follower only). Durations are in TTLs, because what
// matters is how they compare to the lease: a pause past the TTL, a
// partition as long as it. Times are ms, as in every scenario; every choice
// comes from cfg.Seed.
func Workload(t Target, cfg Config) *scenario.Scenario {
	cfg.defaults()
	c := scenario.NewSeeded(cfg.Seed, scenario.StreamGenerate)
	T := max(cfg.TTL.Milliseconds(), 1)
	D := max(cfg.Duration.Milliseconds(), T)
	sc := &scenario.Scenario{Version: scenario.Version, Seed: cfg.Seed, Semantics: "seed", Key: cfg.Key,
		TTL: T, RhoPPM: WorkloadRhoPPM, Horizon: D + 3*T,
		Implementation: "backend:" + t.Info.Name, FaultKinds: cfg.Faults}
	budget := D / int64(cfg.Holders) // each holder's share of the lease
	for i := 0; i < cfg.Holders; i++ {
		p := scenario.Process{Name: "h" + strconv.Itoa(i+1), Start: int64(i) * T / 8}
		long := int64(-1) // half the holders have an item that outlasts the TTL
		if c.Int64(0, 1, "long?") == 1 {
			long = c.Int64(0, 3, "long-at")
		}
		// The long item counts for half its length, so a holder that has
		// one still writes for most of its share.
		var sum int64
		for j := int64(0); sum < budget || j <= long; j++ {
			it := holder.Item{Work: c.Int64(T/20, T/8, "work"), Writes: int(c.Int64(1, 3, "writes"))}
			n := it.Work
			if j == long {
				it = holder.Item{Work: c.Int64(T, T*3/2, "long-work"), Writes: 1}
				n = it.Work / 2
			}
			p.Work = append(p.Work, it)
			sum += n
		}
		sc.Holders = append(sc.Holders, p)
	}
	if cfg.Readers > 0 {
		sc.ReadEvery = max(T/12, 1)
	}
	names := sc.Names()
	target := func() string { return names[c.Int64(0, int64(len(names)-1), "target")] }
	// The faults fall due spread over [10%, 60%] of the run, one slot each
	// in a drawn order, so that they do not queue up for the same holder.
	order := make([]int, len(cfg.Faults))
	for i := range order {
		order[i] = i
	}
	for i := len(order) - 1; i > 0; i-- {
		j := c.Int64(0, int64(i), "order")
		order[i], order[j] = order[j], order[i]
	}
	slot := D * 50 / 100 / int64(max(len(order), 1))
	at := func(i int) int64 { return D*10/100 + int64(order[i])*slot + c.Int64(0, slot, "at") }
	for i, k := range cfg.Faults {
		f := faults.Fault{Kind: k, Target: target(), At: at(i)}
		switch k {
		case faults.Pause:
			// Past the TTL, so the lease moves on while the holder is stopped
			// between its check and its write (the article's GC pause).
			f.Duration = T*5/2 + c.Int64(0, T/2, "pause")
		case faults.Overrun:
			f.Duration = T * 3 / 2
		case faults.ClockOffset:
			f.At, f.Amount = 0, c.Int64(T, 2*T, "offset")
			if c.Int64(0, 1, "sign") == 0 {
				f.Amount = -f.Amount
			}
		case faults.ClockDrift:
			// Within the declared bound: the holder's deadline absorbs it.
			f.Amount = WorkloadRhoPPM
			if c.Int64(0, 1, "sign") == 0 {
				f.Amount = -f.Amount
			}
		case faults.ClockStep:
			// Back: the direction that makes code trusting the wall clock
			// believe too long (a correct holder never reads it).
			f.Amount = -(2*T + c.Int64(0, T, "step"))
		case faults.Freeze:
			// Stopped with its monotonic clock (a suspended machine), past the
			// TTL: on resume it believes it has time left.
			f.Duration = 2*T + c.Int64(0, T/2, "freeze")
		case faults.DropHeartbeats:
			f.Duration = T
		case faults.RenewDeath:
		case faults.Delay:
			f.Duration, f.Amount = T, max(T/10, 1)
		case faults.Partition:
			f.Duration, f.Peer = T, faults.Coordinator
			if t.Cluster != nil {
				// On a cluster the holder may be cut from one member only —
				// the leader or a follower, whoever that is when it strikes —
				// keeping the others, so its client's own endpoint selection
				// must find a way round (partitionMember). Drawn only here,
				// so a single server's workload keeps its bytes.
				switch c.Int64(0, 2, "partition-peer") {
				case 1:
					f.Peer = faults.Leader
				case 2:
					f.Peer = faults.Follower
				}
			}
		case faults.Crash, faults.OwnerReuse:
			f.Duration = T * 3 / 2
		case faults.CoordinatorCrash:
			f.Target = faults.Coordinator
			f.Duration = max(T/2, 1)
		case faults.DoubleRelease:
			f.Amount = T / 4
		case faults.Blackhole, faults.RequestLoss, faults.ReplyLoss:
			f.Duration = T // as long as a partition
		case faults.RequestDelay, faults.ReplyDelay:
			// Each leg its own latency, drawn apart, so the two differ.
			f.Duration, f.Amount = T, c.Int64(max(T/20, 1), max(T/5, 1), "leg-delay")
		case faults.Reorder:
			f.Duration, f.Amount = T, max(T/5, 1)
		case faults.Duplicate:
			f.Duration, f.Amount = T, c.Int64(0, T/4, "copy-late")
		case faults.MemberIsolate, faults.MemberBridge, faults.PeerDelay, faults.MemberPause, faults.MemberCrash:
			// Between the servers, at the leader or a follower (found when it
			// strikes), for about a TTL or two: long enough for an election
			// (1 s on etcd) and for a lease to run out meanwhile.
			f.Target = faults.Follower
			if c.Int64(0, 1, "member") == 0 {
				f.Target = faults.Leader
			}
			switch k {
			case faults.MemberIsolate:
				f.Duration = T*3/2 + c.Int64(0, T, "isolate")
			case faults.MemberBridge:
				f.Duration = T + c.Int64(0, T, "bridge")
			case faults.PeerDelay:
				// Small: the proxy delays each chunk in turn, so a delay
				// near the heartbeat interval (100 ms) throttles the link.
				f.Duration, f.Amount = T, max(T/40, 1)+c.Int64(0, T/40, "peer-delay")
			case faults.MemberPause:
				f.Duration = T + c.Int64(0, T, "member-pause")
			case faults.MemberCrash:
				f.Duration = T/2 + c.Int64(0, T/2, "member-crash")
			}
		}
		sc.Faults = append(sc.Faults, f)
		if k == faults.ClockStep && t.Clock != nil {
			// The coordinator's clock too, forward: a lease clock that trusts
			// the wall expires the live lease early (Kleppmann's Redlock case).
			sc.Faults = append(sc.Faults, faults.Fault{Kind: k, Target: faults.Coordinator, At: at(i), Amount: 2 * T})
		}
	}
	sc.Faults = sc.Faults.Sorted()
	return sc
}
