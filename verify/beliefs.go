package verify

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/leasecheck/leasecheck/impl/backend"
	"github.com/leasecheck/leasecheck/internal/procclient"
	"github.com/leasecheck/leasecheck/internal/realrun"
	"github.com/leasecheck/leasecheck/internal/tcpproxy"
	"github.com/leasecheck/leasecheck/leasetest"
	"github.com/leasecheck/leasecheck/model"
)

// BeliefVerdict is the judgement of a library that holds while it says so
// (backend.Holding and backend.Stopper) on the real server: its own loss
// signal against the server's record (leasetest's LossSignal: the promise
// loss-signal, with the beliefs it shows).
type BeliefVerdict struct {
	Property string `json:"property"`
	OK       bool   `json:"ok"`
	// Lines are the verdict's lines: failures first, then the beliefs and
	// notes.
	Lines []string `json:"lines"`
	// History is where its history was saved, when it was.
	History string `json:"history,omitempty"`
}

// judgeBeliefs runs LossSignal against tg when its clients are such a
// library; nil when they are not.
func judgeBeliefs(ctx context.Context, tg RunTarget, ttl, budget time.Duration, out string) *BeliefVerdict {
	probe, err := tg.Open(ctx, tg.Addr)
	if err != nil {
		return nil
	}
	_, holding := backend.As[backend.Holding](probe)
	_, stopper := backend.As[backend.Stopper](probe)
	defer probe.Close()
	if !holding || !stopper {
		return nil
	}
	_, procs := backend.As[*procclient.Client](probe)
	factory := func() (backend.Backend, func(), error) {
		if procs {
			return ownersOf(ctx, tg)
		}
		b, err := tg.Open(ctx, tg.Addr)
		if err != nil {
			return nil, nil, err
		}
		return b, func() {
			if c, ok := b.(backend.Cleaner); ok {
				c.Cleanup(context.WithoutCancel(ctx))
			}
			b.Close()
		}, nil
	}
	var skip []string
	for _, p := range leasetest.Properties() {
		if p != "LossSignal" {
			skip = append(skip, p)
		}
	}
	opts := leasetest.Options{Info: tg.Info, TTL: ttl, Key: "beliefs", CheckTimeout: budget, Skip: skip}
	if out != "" {
		opts.Out = out
	}
	rs := leasetest.Evaluate(ctx, factory, opts)
	if len(rs) != 1 {
		return nil
	}
	r := rs[0]
	v := &BeliefVerdict{Property: leasetest.LossSignalProperty, OK: !r.Failed()}
	v.Lines = append(v.Lines, r.Failures...)
	for _, viol := range r.Violations {
		v.Lines = append(v.Lines, viol.Property+": "+viol.Explanation)
	}
	v.Lines = append(v.Lines, r.Notes...)
	for _, s := range r.Saved {
		if strings.HasSuffix(s, ".jsonl") {
			v.History = s
		}
	}
	return v
}

// writeText prints the verdict after the rounds' summary.
func (v *BeliefVerdict) writeText(w io.Writer) {
	verdict := "holds"
	if !v.OK {
		verdict = "VIOLATED"
	}
	fmt.Fprintf(w, "\nbeliefs, from the library's own signal, judged against the server's record:\n%-26s %s\n", v.Property, verdict)
	for _, l := range v.Lines {
		fmt.Fprintf(w, "  %s\n", l)
	}
	if v.History != "" {
		fmt.Fprintf(w, "  history: %s\n", v.History)
	}
}

// ownersOf gives each owner of LossSignal a client process of its own
// (tg's clients are processes: leasetest.OpenClient), each behind its own
// proxy when tg has an address, so that a partition cuts one owner's
// connections while its process runs.
func ownersOf(ctx context.Context, tg RunTarget) (backend.Backend, func(), error) {
	var mu sync.Mutex
	var proxies []*tcpproxy.Proxy
	closeProxies := func() {
		mu.Lock()
		defer mu.Unlock()
		for _, px := range proxies {
			px.Close()
		}
		proxies = nil
	}
	b, err := procclient.NewOwners(ctx, func(ctx context.Context, owner string) (*procclient.Client, error) {
		addr := tg.Addr
		var px *tcpproxy.Proxy
		if addr != "" && !strings.Contains(addr, ",") {
			var err error
			if px, err = tcpproxy.New(addr); err != nil {
				return nil, err
			}
			mu.Lock()
			proxies = append(proxies, px)
			mu.Unlock()
			addr = px.Addr()
		}
		b, err := tg.Open(ctx, addr)
		if err != nil {
			return nil, err
		}
		c, ok := backend.As[*procclient.Client](b)
		if !ok {
			b.Close()
			return nil, fmt.Errorf("%s: a client opened as a process once is not one now", tg.Info.Name)
		}
		if px != nil {
			c.CutWith(px.Blackhole)
		}
		return c, nil
	})
	if err != nil {
		closeProxies()
		return nil, nil, err
	}
	return b, func() {
		if c, ok := b.(backend.Cleaner); ok {
			c.Cleanup(context.WithoutCancel(ctx))
		}
		b.Close()
		closeProxies()
	}, nil
}

// roundRates keeps the worst burst of background renewals any owner's
// library made in any round (renew-rate, judged under every fault the
// rounds struck as under none).
type roundRates struct {
	interval time.Duration
	mu       sync.Mutex
	worst    realrun.Burst
	seed     uint64
}

func (r *roundRates) add(seed uint64, h *model.History) {
	if h == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range realrun.RenewalBursts(h, 0) {
		if r.worst.Owner == "" || b.Most*int(r.worst.Window) > r.worst.Most*int(b.Window) {
			r.worst, r.seed = b, seed
		}
	}
}

// judge adds the verdict over the rounds to bv.
func (r *roundRates) judge(bv *BeliefVerdict) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.interval <= 0 || r.worst.Owner == "" {
		return
	}
	w := r.worst
	ttl := time.Duration(w.Window) * time.Microsecond
	allowed := int(ttl/r.interval) + 2
	line := fmt.Sprintf("%s over the rounds: at most %d background renewals of one owner within one TTL (%v: %s in round %d, from t=%.3fs), where the declared interval %v allows %d",
		leasetest.RenewRateProperty, w.Most, ttl, w.Owner, r.seed, float64(w.From)/1e6, r.interval, allowed)
	if w.Most > allowed {
		bv.OK = false
		bv.Lines = append([]string{line + ": a renewal loop that does not wait its interval"}, bv.Lines...)
		return
	}
	bv.Lines = append(bv.Lines, line)
}

// roundLosses keeps loss-signal's verdicts on the holds of every round
// (realrun's, judged on the server's record whatever the round's faults):
// the late ones with their round, and the counts.
type roundLosses struct {
	mu                    sync.Mutex
	rounds, judged, holds int
	worst                 time.Duration
	worstSeed             uint64
	kinds                 map[string]int // the faults of the rounds with a judged loss
	skipped               map[string]int // the holds not judged, by why
	late                  []string
}

func (l *roundLosses) add(seed uint64, res *realrun.Result) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(res.Losses) == 0 {
		return
	}
	l.rounds++
	judged := 0
	for _, v := range res.Losses {
		l.holds++
		if !v.Judged {
			if l.skipped == nil {
				l.skipped = map[string]int{}
			}
			l.skipped[v.Skip]++
			continue
		}
		judged++
		if v.Lateness > l.worst {
			l.worst, l.worstSeed = v.Lateness, seed
		}
		if v.Late {
			l.late = append(l.late, fmt.Sprintf("%s: round %d: %s", leasetest.LossSignalProperty, seed, v.Why))
		}
	}
	l.judged += judged
	if judged > 0 {
		if l.kinds == nil {
			l.kinds = map[string]int{}
		}
		for k, n := range res.Faults {
			if n > 0 {
				l.kinds[string(k)]++
			}
		}
	}
}

// judge adds the verdict over the rounds to bv (a new one when the
// scripted judgement made none); bv unchanged when no round held a lock
// of such a library.
func (l *roundLosses) judge(bv *BeliefVerdict) *BeliefVerdict {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.holds == 0 {
		return bv
	}
	if bv == nil {
		bv = &BeliefVerdict{Property: leasetest.LossSignalProperty, OK: true}
	}
	var kinds []string
	for k, n := range l.kinds {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	slices.Sort(kinds)
	line := fmt.Sprintf("%s over the rounds: %d holds in %d rounds, %d lost on the server and judged (%d late), the latest signal %v after its loss (round %d), not counting the time its client was stopped (the kernel's record for a process, its Stopper's for a client in verify's process); rounds with a judged loss, by fault struck: %s",
		leasetest.LossSignalProperty, l.holds, l.rounds, l.judged, len(l.late), l.worst.Round(time.Millisecond), l.worstSeed, strings.Join(kinds, ", "))
	if len(kinds) == 0 {
		line = strings.TrimSuffix(line, "; rounds with a judged loss, by fault struck: ")
	}
	if len(l.skipped) > 0 {
		line += "; holds not judged: " + realrun.Skipped(l.skipped)
	}
	if len(l.late) > 0 {
		bv.OK = false
		bv.Lines = append(append(slices.Clone(l.late), line), bv.Lines...)
		return bv
	}
	bv.Lines = append(bv.Lines, line)
	return bv
}
